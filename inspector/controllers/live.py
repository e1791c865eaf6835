"""The live tail: every tick, ask (in a worker) whether the shown thread's rows changed, and reload it if so."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from textual.worker import WorkerState

from inspector.controllers.replay import ENGINE, ReplayController

if TYPE_CHECKING:
    from inspector.app import InspectorApp


class LiveTail:
    """Polls `replay.source` for the app's current thread while `enabled`."""

    def __init__(self, app: InspectorApp, replay: ReplayController, *, enabled: bool, interval: float) -> None:
        self.app = app
        self.replay = replay
        self.enabled = enabled
        self.interval = interval

    def start(self) -> None:
        if self.enabled and self.interval > 0:
            self.app.set_interval(self.interval, self.poll)

    def poll(self) -> None:
        """Check (in a worker) whether the selected thread's rows changed; reload it if so."""
        app = self.app
        if self.enabled and app.view is not None and self.replay.source is not None:
            # While a load or replay runs, wait for it: starting another (exclusive) load would cancel it, and
            # under a fast writer every load would be cancelled by the next tick and the view would stop moving.
            if any(w.group == ENGINE and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
                   for w in app.workers):
                return
            app.run_worker(partial(self._poll_work, app.view.thread.id, app.view.data_version), thread=True,
                           exclusive=True, group="poll", exit_on_error=False, description="poll")

    def _poll_work(self, thread_id: str, known: tuple | None) -> None:
        app, source = self.app, self.replay.source
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
            app.call_from_thread(app.set_threads, infos)
        app.call_from_thread(self._reload_current, thread_id)

    def _reload_current(self, thread_id: str) -> None:
        view = self.app.view
        if view is not None and view.thread.id == thread_id:
            self.replay.load(thread_id, keep_position=True)
