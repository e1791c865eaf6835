"""The live tail: every tick, ask (in a worker) whether the shown thread's rows changed, and reload it if so."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from textual.worker import WorkerState

from inspector.controllers.replay import ENGINE, ReplayController
from inspector.screens.messages import LiveProblem, Notice, ThreadChanged, ThreadsListed
from inspector.terminal_safety import safe_line

if TYPE_CHECKING:
    from inspector.controllers.host import InspectorHost


class LiveTail:
    """Polls `replay.source` for the app's current thread while `enabled`."""

    def __init__(self, screen: InspectorHost, replay: ReplayController, *, enabled: bool, interval: float) -> None:
        self.screen = screen
        self.replay = replay
        self.enabled = enabled
        self.interval = interval
        self.problem: str | None = None
        """What keeps the view from following the database (deleted, truncated), until it clears."""

    def start(self) -> None:
        if self.enabled and self.interval > 0:
            self.screen.set_interval(self.interval, self.poll)

    def poll(self) -> None:
        """Check (in a worker) whether the selected thread's rows changed; reload it if so."""
        screen = self.screen
        if self.enabled and screen.view is not None and self.replay.source is not None:
            # While a load or replay runs, wait for it: starting another (exclusive) load would cancel it, and
            # under a fast writer every load would be cancelled by the next tick and the view would stop moving.
            if any(w.group == ENGINE and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
                   for w in screen.workers):
                return
            screen.run_worker(partial(self._poll_work, screen.view.thread.id, screen.view.data_version), thread=True,
                              exclusive=True, group="poll", exit_on_error=False, description="poll")

    def _poll_work(self, thread_id: str, known: tuple | None) -> None:
        screen, source = self.screen, self.replay.source
        if source is None:
            return
        try:
            version = source.data_version(thread_id)
        except Exception as exc:  # noqa: BLE001 - said (a deleted or truncated file), then tried again next tick
            self._say(" ".join(str(exc).split()) or type(exc).__name__)
            return
        self._say(None)
        pending = getattr(source, "warnings", None)
        if pending:  # the file was replaced under the view: reading the new one
            lines = list(pending)
            pending.clear()
            for line in lines:
                screen.post_message(Notice(safe_line(line, 300), severity="warning", timeout=8))
        if version == known:
            return
        try:
            infos = source.list_threads()
        except Exception:
            infos = None
        if infos is not None:
            screen.post_message(ThreadsListed(infos))
        screen.post_message(ThreadChanged(thread_id))

    def _say(self, problem: str | None) -> None:
        """Tell a new problem once (a notification) and keep it on the status line until it clears."""
        if problem == self.problem:
            return
        self.problem = problem
        screen = self.screen
        if problem is not None:
            screen.post_message(Notice(safe_line(problem, 300), severity="error", timeout=10))
        screen.post_message(LiveProblem(problem))

    def reload_current(self, thread_id: str) -> None:
        view = self.screen.view
        if view is not None and view.thread.id == thread_id:
            self.replay.load(thread_id, keep_position=True)
