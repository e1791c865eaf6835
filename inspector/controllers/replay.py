"""The replay controller: owns the thread source, the baseline config and the what-if config.

It opens the source, loads a thread, replays it under the baseline and the user's edits (carrying those
edits to the next thread or reload), and hands each finished `ViewState` to the screen. Every replay runs in
an `exclusive` worker of the "engine" group, so a newer edit cancels a stale one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.message import Message
from textual.worker import get_current_worker

from inspector.config import DEFAULT_PROFILE, Config, ConfigError
from inspector.controllers.handoff import Handoff
from inspector.controllers.source import SourceHandle
from inspector.model import Thread
from inspector.screens.messages import (
    LlmProgress,
    LoadFailed,
    Notice,
    PricesReady,
    ReplayFailed,
    ReproductionReady,
    ThreadLoaded,
    ThreadsListed,
    ViewReady,
)
from inspector.screens.source import ThreadSource
from inspector.screens.status import DIFF_BLOCKS_SHOWN
from inspector.screens.view import (
    Simulator,
    ViewState,
    build_view,
    default_simulator,
    fill_reproduction,
    price_view,
)
from widgets.budget import block_figures
from widgets.safe import safe_line

if TYPE_CHECKING:
    from inspector.controllers.host import InspectorHost
    from inspector.thread_tree import SubagentTotals

PREPARE_CHUNK = 256  # messages the background summary scan handles between checks for cancellation
ENGINE = "engine"  # the worker group of loads and replays (the live tail waits while one runs)


def switch_profile(config: Config, profile: str, thread: Thread) -> Config:
    """`config` under another profile, keeping the user's edits, the thread's own window (a 200K
    thread stays 200K under shifting, whose default window is 8K) and its tokenizer (a Claude Code
    thread counted with o200k_base is not recounted with chars4, which would move its calibration:
    only the user changes the tokenizer)."""
    switched = config.with_profile(profile)
    kept = {}
    if thread.window and switched["context.window"] != config["context.window"]:
        kept["context.window"] = config["context.window"]
    if switched["context.tokenizer"] != config["context.tokenizer"]:
        kept["context.tokenizer"] = config["context.tokenizer"]
    return switched.updated(kept) if kept else switched


class ReplayController:
    """Loads and replays threads for `screen` in worker threads."""

    def __init__(
        self,
        screen: InspectorHost,
        *,
        sources: SourceHandle,
        fixed_config: Config | None,
        profile: str | None,
        overrides: Mapping[str, Any],
        config_file: Path | None,
        simulator: Simulator,
    ) -> None:
        self.screen = screen
        self.sources = sources
        self.fixed_config = fixed_config
        self.profile = profile
        self.overrides = dict(overrides)
        self.config_file = config_file
        self.simulator = simulator
        self.llm_summarizer: Any = None  # the anthropic summarizer of the running replay, for `x` to cancel
        self.compactions: str | None = None  # the mode the user chose with `c` for the shown thread
        self._subagent_memo: tuple[tuple, SubagentTotals | None] | None = None  # (key, the last thread's)

    def _run(self, work: Callable[[], None], *, group: str = ENGINE, description: str = "") -> None:
        self.screen.run_worker(work, thread=True, exclusive=True, group=group, exit_on_error=False,
                               description=description)

    @property
    def source(self) -> ThreadSource | None:
        """The opened source (None until the first load opens it)."""
        return self.sources.source

    # opening and loading ------------------------------------------------------------------------------

    def open(self, thread_id: str | None) -> None:
        """Open the source, list its threads and show `thread_id` (or the first thread)."""
        self._run(partial(self._open_work, thread_id), description="open")

    def _open_work(self, thread_id: str | None) -> None:
        screen = self.screen
        try:
            source = self.sources.open()
            infos = source.list_threads()
        except Exception as exc:  # a bad URL or database: say so, keep running
            message = f"cannot open the database: {exc}"
            self.sources.error = message
            screen.post_message(LoadFailed(message))
            return
        screen.post_message(ThreadsListed(infos))
        note = getattr(source, "access_note", None)
        if note:  # how a WAL-mode or journaled SQLite file was opened without writing beside it
            screen.post_message(Notice(safe_line(note, 300)))
        if not infos:
            screen.post_message(LoadFailed("the database has no threads"))
            return
        wanted = thread_id if thread_id and any(i.id == thread_id for i in infos) else infos[0].id
        if thread_id and wanted != thread_id:
            screen.post_message(Notice(f"no thread {safe_line(thread_id, 60)!r}; showing the first",
                                       severity="warning"))
        self._load_work(wanted, keep_position=False)

    def load(self, thread_id: str, *, keep_position: bool = False) -> None:
        """Load a thread and replay it (worker)."""
        self._run(partial(self._load_work, thread_id, keep_position=keep_position), description="load")

    def baseline_config(self, thread: Thread) -> Config:
        """The config a thread replays under before any edit (in a worker: a bad config file is told)."""
        if self.fixed_config is not None:
            return self.fixed_config
        from inspector.service import load_config

        try:
            return load_config(self.profile, self.overrides, path=self.config_file, thread=thread)
        except ConfigError as exc:
            self.screen.post_message(Notice(safe_line(str(exc), 200), title="config", severity="error"))
            return Config.for_profile(self.profile or DEFAULT_PROFILE)

    def _load_work(self, thread_id: str, *, keep_position: bool) -> None:
        """In a worker thread: load, replay under the baseline and the current edits, hand over."""
        screen = self.screen
        worker = get_current_worker()
        source = self.source
        assert source is not None
        try:
            version = source.data_version(thread_id)
            thread = source.load_thread(thread_id)
        except Exception as exc:
            screen.post_message(LoadFailed(f"cannot load thread {safe_line(thread_id, 60)}: {exc}"))
            return
        pending = getattr(source, "warnings", None)
        repairs = list(pending or ())
        if repairs:  # damaged cells repaired or dropped while reading (each names its row and column)
            pending.clear()
            more = f" (and {len(repairs) - 1} more)" if len(repairs) > 1 else ""
            screen.post_message(Notice(safe_line(f"repaired while reading: {repairs[0]}{more}", 300),
                                       severity="warning"))
        baseline_config = self.baseline_config(thread)
        overrides: tuple[str, ...] = ()
        if self.fixed_config is None:
            from inspector.service import file_overrides

            overrides = file_overrides(baseline_config, self.config_file)
        config = self.carried_config(screen.view, thread, baseline_config)
        new_thread = screen.view is None or screen.view.thread.id != thread.id
        if new_thread:
            self.compactions = None  # another thread opens in its own default mode
            # its recorded counts on the chart while it replays (seconds on a long thread)
            screen.post_message(ThreadLoaded(thread, config.profile, int(config["context.window"])))
        subagents = self._subagents(source, thread)
        try:
            # a new thread's first view goes up before its reproduction's decide replay (`reproduce_later`)
            view = build_view(thread, baseline_config, config, self.simulator, data_version=version,
                              file_overrides=overrides, compactions=self.compactions, subagents=subagents,
                              reproduce=not new_thread)
        except Exception as exc:
            screen.post_message(LoadFailed(f"replay failed: {exc}"))
            return
        view.points  # noqa: B018 - the chart's points, here in the worker, not on the UI thread
        if worker.is_cancelled:
            return
        screen.post_message(ViewReady(view, keep_position=keep_position))

    def reproduce_later(self, view: ViewState) -> None:
        """Fill in `view.reproduction` in a worker of its own group (an edit made meanwhile does not
        cancel it: its views share the one result), then tell the screen."""
        cell = view.reproduction
        if cell is not None and cell.claim():
            self._run(partial(self._reproduction_work, view), group="reproduction", description="reproduction")

    def _reproduction_work(self, view: ViewState) -> None:
        try:
            filled = fill_reproduction(view, self.simulator)
        except Exception as exc:  # the status says the reproduction is unknown, and why
            assert view.reproduction is not None
            view.reproduction.fail(str(exc))
            filled = True
        if filled:
            self.screen.post_message(ReproductionReady(view))

    def _subagents(self, source: ThreadSource, thread: Thread) -> SubagentTotals | None:
        """The thread's sub-agents replayed (`inspector.subagents`), remembered while their counts stay
        (a live tail reloads the parent at every change); None where it has none or they cannot be listed."""
        if self.simulator is not default_simulator:
            return None  # a test's simulator replays only what it is given
        try:
            infos = source.list_threads()
        except Exception:  # the list was shown when the source opened; without it, no roll-up
            return None
        from inspector.subagents import subagent_totals
        from inspector.thread_tree import descendants

        kids = descendants(infos, thread.id)
        key = (thread.id, tuple((k.id, k.messages, k.requests, k.summaries) for k in kids))
        if self._subagent_memo is not None and self._subagent_memo[0] == key:
            return self._subagent_memo[1]
        totals = subagent_totals(infos, thread.id, source.load_thread, self.config_file) if kids else None
        self._subagent_memo = (key, totals)
        return totals

    @staticmethod
    def carried_config(previous: ViewState | None, thread: Thread, baseline_config: Config) -> Config:
        """The user's edits of the previous view when `thread` is that view's thread reloaded (live tail);
        another thread opens under its own baseline (a reserve edited for a 200K window is no reserve for
        a 2K one)."""
        if previous is None or not previous.is_what_if or previous.thread.id != thread.id:
            return baseline_config
        changes = {k: new for k, (_old, new) in previous.config.changed_keys(previous.baseline_config).items()
                   if new is not None}
        try:
            base = baseline_config
            if previous.config.profile != baseline_config.profile:
                base = switch_profile(baseline_config, previous.config.profile, thread)
            return base.updated(changes)
        except ConfigError:
            return baseline_config

    # what-if replays ----------------------------------------------------------------------------------

    def replay(self, view: ViewState, config: Config, request_index: int) -> None:
        """Replay `view`'s thread under `config` against its baseline (worker; a newer call cancels this one)."""
        self._run(partial(self._replay_work, Handoff(view), config, request_index), description="replay")

    def _replay_work(self, handoff: Handoff, config: Config, request_index: int) -> None:
        screen = self.screen
        view = handoff.take()
        worker = get_current_worker()
        summarizer = self._watch_llm_summarizer(config)
        try:
            # on screen before its prices (`price`, once it is painted): pricing is a third of an edit's work
            new = build_view(view.thread, view.baseline_config, config, self.simulator, baseline=view.baseline_replay,
                             data_version=view.data_version, previous=view, price=False)
        except Exception as exc:
            screen.post_message(ReplayFailed(config, str(exc)))
            return
        finally:
            if summarizer is not None:
                summarizer.on_progress = None
                self.llm_summarizer = None
        if new.requests:  # build the selected request's blocks and their diff here, not on the UI thread
            index = min(request_index, len(new.requests) - 1)
            block_figures(new.audit(index))  # and what the Budget pane reads off them
            if index < len(new.baseline.requests):
                new.baseline_audit(index)
            if new.diff is not None:
                new.block_changes_shown(index, DIFF_BLOCKS_SHOWN)
        new.points  # noqa: B018 - the chart's points, here in the worker, not on the UI thread
        if not worker.is_cancelled:
            screen.post_message(ViewReady(new, keep_position=True))

    def price(self, view: ViewState, request_index: int,
              then: Callable[[ViewState], Message | None] | None = None) -> None:
        """Price `view`, on screen without its prices (`ViewState.priced`), in a worker of its own group (a
        newer view's pricing cancels it), then hand the prices to the screen (`PricesReady`). `then(view)`:
        more work for the same worker after the prices (the view's losses), whose message is posted right
        after them, so that the screen lays both out in one pass (each layout of the screen costs 10-30 ms)."""
        if not view.priced:
            self._run(partial(self._price_work, Handoff(view), request_index, then), group="pricing",
                      description="pricing")

    def _price_work(self, handoff: Handoff, request_index: int,
                    then: Callable[[ViewState], Message | None] | None) -> None:
        view = handoff.take()
        worker = get_current_worker()
        try:
            prices = PricesReady(view, price_view(view))
            if view.requests and view.replay is not None:  # the selected request priced here, not on the UI thread
                view.replay.audit(min(request_index, len(view.requests) - 1))
        except Exception as exc:  # the panes say the cost is unknown, and why
            prices = PricesReady(view, None, safe_line(str(exc), 200))
        more = then(view) if then is not None and not worker.is_cancelled else None
        if not worker.is_cancelled:
            self.screen.post_message(prices)
            if more is not None:
                self.screen.post_message(more)

    def toggle_compactions(self, view: ViewState, request_index: int) -> None:
        """Replay `view` (its baseline and its what-if) in the other compaction mode (worker)."""
        mode = "decide" if view.compactions == "recorded" else "recorded"
        self.compactions = mode
        self._run(partial(self._mode_work, Handoff(view), mode, request_index), description="compaction mode")

    def _mode_work(self, handoff: Handoff, mode: str, request_index: int) -> None:
        screen = self.screen
        view = handoff.take()
        worker = get_current_worker()
        try:
            new = build_view(view.thread, view.baseline_config, view.config, self.simulator,
                             data_version=view.data_version, previous=view, compactions=mode, price=False)
        except Exception as exc:
            screen.post_message(ReplayFailed(view.config, str(exc)))
            return
        if new.requests:
            block_figures(new.audit(min(request_index, len(new.requests) - 1)))
        new.points  # noqa: B018 - the chart's points, here in the worker, not on the UI thread
        if not worker.is_cancelled:
            screen.post_message(ViewReady(new, keep_position=True))
            screen.post_message(Notice(f"compactions: {mode}", timeout=2))

    def _watch_llm_summarizer(self, config: Config) -> Any:
        """For `summarization.summarizer = "anthropic"`: progress and tokens spent in the status
        line while the replay writes summaries, and `x` to cancel (worker thread)."""
        if config["summarization.summarizer"] != "anthropic":
            return None
        from inspector.service import make_summarizer

        screen = self.screen
        summarizer = make_summarizer(config)
        summarizer.reset_cancel()
        start = summarizer.stats
        summarizer.on_progress = lambda stats: screen.post_message(LlmProgress(start, stats))
        self.llm_summarizer = summarizer
        screen.post_message(LlmProgress(start, start))
        return summarizer

    def cancel_summaries(self) -> bool:
        """Ask the running LLM summarizer to stop; False when none runs."""
        if self.llm_summarizer is None:
            return False
        self.llm_summarizer.cancel()
        return True

    # background summary scan --------------------------------------------------------------------------

    def prepare_summaries(self, thread: Thread, config: Config) -> None:
        """In the background, let the summarizer scan the thread's messages (ExtractiveSummarizer.prepare),
        a few hundred at a time so that a newer thread cancels it quickly."""
        self._run(partial(self._prepare_work, thread, config), group="prepare", description="scan for summaries")

    def _prepare_work(self, thread: Thread, config: Config) -> None:
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
