"""The inspector TUI: threads on the left, the timeline on top, Budget / Blocks / Summaries / Config below.

Loading, replaying and polling run in thread workers (`exclusive=True`, so a new edit cancels a stale
replay); handlers only move the cursor and hand finished `ViewState`s to the widgets.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Footer, Input, Static, TabbedContent, TabPane
from textual.worker import WorkerState, get_current_worker

from inspector.config import PROFILES, STRATEGIES, Config, ConfigError
from inspector.diff import SimulationDiff, block_changes
from inspector.gcpolicy import LongLivedObjects
from inspector.model import Thread, ThreadInfo
from inspector.pipeline.audit import RequestAudit
from inspector.screens.help import HelpScreen
from inspector.screens.source import ThreadSource
from inspector.screens.view import (
    Simulator,
    ViewState,
    build_view,
    default_simulator,
    timeline_points,
    timeline_scale,
)
from widgets.blocks import BlocksView
from widgets.budget import STATUS_STYLES, BudgetView
from widgets.config_form import ConfigForm
from widgets.safe import safe_line, safe_text
from widgets.summaries import SummariesView
from widgets.threads import ThreadList
from widgets.timeline import TimelineChart, compact_number

DIFF_BLOCKS_SHOWN = 12  # changed blocks of the selected request listed in the diff panel
PREPARE_CHUNK = 256  # messages the background summary scan handles between checks for cancellation
DIFF_MOVES_SHOWN = 20  # compaction moves listed in the diff panel (the rest are counted)


class InspectorCommands(Provider):
    """Command palette: jump to thread / request, switch profile or strategy, export the audit."""

    def _commands(self) -> list[tuple[str, Any, str]]:
        app = self.app
        assert isinstance(app, InspectorApp)
        commands: list[tuple[str, Any, str]] = []
        for info in app.thread_infos:
            label = f"Thread: {safe_line(info.title or info.id, 70)}"
            commands.append((label, partial(app.load_thread, info.id), f"{info.messages} messages, {info.requests} requests"))
        for profile in PROFILES:
            commands.append((f"Profile: {profile}", partial(app.set_profile, profile), "replay under this profile"))
        for strategy in STRATEGIES:
            commands.append(
                (f"Strategy: {strategy}", partial(app.set_config_value, "context.strategy", strategy),
                 "shifting strategy (switches to the shifting profile)")
            )
        commands.append(("Export selected audit as JSON", app.action_export_audit, "write a file in the current directory"))
        commands.append(("Jump to first failure", app.action_first_failure, "first failed request"))
        commands.append(("Jump to next compaction", app.action_next_compaction, "next request with a compaction"))
        commands.append(("Reset config to baseline", app.action_reset_config, "undo every edit"))
        commands.append(("Save config to TOML", app.action_save_config, "write the config file"))
        return commands

    async def discover(self) -> Hits:
        for label, callback, help_text in self._commands():
            yield DiscoveryHit(Text(label), callback, text=label, help=help_text)

    async def search(self, query: str) -> Hits:
        app = self.app
        assert isinstance(app, InspectorApp)
        jump = re.fullmatch(r"\s*(?:r|req|request|#)?\s*(\d+)\s*", query, flags=re.IGNORECASE)
        if jump and app.view is not None:
            number = int(jump.group(1))
            if 1 <= number <= len(app.view.requests):
                label = f"Request {number}"
                yield Hit(1.0, Text(label), partial(app.jump_to_request, number - 1), text=label,
                          help="jump to this request")
        matcher = self.matcher(query)
        for label, callback, help_text in self._commands():
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, Text(label), callback, text=label, help=help_text)


class InspectorApp(App[None]):
    """context-inspector's full-screen app."""

    CSS_PATH = "app.tcss"
    TITLE = "context-inspector"
    COMMANDS = App.COMMANDS | {InspectorCommands}

    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("f1,question_mark", "help", "Help"),
        Binding("left,comma", "step(-1)", "Prev req", show=False),
        Binding("right,full_stop", "step(1)", "Next req", show=False),
        Binding("n", "next_compaction", "Next compaction"),
        Binding("p", "prev_compaction", "Prev compaction"),
        Binding("f", "first_failure", "First failure"),
        Binding("F", "next_failure", "Next failure", show=False),
        Binding("1", "show_tab('budget')", "Budget", show=False),
        Binding("2", "show_tab('blocks')", "Blocks", show=False),
        Binding("3", "show_tab('summaries')", "Summaries", show=False),
        Binding("4", "show_tab('config')", "Config", show=False),
        Binding("t,escape", "focus_timeline", "Timeline", show=False),
        Binding("slash", "focus_filter", "Filter threads", show=False),
        Binding("b", "toggle_threads", "Thread list", show=False),
        Binding("z", "toggle_overview", "Overview", show=False),
        Binding("e", "export_audit", "Export JSON"),
        Binding("l", "toggle_live", "Live", show=False),
        Binding("ctrl+r", "reset_config", "Reset config"),
        Binding("ctrl+o", "save_config", "Save config"),
        Binding("ctrl+s", "screenshot", "Screenshot", show=False),
        Binding("x", "cancel_summaries", "Cancel LLM summaries", show=False),
    ]

    def __init__(
        self,
        db_url: str | None = None,
        thread_id: str | None = None,
        *,
        source: ThreadSource | None = None,
        config: Config | None = None,
        profile: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        simulator: Simulator | None = None,
        live: bool = True,
        poll_interval: float = 1.0,
        config_file: Path | None = None,
        export_dir: Path | None = None,
        screenshot_dir: Path | None = None,
        pane_throttle: float = 0.08,
    ) -> None:
        super().__init__()
        self.db_url = db_url
        self.initial_thread_id = thread_id
        self.source: ThreadSource | None = source
        self.fixed_config = config
        self.profile = profile
        self.overrides = dict(overrides or {})
        if simulator is None:
            simulator = default_simulator
        self.simulator: Simulator = simulator
        self.live = live
        self.poll_interval = poll_interval
        self.config_file = config_file
        self.export_dir = export_dir or Path.cwd()
        self.screenshot_dir = screenshot_dir or Path.cwd()
        self.thread_infos: list[ThreadInfo] = []
        self.view: ViewState | None = None
        self.request_index = 0
        self.follow_latest = True
        self.loading_error: str | None = None
        self._stale_tabs: set[str] = set()
        self._owns_source = False
        self.pane_throttle = pane_throttle
        self._panes_dirty = False
        self._panes_all_tabs = False
        self._panes_at = 0.0
        self.panes_updated_at = 0.0
        self._llm_summarizer = None
        self.llm_progress_text = ""
        self._pane_timer: Timer | None = None
        self.last_export: Path | None = None
        self.long_lived = LongLivedObjects()

    # layout -------------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            with Vertical(id="left"):
                yield ThreadList(id="threads")
            with Vertical(id="main"):
                yield Static(Text("Loading…", style="dim"), id="status", markup=False)
                yield Static("", id="timeline-label", markup=False)
                yield TimelineChart(id="timeline")
                with TabbedContent(id="tabs", initial="budget"):
                    with TabPane("Budget", id="budget"):
                        yield BudgetView(id="budget-view")
                    with TabPane("Blocks", id="blocks"):
                        yield BlocksView(id="blocks-view")
                    with TabPane("Summaries", id="summaries"):
                        yield SummariesView(id="summaries-view")
                    with TabPane("Config", id="config"), Horizontal(id="config-body"):
                        yield ConfigForm(Config(), id="config-form")
                        with Vertical(id="diff-panel"):
                            yield Static(Text("Diff against the baseline", style="bold"), markup=False)
                            yield Static(Text("No edits: this is the baseline replay.", style="dim"),
                                         id="diff", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#timeline", TimelineChart).focus()
        self.start()
        if self.live and self.poll_interval > 0:
            self.set_interval(self.poll_interval, self.poll_live)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Notifications carry thread ids, paths and error text: literal unless a caller opts in."""
        super().notify(safe_text(message), title=safe_text(title), severity=severity, timeout=timeout, markup=markup)

    def on_unmount(self) -> None:
        """Close the database the app opened itself (a source passed in belongs to the caller)."""
        self.long_lived.release()
        close = getattr(self.source, "close", None)
        if self._owns_source and callable(close):
            close()

    # loading ------------------------------------------------------------------------------------------

    def start(self) -> None:
        self._open_worker(self.initial_thread_id)

    def _open_source(self) -> ThreadSource:
        if self.source is None:
            from inspector.store import Store, resolve_db_url

            url = resolve_db_url(self.db_url)
            if url is None:
                from inspector.demo import ensure_demo_db
                from inspector.service import data_dir

                url = ensure_demo_db(data_dir() / "demo.sqlite")
            self.source = Store.open(url, read_only=True)
            self._owns_source = True
        return self.source

    @work(thread=True, exclusive=True, group="engine", exit_on_error=False)
    def _open_worker(self, thread_id: str | None) -> None:
        try:
            source = self._open_source()
            infos = source.list_threads()
        except Exception as exc:  # a bad URL or database: say so, keep running
            self.call_from_thread(self._fail, f"cannot open the database: {exc}")
            return
        self.call_from_thread(self._set_threads, infos)
        if not infos:
            self.call_from_thread(self._fail, "the database has no threads")
            return
        wanted = thread_id if thread_id and any(i.id == thread_id for i in infos) else infos[0].id
        if thread_id and wanted != thread_id:
            self.call_from_thread(self.notify, f"no thread {safe_line(thread_id, 60)!r}; showing the first",
                                  severity="warning")
        self._load(wanted, keep_position=False)

    def load_thread(self, thread_id: str) -> None:
        """Load a thread and replay it (worker)."""
        self._load_worker(thread_id)

    @work(thread=True, exclusive=True, group="engine", exit_on_error=False)
    def _load_worker(self, thread_id: str, keep_position: bool = False) -> None:
        self._load(thread_id, keep_position=keep_position)

    def _baseline_config(self, thread: Thread) -> Config:
        if self.fixed_config is not None:
            return self.fixed_config
        from inspector.service import load_config

        try:
            return load_config(self.profile, self.overrides, path=self.config_file, thread=thread)
        except ConfigError as exc:
            self.call_from_thread(self.notify, safe_line(str(exc), 200), title="config", severity="error")
            return Config.for_profile(self.profile or "iris")

    def _load(self, thread_id: str, *, keep_position: bool) -> None:
        """In a worker thread: load, replay under the baseline and the current edits, hand over."""
        worker = get_current_worker()
        source = self.source
        assert source is not None
        try:
            version = source.data_version(thread_id)
            thread = source.load_thread(thread_id)
        except Exception as exc:
            self.call_from_thread(self._fail, f"cannot load thread {safe_line(thread_id, 60)}: {exc}")
            return
        baseline_config = self._baseline_config(thread)
        config = baseline_config
        previous = self.view
        if previous is not None and previous.is_what_if:
            # Carry the user's edits over to the new thread (or to the reloaded one).
            changes = {k: new for k, (_old, new) in previous.config.changed_keys(previous.baseline_config).items()
                       if new is not None}
            try:
                base = baseline_config
                if previous.config.profile != baseline_config.profile:
                    base = baseline_config.with_profile(previous.config.profile)
                config = base.updated(changes)
            except ConfigError:
                config = baseline_config
        try:
            view = build_view(thread, baseline_config, config, self.simulator, data_version=version)
        except Exception as exc:
            self.call_from_thread(self._fail, f"replay failed: {exc}")
            return
        if worker.is_cancelled:
            return
        self.call_from_thread(self._apply_view, view, keep_position=keep_position)

    @work(thread=True, exclusive=True, group="prepare", exit_on_error=False, description="scan for summaries")
    def _prepare_summaries_worker(self, thread: Thread, config: Config) -> None:
        """In the background, let the summarizer scan the thread's messages (ExtractiveSummarizer.prepare),
        a few hundred at a time so that a newer thread cancels it quickly."""
        if self.simulator is not default_simulator or config["summarization.summarizer"] != "extractive":
            return  # an LLM summarizer reads nothing ahead: it is paid per summary
        from inspector.service import make_summarizer

        try:
            prepare = getattr(make_summarizer(config), "prepare", None)
        except Exception:  # e.g. an LLM summarizer that cannot be built: nothing to prepare
            return
        if prepare is None:
            return
        worker = get_current_worker()
        messages = thread.messages
        for start in range(0, len(messages), PREPARE_CHUNK):
            if worker.is_cancelled:
                return
            prepare(messages[start : start + PREPARE_CHUNK])

    def _set_threads(self, infos: list[ThreadInfo]) -> None:
        self.thread_infos = infos
        self.query_one(ThreadList).set_threads(infos, self.view.thread.id if self.view else None)

    def _fail(self, message: str) -> None:
        self.loading_error = message
        self.query_one("#status", Static).update(Text(safe_line(message, 300), style="bold #ff5f5f"))
        self.notify(safe_line(message, 300), severity="error")

    # replaying ----------------------------------------------------------------------------------------

    def replay(self, config: Config) -> None:
        """Replay the current thread under `config` (worker; a newer call cancels this one)."""
        if self.view is None:
            return
        self._replay_worker(self.view, config)

    @work(thread=True, exclusive=True, group="engine", exit_on_error=False, description="replay")
    def _replay_worker(self, view: ViewState, config: Config) -> None:
        worker = get_current_worker()
        summarizer = self._watch_llm_summarizer(config)
        try:
            new = build_view(view.thread, view.baseline_config, config, self.simulator, baseline=view.baseline_replay,
                             data_version=view.data_version, previous=view)
        except Exception as exc:
            self.call_from_thread(self._replay_failed, config, str(exc))
            return
        finally:
            if summarizer is not None:
                summarizer.on_progress = None
                self._llm_summarizer = None
        if new.requests:  # build the selected request's blocks here, not on the UI thread
            index = min(self.request_index, len(new.requests) - 1)
            new.audit(index)
            if index < len(new.baseline.requests):
                new.baseline_audit(index)
        if not worker.is_cancelled:
            self.call_from_thread(self._apply_view, new, keep_position=True)

    def _watch_llm_summarizer(self, config: Config):
        """For `summarization.summarizer = "anthropic"`: progress and tokens spent in the status
        line while the replay writes summaries, and `x` to cancel (worker thread)."""
        if config["summarization.summarizer"] != "anthropic":
            return None
        from inspector.service import make_summarizer

        summarizer = make_summarizer(config)
        summarizer.reset_cancel()
        start = summarizer.stats
        summarizer.on_progress = lambda stats: self.call_from_thread(self._llm_progress, start, stats)
        self._llm_summarizer = summarizer
        self.call_from_thread(self._llm_progress, start, start)
        return summarizer

    def _llm_progress(self, start, stats) -> None:
        line = Text()
        line.append("anthropic summaries: ", style="bold #d7af5f")
        line.append(f"{stats.requests - start.requests} request(s), "
                    f"{stats.input_tokens - start.input_tokens:,} tokens in / "
                    f"{stats.output_tokens - start.output_tokens:,} out, "
                    f"{stats.cache_hits - start.cache_hits} from the cache")
        if stats.retries - start.retries:
            line.append(f", {stats.retries - start.retries} retried")
        line.append("  (x cancels)", style="dim")
        self.llm_progress_text = line.plain
        self.query_one("#status", Static).update(line)

    def action_cancel_summaries(self) -> None:
        summarizer = self._llm_summarizer
        if summarizer is None:
            self.notify("no LLM summaries are being written", timeout=2)
            return
        summarizer.cancel()
        self.notify("cancelling the anthropic summaries…", timeout=3)

    async def _replay_failed(self, config: Config, message: str) -> None:
        self.notify(safe_line(f"replay failed: {message}", 300), severity="error")
        if self.view is not None:
            await self.query_one(ConfigForm).load(self.view.config, self.view.baseline_config)

    def set_config_value(self, key: str, value: Any) -> None:
        if self.view is None:
            return
        config = self.view.config
        if key == "context.strategy" and config.profile != "shifting":
            config = config.with_profile("shifting")
        try:
            self.replay(config.updated({key: value}))
        except ConfigError as exc:
            self.notify(safe_line(str(exc), 200), severity="error")

    def set_profile(self, profile: str) -> None:
        if self.view is not None and profile != self.view.config.profile:
            self.replay(self.view.config.with_profile(profile))

    @on(ConfigForm.Edited)
    def _config_edited(self, event: ConfigForm.Edited) -> None:
        self.set_config_value(event.key, event.value)

    @on(ConfigForm.ProfileChanged)
    def _profile_changed(self, event: ConfigForm.ProfileChanged) -> None:
        self.set_profile(event.profile)

    # applying a view (main thread) --------------------------------------------------------------------

    async def _apply_view(self, view: ViewState, *, keep_position: bool) -> None:
        old = self.view
        self.view = view
        self.loading_error = None
        count = len(view.requests)
        same_thread = old is not None and old.thread.id == view.thread.id
        if keep_position and same_thread and count:
            if self.follow_latest:
                index = count - 1
            else:
                index = min(self.request_index, count - 1)
        else:
            index = max(0, count - 1)
        # An empty thread (a recording just started) has no position to keep: follow what arrives.
        self.follow_latest = count == 0 or index == count - 1
        self.request_index = max(0, index)
        if not same_thread:
            self.query_one(ThreadList).mark_current(view.thread.id)
        self.query_one(TimelineChart).set_data(timeline_points(view), timeline_scale(view, self.current_request),
                                               cursor=self.request_index)
        await self.query_one(ConfigForm).load(view.config, view.baseline_config)
        self._update_diff(view.diff, view)
        self._show_request(all_tabs=True)
        if not same_thread:  # once the new thread is on screen (see inspector/gcpolicy.py)
            self.call_after_refresh(self.long_lived.settle, len(view.thread.messages))
            self._prepare_summaries_worker(view.thread, view.config)

    @property
    def current_request(self) -> RequestAudit | None:
        if self.view is None or not self.view.requests:
            return None
        return self.view.audit(min(self.request_index, len(self.view.requests) - 1))

    def _show_request(self, *, all_tabs: bool = False) -> None:
        """Update the status line, timeline label and panes for the selected request."""
        view = self.view
        if view is None:
            return
        request = self.current_request
        self._update_status(view)
        self._update_timeline_label(view, request)
        chart = self.query_one(TimelineChart)
        chart.scale = timeline_scale(view, request)
        chart.refresh()
        # The panes cost more than the chart: when the user holds an arrow key, update them at most every
        # `pane_throttle` seconds (leading and trailing edge) so stepping stays fluid on long threads.
        self._panes_dirty = True
        self._panes_all_tabs = self._panes_all_tabs or all_tabs
        now = time.monotonic()
        if self.pane_throttle <= 0 or now - self._panes_at >= self.pane_throttle:
            self._update_panes()
        elif self._pane_timer is None:
            self._pane_timer = self.set_timer(self.pane_throttle, self._update_panes)

    def _update_panes(self) -> None:
        self._pane_timer = None
        view = self.view
        if view is None or not self._panes_dirty:
            return
        self._panes_dirty = False
        all_tabs, self._panes_all_tabs = self._panes_all_tabs, False
        self._panes_at = time.monotonic()
        request = self.current_request
        budget = self.query_one(BudgetView)
        threshold = (
            float(view.config["context.compaction_threshold"]) if view.config.profile in ("iris", "harness") else None
        )
        recorded = view.recorded_compactions.get(request.request_id) if request is not None else None
        budget.show(request, tokenizer=view.simulation.tokenizer, approximate=view.simulation.approximate,
                    threshold=threshold, profile=view.config.profile, request_count=len(view.requests),
                    recorded_compaction=recorded,
                    pruning_threshold=(float(view.config["harness.pruning_threshold"])
                                       if view.config.profile == "harness" else None))
        # Tables are rebuilt only when visible; the others are refreshed when their tab opens.
        active = self.query_one(TabbedContent).active
        self._stale_tabs |= {"blocks", "summaries"}
        if all_tabs or active in ("blocks", "summaries"):
            self._refresh_tab(active)
        self.panes_updated_at = time.monotonic()  # read by bench/bench_tui.py

    def _refresh_tab(self, tab: str) -> None:
        view = self.view
        if view is None or tab not in self._stale_tabs:
            return
        self._stale_tabs.discard(tab)
        request = self.current_request
        if tab == "blocks":
            self.query_one(BlocksView).show(request, view.messages, view.summaries, view.partners)
        elif tab == "summaries":
            injected = request.summaries_injected if request is not None else ()
            self.query_one(SummariesView).show(view.simulation.summaries, view.summary_stats, injected,
                                               unused=view.unused_recorded_summaries)

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id:
            self._refresh_tab(event.pane.id)

    def _update_status(self, view: ViewState) -> None:
        sim = view.simulation
        compactions = sum(1 for r in sim.requests if r.compaction is not None)
        failures = sum(1 for r in sim.requests if r.failed)
        line = Text()
        line.append(safe_line(view.thread.title or view.thread.id, 60), style="bold")
        line.append(f"  {safe_line(view.thread.source, 20)}", style="dim")
        line.append("\n")
        line.append(f"{len(view.thread.messages):,} messages · {len(sim.requests):,} requests · ")
        line.append(f"{compactions} compaction{'' if compactions == 1 else 's'}", style="#d787ff" if compactions else "")
        line.append(" · ")
        line.append(f"{failures} failed", style="bold #ff5f5f" if failures else "")
        line.append(f"  · profile {view.config.profile} · {sim.tokenizer}"
                    f" ({'approximate' if sim.approximate else 'exact'})")
        if self.live:
            line.append("  ● live", style="#87d787")
        line.append("\n")
        if view.diff is None:
            line.append("baseline config", style="dim")
        else:
            changes = view.config.changed_keys(view.baseline_config)
            line.append("what-if: ", style="bold #ffd75f")
            if view.config.profile != view.baseline_config.profile:
                line.append(f"profile {view.baseline_config.profile}→{view.config.profile}  ")
            line.append("  ".join(f"{k} {old}→{new}" for k, (old, new) in changes.items()
                                  if k in view.config.values and old != new))
            moved = view.diff.lines(moves_shown=3)
            if moved:
                line.append("  │ " + "; ".join(moved[:3]), style="#87d7af")
            else:
                line.append("  │ nothing moved", style="dim")
        self.query_one("#status", Static).update(line)

    def _update_timeline_label(self, view: ViewState, request: RequestAudit | None) -> None:
        label = Text()
        if request is None:
            label.append("no requests", style="dim")
        else:
            b = request.budget
            label.append(f"request {request.index + 1}/{len(view.requests)} ", style="bold")
            label.append(f"  prompt {b.prompt_tokens:,}")
            if b.recorded_prompt_tokens is not None:
                label.append(f"  recorded {b.recorded_prompt_tokens:,}", style="#ffd75f")
            if request.failed:
                label.append("  FAILED", style="bold #ff5f5f")
                if b.needed_tokens is not None:
                    label.append(f" (needs {b.needed_tokens:,})", style="#ff5f5f")
            if request.compaction is not None:
                label.append("  ◆ compaction", style="bold #d787ff")
            if request.request_id in view.recorded_compactions:
                label.append("  ◇ recorded compaction", style="bold #d787ff")
            scale = timeline_scale(view, request)
            label.append(f"   ─ window {compact_number(scale.window)}", style="#d75f5f")
            if scale.threshold:
                label.append(f"  ─ threshold {compact_number(scale.threshold)}", style="#d7af00")
            if scale.budget is not None:
                label.append(f"  ─ budget {compact_number(scale.budget)}", style="#5faf5f")
            chart = self.query_one(TimelineChart)
            if chart.overview:
                per = chart.bucket_size()
                label.append(f"  overview: {per} request{'' if per == 1 else 's'} per column", style="bold #87afd7")
            label.append("  • recorded ◆◇ compaction ✗ failed", style="dim")
        self.query_one("#timeline-label", Static).update(label)

    def _update_diff(self, diff: SimulationDiff | None, view: ViewState) -> None:
        widget = self.query_one("#diff", Static)
        if diff is None:
            widget.update(Text("No edits: this is the baseline replay.", style="dim"))
            return
        out = Text()
        out.append("Changed keys\n", style="bold")
        if view.config.profile != view.baseline_config.profile:
            out.append(f"  profile: {view.baseline_config.profile} → {view.config.profile}\n")
        for key, (old, new) in view.config.changed_keys(view.baseline_config).items():
            out.append(f"  {key}: {old} → {new}\n")
        out.append("\nWhat moved\n", style="bold")
        lines = diff.lines(moves_shown=DIFF_MOVES_SHOWN)
        if not lines:
            out.append("  nothing: same compactions, failures and block statuses\n", style="dim")
        for line in lines:
            style = "#ff5f5f" if "failures appear" in line else "#87d7af"
            out.append(f"  • {line}\n", style=style)
        request = self.current_request
        if request is not None:
            delta = diff.prompt_delta.get(request.index)
            base = view.baseline_audit(request.index) if request.index < len(view.baseline.requests) else None
            changes = block_changes(base, request) if base is not None and base.request_id == request.request_id else []
            changed = len(changes) if base is not None else diff.changed_blocks.get(request.index, 0)
            out.append(f"\nSelected request {request.index + 1}\n", style="bold")
            out.append(f"  prompt tokens {'unchanged' if not delta else f'{delta:+,}'}\n")
            out.append(f"  {changed} block statuses changed\n")
            if changes:
                for change in changes[:DIFF_BLOCKS_SHOWN]:
                    out.append(f"    {safe_line(change.message_id, 28)}: ")
                    out.append(change.before, style=STATUS_STYLES.get(change.before, ""))
                    out.append(" → ")
                    out.append(change.after, style=STATUS_STYLES.get(change.after, ""))
                    out.append("\n")
                if len(changes) > DIFF_BLOCKS_SHOWN:
                    out.append(f"    … {len(changes) - DIFF_BLOCKS_SHOWN} more\n", style="dim")
        widget.update(out)

    # navigation ---------------------------------------------------------------------------------------

    def jump_to_request(self, index: int) -> None:
        if self.view is None or not self.view.requests:
            return
        index = max(0, min(index, len(self.view.requests) - 1))
        self.request_index = index
        self.follow_latest = index == len(self.view.requests) - 1
        chart = self.query_one(TimelineChart)
        with chart.prevent(TimelineChart.CursorMoved):
            chart.cursor = index
        self._show_request()
        if self.view.diff is not None:
            self._update_diff(self.view.diff, self.view)

    @on(TimelineChart.CursorMoved)
    def _cursor_moved(self, event: TimelineChart.CursorMoved) -> None:
        if event.index != self.request_index:
            self.jump_to_request(event.index)

    @on(ThreadList.Chosen)
    def _thread_chosen(self, event: ThreadList.Chosen) -> None:
        if self.view is None or event.thread_id != self.view.thread.id:
            self.load_thread(event.thread_id)
        self.query_one(TimelineChart).focus()

    def action_step(self, delta: int) -> None:
        self.jump_to_request(self.request_index + delta)

    def _find(self, predicate, *, forward: bool, start: int | None = None) -> int | None:
        if self.view is None:
            return None
        reqs = self.view.requests
        begin = self.request_index if start is None else start
        order = range(begin + 1, len(reqs)) if forward else range(begin - 1, -1, -1)
        for i in order:
            if predicate(reqs[i]):
                return i
        return None

    def _jump_or_tell(self, index: int | None, what: str) -> None:
        if index is None:
            self.notify(f"no {what}", severity="warning", timeout=2)
        else:
            self.jump_to_request(index)

    def _is_compaction(self, request: RequestAudit) -> bool:
        """A replayed compaction, or a recorded one (the app compacted before this request)."""
        recorded = self.view.recorded_compactions if self.view is not None else {}
        return request.compaction is not None or request.request_id in recorded

    def action_next_compaction(self) -> None:
        self._jump_or_tell(self._find(self._is_compaction, forward=True), "later compaction")

    def action_prev_compaction(self) -> None:
        self._jump_or_tell(self._find(self._is_compaction, forward=False), "earlier compaction")

    def action_first_failure(self) -> None:
        self._jump_or_tell(self._find(lambda r: r.failed, forward=True, start=-1), "failed request")

    def action_next_failure(self) -> None:
        self._jump_or_tell(self._find(lambda r: r.failed, forward=True), "later failed request")

    def action_show_tab(self, tab: str) -> None:
        """Open a tab and put the focus where its keys work (tables for up/down, the first config field)."""
        self.query_one(TabbedContent).active = tab
        if tab == "blocks":
            self.query_one("#blocks-table").focus()
        elif tab == "summaries":
            self.query_one("#summaries-table").focus()
        elif tab == "config":
            fields = self.query("ConfigForm Input")
            if fields:
                fields.first().focus()
        else:
            self.query_one(TimelineChart).focus()

    def action_focus_timeline(self) -> None:
        self.query_one(TimelineChart).focus()

    def action_focus_filter(self) -> None:
        left = self.query_one("#left")
        left.display = True
        self.query_one("#thread-filter", Input).focus()

    def action_toggle_overview(self) -> None:
        """Whole-thread timeline (one column per bucket of requests) or one column per request."""
        chart = self.query_one(TimelineChart)
        chart.action_toggle_overview()
        if self.view is not None:
            self._update_timeline_label(self.view, self.current_request)

    def action_toggle_threads(self) -> None:
        left = self.query_one("#left")
        left.display = not left.display

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(list(self.BINDINGS)))

    def action_screenshot(self) -> None:
        path = self.save_screenshot(path=str(self.screenshot_dir))
        self.notify(f"screenshot saved to {path}", timeout=4)

    def action_toggle_live(self) -> None:
        self.live = not self.live
        self.notify("live mode on" if self.live else "live mode off", timeout=2)
        if self.view is not None:
            self._update_status(self.view)

    # config reset / save ------------------------------------------------------------------------------

    async def action_reset_config(self) -> None:
        if self.view is None:
            return
        if self.view.is_what_if:
            self.replay(self.view.baseline_config)
        else:  # nothing applied, but the form may hold text that never was: show the baseline again
            await self.query_one(ConfigForm).load(self.view.config, self.view.baseline_config)
        self.notify("config reset to the baseline", timeout=2)

    def action_save_config(self) -> None:
        if self.view is None:
            return
        self._save_config_worker(self.view.config)

    @work(thread=True, group="io", exit_on_error=False, description="save config")
    def _save_config_worker(self, config: Config) -> None:
        from inspector.service import save_config

        try:
            path = save_config(config, self.config_file)
        except OSError as exc:
            self.call_from_thread(self.notify, safe_line(f"cannot save config: {exc}", 200), severity="error")
            return
        self.call_from_thread(self.notify, f"config saved to {path}", timeout=4)

    # export -------------------------------------------------------------------------------------------

    def export_payload(self) -> dict[str, Any] | None:
        view, request = self.view, self.current_request
        if view is None or request is None:
            return None
        payload = view.simulation.to_json(request=request.index)
        payload["requests"] = [request.to_json()]  # the selected request with every block
        payload["thread_title"] = view.thread.title
        return payload

    def action_export_audit(self) -> None:
        payload = self.export_payload()
        if payload is None:
            self.notify("nothing to export", severity="warning")
            return
        self._export_worker(payload)

    @work(thread=True, group="io", exit_on_error=False, description="export audit")
    def _export_worker(self, payload: dict[str, Any]) -> None:
        thread_part = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(payload["thread_id"]))[:60] or "thread"
        index = payload["requests"][0]["index"] + 1 if payload["requests"] else 0
        path = self.export_dir / f"audit-{thread_part}-request-{index}.json"
        try:
            path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        except OSError as exc:
            self.call_from_thread(self.notify, safe_line(f"cannot export: {exc}", 200), severity="error")
            return
        self.last_export = path
        self.call_from_thread(self.notify, f"audit exported to {path}", timeout=4)

    # live mode ----------------------------------------------------------------------------------------

    def poll_live(self) -> None:
        """Check (in a worker) whether the selected thread's rows changed; reload it if so."""
        if self.live and self.view is not None and self.source is not None:
            # While a load or replay runs, wait for it: starting another (exclusive) load would cancel it, and
            # under a fast writer every load would be cancelled by the next tick and the view would stop moving.
            if any(w.group == "engine" and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
                   for w in self.workers):
                return
            self._poll_worker(self.view.thread.id, self.view.data_version)

    @work(thread=True, exclusive=True, group="poll", exit_on_error=False)
    def _poll_worker(self, thread_id: str, known: tuple | None) -> None:
        source = self.source
        if source is None:
            return
        try:
            version = source.data_version(thread_id)
        except Exception:
            return  # the database is briefly unavailable; try again at the next tick
        if version == known:
            return
        try:
            infos = source.list_threads()
        except Exception:
            infos = None
        if infos is not None:
            self.call_from_thread(self._set_threads, infos)
        self.call_from_thread(self._reload_current, thread_id)

    def _reload_current(self, thread_id: str) -> None:
        if self.view is not None and self.view.thread.id == thread_id:
            self._load_worker(thread_id, keep_position=True)


def create_app(
    db_url: str | None = None,
    thread_id: str | None = None,
    profile: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> InspectorApp:
    """The app as the CLI builds it (`kwargs`: source, config, simulator, live, ... for tests and scripts)."""
    return InspectorApp(db_url=db_url, thread_id=thread_id, profile=profile, overrides=overrides, **kwargs)


def main() -> None:  # pragma: no cover - manual entry point (`python -m inspector.app [DB] [THREAD]`)
    import sys

    args = sys.argv[1:]
    create_app(db_url=args[0] if args else None, thread_id=args[1] if len(args) > 1 else None).run()


if __name__ == "__main__":  # pragma: no cover
    main()
