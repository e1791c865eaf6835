"""The main screen: threads on the left, the timeline on top, Budget / Blocks / Summaries / Config /
Since N-1 below (`screens/layout.py`).

It owns the shown view and the selection: `view` (the replayed thread) and `request_index`, a
reactive whose watcher moves the timeline's cursor and fills the panes. Its controllers
(`inspector/controllers/`) run the work in workers: the replay controller (loads, baseline and
what-if replays), the live tail, the pane updater (throttled pane refreshes), the loss tracker and
the file writer. The workers hand their results over as messages (`inspector/screens/messages.py`:
`ViewReady`, `LossesReady`, `ProbeDone`, `ReplayFailed`, ...), handled here on the UI thread, where
the screen is the one writer of its state; widgets post theirs (`ThreadList.Chosen`,
`TimelineChart.CursorMoved`, `ConfigForm.Edited`, ...).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Input, TabbedContent

from inspector.commands import InspectorCommands
from inspector.config import Config, ConfigError, only_reader
from inspector.controllers.after_paint import AfterPaint
from inspector.controllers.files import FileWriter, export_payload
from inspector.controllers.live import LiveTail
from inspector.controllers.loss import LossTracker
from inspector.controllers.navigation import find_request, is_compaction, is_failure
from inspector.controllers.panes import PaneUpdater
from inspector.controllers.replay import ReplayController, switch_profile
from inspector.controllers.source import SourceHandle
from inspector.gcpolicy import LongLivedObjects
from inspector.model import ThreadInfo
from inspector.pipeline.audit import RequestAudit
from inspector.screens.keys import MAIN_BINDINGS
from inspector.screens.layout import main_layout
from inspector.screens.messages import (
    ConfigSaved,
    LiveProblem,
    LlmProgress,
    LoadFailed,
    LossesReady,
    Notice,
    PricesReady,
    ProbeDone,
    ReplayFailed,
    ReproductionReady,
    ThreadChanged,
    ThreadLoaded,
    ThreadsListed,
    ViewReady,
)
from inspector.screens.status import DiffPanel, StatusLine
from inspector.screens.view import (
    Simulator,
    ViewState,
    recorded_points,
    timeline_scale,
    with_prices,
    with_pricing_error,
)
from widgets.blocks import BlocksView
from widgets.config_form import ConfigForm
from widgets.footer import KeyFooter
from widgets.safe import safe_line
from widgets.summaries import SummariesView
from widgets.threads import ThreadList
from widgets.timeline import TimelineChart, TimelineScale


class MainScreen(Screen[None]):
    """The thread list, the timeline and the panes of the selected request."""

    BINDINGS = MAIN_BINDINGS
    COMMANDS = {InspectorCommands}

    request_index: var[int] = var(0, init=False)
    """The selected request (0-based); its watcher moves the chart's cursor and fills the panes."""

    def __init__(
        self,
        sources: SourceHandle,
        *,
        thread_id: str | None,
        config: Config | None,
        profile: str | None,
        overrides: Mapping[str, Any],
        config_file: Path | None,
        simulator: Simulator,
        live: bool,
        poll_interval: float,
        pane_throttle: float,
        export_dir: Path,
        screenshot_dir: Path,
        prebuild_config_form: bool = True,
    ) -> None:
        """`prebuild_config_form`: the Config tab's form is built once the first replay is painted (False:
        when the tab is first opened, or an edit needs it; what a test that never opens it saves)."""
        super().__init__()
        self.initial_thread_id = thread_id
        self.prebuild_config_form = prebuild_config_form
        self.replayer = ReplayController(self, sources=sources, fixed_config=config, profile=profile,
                                         overrides=overrides, config_file=config_file, simulator=simulator)
        self.live_tail = LiveTail(self, self.replayer, enabled=live, interval=poll_interval)
        self.files = FileWriter(self, config_file=config_file, export_dir=export_dir, screenshot_dir=screenshot_dir)
        self.panes = PaneUpdater(self, throttle=pane_throttle)
        self.loss = LossTracker(self)
        self.long_lived = LongLivedObjects()
        self.after_paint = AfterPaint(self)  # an edit's prices and losses wait for its replay's paint
        self.thread_infos: list[ThreadInfo] = []
        self.view: ViewState | None = None
        self.follow_latest = True
        self.loading_error: str | None = None
        self.llm_progress_text = ""
        # when (time.monotonic) a new thread's recorded counts, then its first replay, were put on screen
        # (bench/bench_tui.py times their paint from these)
        self.recorded_shown_at: float | None = None
        self.first_view_at: float | None = None
        # when a view was last put on screen, and an edit's prices, which follow its replay (bench_tui)
        self.view_shown_at = self.prices_shown_at = 0.0
        self._tabs: TabbedContent | None = None  # found at mount (`_closed_down`)

    @property
    def live(self) -> bool:
        return self.live_tail.enabled

    @live.setter
    def live(self, value: bool) -> None:
        self.live_tail.enabled = value

    @property
    def current_request(self) -> RequestAudit | None:
        if self.view is None or not self.view.requests:
            return None
        return self.view.audit(min(self.request_index, len(self.view.requests) - 1))

    def compose(self) -> ComposeResult:
        yield from main_layout()
        yield KeyFooter()

    def on_mount(self) -> None:
        self._tabs = self.query_one(TabbedContent)
        self.query_one("#timeline", TimelineChart).focus()
        self.replayer.open(self.initial_thread_id)
        self.live_tail.start()

    def _compositor_refresh(self) -> None:
        """textual's paint of the screen (`Screen._compositor_refresh`, textual pinned in pyproject.toml),
        then what waits for it (`after_paint`: an edit's prices and losses)."""
        super()._compositor_refresh()
        self.after_paint.painted()

    def on_unmount(self) -> None:
        self.long_lived.release()

    def notify(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None,
               markup: bool = False) -> None:
        """Literal unless a caller opts in (a textual widget's `notify` parses markup by default)."""
        self.app.notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    # what the workers hand over (inspector/screens/messages.py), on the UI thread ---------------------

    def _closed_down(self) -> bool:
        """Whether the layout is gone (the app is closing): a worker's late message is dropped. Asked of the
        tabs found at mount: a query of the screen for them cost 3-9 ms, on every message of an edit."""
        tabs = self._tabs
        return tabs is None or not tabs.is_attached

    def on_threads_listed(self, message: ThreadsListed) -> None:
        if not self._closed_down():
            self.thread_infos = message.infos
            self.query_one(ThreadList).set_threads(message.infos, self.view.thread.id if self.view else None)

    def on_load_failed(self, message: LoadFailed) -> None:
        if not self._closed_down():
            self.loading_error = message.text
            self.query_one(StatusLine).show_error(message.text)
            self.notify(safe_line(message.text, 300), severity="error")

    def on_notice(self, message: Notice) -> None:
        self.notify(message.text, title=message.title, severity=message.severity, timeout=message.timeout)

    def on_thread_loaded(self, message: ThreadLoaded) -> None:
        """A new thread read, not replayed yet: its recorded counts on the chart and what is coming in
        the status line (the panes keep what they show until its first view arrives)."""
        if self._closed_down() or (self.view is not None and self.view.thread.id == message.thread.id):
            return
        points = recorded_points(message.thread)
        if points:
            self.query_one(TimelineChart).set_data(points, TimelineScale(window=message.window), cursor=len(points) - 1)
        self.query_one(StatusLine).show_replaying(message.thread, message.profile, recorded=bool(points))
        self.recorded_shown_at = time.monotonic()

    def on_reproduction_ready(self, message: ReproductionReady) -> None:
        view = self.view
        if not self._closed_down() and view is not None and view.reproduction is message.view.reproduction:
            self.query_one(StatusLine).show(view, live=self.live, problem=self.live_tail.problem)

    async def on_view_ready(self, message: ViewReady) -> None:
        if not self._closed_down():
            await self.show_view(message.view, keep_position=message.keep_position)

    async def on_replay_failed(self, message: ReplayFailed) -> None:
        """An edit could not be replayed: the form shows the applied values again, with the reason under
        each field the edit changed (where it stays until the next edit), and the status line is put back
        (an anthropic summarizer's progress had replaced it)."""
        if self._closed_down():
            return
        if self.view is None:
            self.notify(safe_line(f"replay failed: {message.text}", 300), severity="error")
            return
        form = self.query_one(ConfigForm)
        await form.load(self.view.config, self.view.baseline_config)
        await form.build()  # the reason goes under the fields (an edit before the form was built: set_config_value)
        keys = [k for k in message.config.changed_keys(self.view.config) if form.has_field(k)]
        for key in keys:
            form.show_error(key, f"not applied: {message.text}")
        if not keys:
            self.notify(safe_line(f"replay failed: {message.text}", 300), severity="error")
        self.query_one(StatusLine).show(self.view, live=self.live)

    def on_llm_progress(self, message: LlmProgress) -> None:
        if not self._closed_down():
            self.llm_progress_text = self.query_one(StatusLine).show_llm_progress(message.start, message.stats)

    def on_live_problem(self, message: LiveProblem) -> None:
        """The database under live mode was deleted or truncated (None: it is back)."""
        if not self._closed_down() and self.view is not None:
            self.query_one(StatusLine).show(self.view, live=self.live, problem=message.problem)

    def on_thread_changed(self, message: ThreadChanged) -> None:
        if not self._closed_down():
            self.live_tail.reload_current(message.thread_id)

    def on_config_saved(self, _message: ConfigSaved) -> None:
        if not self._closed_down():
            self.files.rebase()

    def on_losses_ready(self, message: LossesReady) -> None:
        """What the shown view's compactions lost: the Summaries pane lists it, the diff says how the
        edit changed it."""
        if self._closed_down() or self.view is None or not self.view.same_replays(message.view):
            return  # a newer view is on its way (its own losses follow)
        # the shown view (with its prices, where they came first) with the losses
        self.view = view = self.loss.show(self.view, message.losses, message.changes)
        if view.diff is not None:
            self.query_one(DiffPanel).show(view.diff, view, self.current_request)
        self.panes.stale_tabs.add("summaries")
        if self.query_one(TabbedContent).active == "summaries":
            self.panes.refresh_tab("summaries")
        self.call_after_refresh(self.loss.painted)

    def on_prices_ready(self, message: PricesReady) -> None:
        """The shown what-if's prices (it went on screen before them): the status line's bill, the diff's
        cost line and the Budget pane's cost rows say them in place of "pricing…"."""
        view = self.view
        if self._closed_down() or view is None or view.priced or not view.same_replays(message.view):
            return  # a newer view is on its way (its own prices follow)
        self.view = view = (with_prices(view, message.cost) if message.error is None
                            else with_pricing_error(view, message.error))
        self.query_one(DiffPanel).show(view.diff, view, self.current_request)
        self.panes.show_request()
        self.prices_shown_at = time.monotonic()

    def on_probe_done(self, message: ProbeDone) -> None:
        """Mark the request where the probed text disappears, and go there."""
        result = message.result
        if self._closed_down() or not self.loss.probe_finished(message.view, result, self.view):
            return
        self.query_one(TimelineChart).mark_probe(result.lost_at)
        quoted = f'"{safe_line(result.text, 60)}"'
        if result.lost_at is not None:
            self.notify(f"{quoted} stops being visible at request {result.lost_at + 1} (⊘ on the timeline)",
                        timeout=6)
            self.jump_to_request(result.lost_at)
        elif result.first_seen is None:
            self.notify(f"{quoted} is never visible to the model in this replay", severity="warning", timeout=6)
        else:
            self.notify(f"{quoted} stays visible from request {result.first_seen + 1} on", timeout=6)

    async def show_view(self, view: ViewState, *, keep_position: bool) -> None:
        """A new view on screen, at the kept position (or the last request), with every pane filled."""
        old = self.view
        self.view = view
        self.loading_error = None
        count = len(view.requests)
        same_thread = old is not None and old.thread.id == view.thread.id
        if keep_position and same_thread and count:
            index = count - 1 if self.follow_latest else min(self.request_index, count - 1)
        else:
            index = max(0, count - 1)
        # An empty thread (a recording just started) has no position to keep: follow what arrives.
        self.follow_latest = count == 0 or index == count - 1
        self.set_reactive(MainScreen.request_index, max(0, index))  # every pane is filled below
        if not same_thread:
            self.query_one(ThreadList).mark_current(view.thread.id)
        self.query_one(TimelineChart).set_data(view.points, timeline_scale(view, self.current_request),
                                               cursor=self.request_index)
        await self.query_one(ConfigForm).load(view.config, view.baseline_config)
        self.query_one(DiffPanel).show(view.diff, view, self.current_request)
        self.panes.show_request(all_tabs=True)
        if not self.loss.keeps_probe(same_thread=same_thread):
            self.query_one(TimelineChart).mark_probe(None)
        self.view_shown_at = time.monotonic()
        # its prices, then its losses, once it is painted: their workers would share the interpreter with
        # the paint, and with each other
        self.after_paint.queue(partial(self._view_painted, view))
        if not same_thread:  # once the new thread is on screen (see inspector/gcpolicy.py)
            self.first_view_at = time.monotonic()
            self.call_after_refresh(self.long_lived.settle, len(view.thread.messages))
            self.replayer.prepare_summaries(view.thread, view.config)
            if self.prebuild_config_form:
                self.run_worker(self._build_config_form(), group="config-form")
        self.replayer.reproduce_later(view)

    def _view_painted(self, view: ViewState) -> None:
        """`view` is painted: price it where it went up without its prices (its losses after them, in the same
        worker), else judge its compactions' losses now, unless a newer view replaced it."""
        current = self.view
        if self._closed_down() or current is None or not current.same_replays(view):
            return
        if current.priced:
            self.loss.view_changed(current)
        else:  # its losses in the pricing's worker, after the prices, and handed over with them
            self.replayer.price(current, self.request_index, then=self.loss.losses_ready)
            self.loss.view_changed(current, losses=False)

    async def _build_config_form(self) -> None:
        """The Config tab's form, once the first replay is painted (its rows are about half of the app's
        widgets: composed at the start, they competed with the first replay for the interpreter)."""
        await self.wait_for_refresh()
        await self.query_one(ConfigForm).build()

    # the selected request -----------------------------------------------------------------------------

    def watch_request_index(self, index: int) -> None:
        if self.view is None:
            return
        chart = self.query_one(TimelineChart)
        with chart.prevent(TimelineChart.CursorMoved):
            chart.cursor = index
        self.panes.show_request()
        if self.view.diff is not None:
            self.query_one(DiffPanel).show(self.view.diff, self.view, self.current_request)

    def jump_to_request(self, index: int) -> None:
        if self.view is None or not self.view.requests:
            return
        index = max(0, min(index, len(self.view.requests) - 1))
        self.follow_latest = index == len(self.view.requests) - 1
        self.request_index = index

    @on(TimelineChart.CursorMoved)
    def _cursor_moved(self, event: TimelineChart.CursorMoved) -> None:
        if event.index != self.request_index:
            self.jump_to_request(event.index)

    @on(TimelineChart.Resized)
    def _chart_resized(self, _event: TimelineChart.Resized) -> None:
        if self.view is not None:
            self.panes.update_timeline_label()  # the part of the thread shown follows the chart's width

    @on(TabbedContent.TabActivated)
    async def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "config":
            await self.query_one(ConfigForm).build()  # shown before the first replay was painted
        if event.pane.id:
            self.panes.refresh_tab(event.pane.id)

    def action_step(self, delta: int) -> None:
        self.jump_to_request(self.request_index + delta)

    def _jump_to_found(self, predicate: Any, what: str, *, forward: bool, begin: int | None = None) -> None:
        index = find_request(self.view, self.request_index if begin is None else begin, predicate, forward=forward)
        if index is None:
            self.notify(f"no {what}", severity="warning", timeout=2)
        else:
            self.jump_to_request(index)

    def action_next_compaction(self) -> None:
        self._jump_to_found(is_compaction, "later compaction", forward=True)

    def action_prev_compaction(self) -> None:
        self._jump_to_found(is_compaction, "earlier compaction", forward=False)

    def action_first_failure(self) -> None:
        self._jump_to_found(is_failure, "failed request", forward=True, begin=-1)

    def action_next_failure(self) -> None:
        self._jump_to_found(is_failure, "later failed request", forward=True)

    # loading, replaying, probing ----------------------------------------------------------------------

    def load_thread(self, thread_id: str) -> None:
        """Load a thread and replay it (worker)."""
        self.replayer.load(thread_id)

    def replay(self, config: Config) -> None:
        """Replay the current thread under `config` (worker; a newer call cancels this one)."""
        if self.view is not None:
            self.replayer.replay(self.view, config, self.request_index)

    def set_config_value(self, key: str, value: Any) -> None:
        if self.view is None:
            return
        config = self.view.config
        reader = only_reader(key)  # a key only one profile reads (a shifting strategy) switches to it
        if reader is not None and config.profile != reader:
            config = switch_profile(config, reader, self.view.thread)
        try:
            self.replay(config.updated({key: value}))
        except ConfigError as exc:
            self.notify(safe_line(str(exc), 200), severity="error")

    def set_profile(self, profile: str) -> None:
        if self.view is not None and profile != self.view.config.profile:
            self.replay(switch_profile(self.view.config, profile, self.view.thread))

    def probe_text(self, text: str) -> None:
        """Palette "Probe: TEXT": mark on the timeline where `text` stops being visible (worker)."""
        if self.view is not None and text.strip():
            self.loss.probe(self.view, text.strip())

    def poll_live(self) -> None:
        """Check (in a worker) whether the selected thread's rows changed; reload it if so."""
        self.live_tail.poll()

    @on(ConfigForm.Edited)
    def _config_edited(self, event: ConfigForm.Edited) -> None:
        self.set_config_value(event.key, event.value)

    @on(ConfigForm.ProfileChanged)
    def _profile_changed(self, event: ConfigForm.ProfileChanged) -> None:
        self.set_profile(event.profile)

    @on(SummariesView.FactChosen)
    def _fact_chosen(self, event: SummariesView.FactChosen) -> None:
        """Show the lost fact's block at the compaction's request, in the Blocks pane, the fact marked."""
        self.jump_to_request(event.request_index)
        self.query_one(TabbedContent).active = "blocks"
        self.panes.stale_tabs.add("blocks")
        self.panes.refresh_tab("blocks")
        blocks = self.query_one(BlocksView)
        if blocks.request is not None:
            index = next((i for i, b in enumerate(blocks.request.blocks) if b.message_id == event.fact.message_id),
                         None)
            if index is not None:
                blocks.select_block(index, event.fact.text)
        self.query_one("#blocks-table").focus()

    @on(ThreadList.Chosen)
    def _thread_chosen(self, event: ThreadList.Chosen) -> None:
        if self.view is None or event.thread_id != self.view.thread.id:
            self.load_thread(event.thread_id)
        self.query_one(TimelineChart).focus()

    def action_cancel_summaries(self) -> None:
        if self.replayer.cancel_summaries():
            self.notify("cancelling the anthropic summaries…", timeout=3)
        else:
            self.notify("no LLM summaries are being written", timeout=2)

    def action_toggle_compactions(self) -> None:
        """Replay the baseline and the what-if following the thread's recorded compactions, or letting
        the profile decide every one (both in the same mode)."""
        if self.view is not None:
            self.replayer.toggle_compactions(self.view, self.request_index)

    def action_sweep(self) -> None:
        """The sweep screen for the shown thread, from its baseline config (each value deciding its
        compactions, as `sweep` does; the screen switches to the recorded ones)."""
        if self.view is None:
            self.notify("open a thread first", severity="warning")
            return
        from inspector.screens.sweep import SweepScreen

        self.app.push_screen(SweepScreen(self.view.thread, self.view.baseline_config))

    def action_toggle_live(self) -> None:
        self.live = not self.live
        self.notify("live mode on" if self.live else "live mode off", timeout=2)
        if self.view is not None:
            self.query_one(StatusLine).show(self.view, live=self.live, problem=self.live_tail.problem)

    # tabs and focus -----------------------------------------------------------------------------------

    async def action_show_tab(self, tab: str) -> None:
        """Open a tab and put the focus where its keys work (tables for up/down, the first config field)."""
        self.query_one(TabbedContent).active = tab
        if tab == "blocks":
            self.query_one("#blocks-table").focus()
        elif tab == "summaries":
            self.query_one("#summaries-table").focus()
        elif tab == "config":
            await self.query_one(ConfigForm).build()
            fields = self.query("ConfigForm Input")
            if fields:
                fields.first().focus()
        else:
            self.query_one(TimelineChart).focus()

    def action_open_block(self, index: int) -> None:
        """Open block `index` of the selected request in the Blocks pane (the Budget's largest blocks)."""
        request = self.current_request
        if request is None or not 0 <= index < len(request.blocks):
            return
        self.query_one(TabbedContent).active = "blocks"
        self.panes.refresh_tab("blocks")
        self.query_one(BlocksView).select_block(index)
        self.query_one("#blocks-table").focus()

    def action_focus_timeline(self) -> None:
        self.query_one(TimelineChart).focus()

    def action_focus_filter(self) -> None:
        self.query_one("#left").display = True
        self.query_one("#thread-filter", Input).focus()

    def action_toggle_overview(self) -> None:
        """Whole-thread timeline (one column per bucket of requests) or one column per request."""
        self.query_one(TimelineChart).action_toggle_overview()
        self.panes.update_timeline_label()

    def action_toggle_threads(self) -> None:
        left = self.query_one("#left")
        left.display = not left.display

    # config reset / save, export, screenshot ----------------------------------------------------------

    async def action_reset_config(self) -> None:
        if self.view is None:
            return
        if self.view.is_what_if:
            self.replay(self.view.baseline_config)
        else:  # nothing applied, but the form may hold text that never was: show the baseline again
            await self.query_one(ConfigForm).load(self.view.config, self.view.baseline_config)
        self.notify("config reset to the baseline", timeout=2)

    def action_save_config(self) -> None:
        if self.view is not None:
            self.files.save_config(self.view)

    def export_payload(self) -> dict[str, Any] | None:
        return export_payload(self.view, self.current_request)

    def action_export_audit(self) -> None:
        payload = self.export_payload()
        if payload is None:
            self.notify("nothing to export", severity="warning")
        else:
            self.files.export(payload)

    def action_screenshot(self) -> None:
        self.files.screenshot()
