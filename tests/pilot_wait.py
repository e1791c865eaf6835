"""Pilot's waits, bounded by the app's progress instead of by the machine's speed.

Textual's Pilot waits after each key and in each `pause()` with `textual._wait.wait_for_idle`: it sleeps
in windows of 20 ms until one window used under 1 ms of CPU. That reads the clock twice over: every wait
ends with 20 ms of idle time at least (and more where the work comes in bursts, as the screen's 60 Hz
refresh gives it), and on a loaded machine a window in which the process was not scheduled looks idle
though the app has work queued. Half of an app test's time went in these windows.

`wait_for_quiet` replaces it while the tests run (`install()`, from tests/conftest.py). It returns when
the app has nothing left to do that it could do now: the event loop has no other callback ready and no
timer due, every message pump's queue is empty and has no callback queued for after it, the current
screen needs no layout, repaint or recompose, no screen has a callback waiting for its refresh, and no worker
is pending, nor running while the other threads use CPU (a worker's thread computing, as the heuristic
saw it; one blocked on a lock or a socket moves nothing, as there). That is what the CPU heuristic tries
to observe, asked of the app itself; both keep Textual's bound (`max_sleep`, 1 s), so a wait never
blocks a test.
"""

from __future__ import annotations

import asyncio
from time import monotonic, process_time, thread_time

import textual.app
import textual.pilot
from textual._context import active_app
from textual.worker import WorkerState

__all__ = ["install", "is_quiet", "wait_for_quiet"]

_POLL = 0.001
"""How long to sleep between two looks while only a thread or a timer can move the app on."""


def _pumps(app: textual.app.App):
    yield app
    for screen in app._screen_stack:
        yield from screen.walk_children(with_self=True)


def is_quiet(loop: asyncio.AbstractEventLoop, threads_busy: bool = True) -> bool:
    """Whether the running app has nothing it could do now (see the module's docstring)."""
    if loop._ready:  # type: ignore[attr-defined]  # CPython's ready queue: callbacks waiting to run
        return False
    scheduled = loop._scheduled  # type: ignore[attr-defined]  # a heap of timer handles, soonest first
    if scheduled and not scheduled[0].cancelled() and scheduled[0].when() <= loop.time():
        return False
    try:
        app = active_app.get()
        screen = app.screen
    except Exception:  # no app, or an app without a screen (starting, ending)
        return True
    # only the current screen refreshes: those under it keep their flags until shown
    if (screen._layout_required or screen._scroll_required or screen._repaint_required
            or screen._recompose_required or screen._dirty_widgets):
        return False
    if any(screen._callbacks for screen in app._screen_stack):
        return False
    if any(worker.state == WorkerState.PENDING or (worker.state == WorkerState.RUNNING and threads_busy)
           for worker in app.workers):
        return False
    return all(pump._message_queue.empty() and not pump._next_callbacks for pump in _pumps(app))


async def wait_for_quiet(min_sleep: float = 0.0, max_sleep: float = 1.0) -> None:
    """Wait until the app is quiet (at least `min_sleep`, at most `max_sleep` seconds), as Textual's
    `wait_for_idle(min_sleep, max_sleep)` is called."""
    loop = asyncio.get_running_loop()
    start = monotonic()
    threads_busy = True  # until a look says otherwise
    while True:
        await asyncio.sleep(0)
        elapsed = monotonic() - start
        if elapsed >= max_sleep:
            return
        if elapsed >= min_sleep and is_quiet(loop, threads_busy):
            return
        if not loop._ready:  # type: ignore[attr-defined]  # only a thread or a timer can move it on
            if _refresh_due():
                continue
            others = process_time() - thread_time()
            await asyncio.sleep(_POLL)
            threads_busy = process_time() - thread_time() - others > _POLL / 4


def _refresh_due() -> bool:
    """Refresh the current screen now if it waits for its refresh timer, as `Pilot.pause()` does after its
    wait; whether it did."""
    try:
        app = active_app.get()
        screen = app.screen
    except Exception:
        return False
    if app._batch_count or not (screen._layout_required or screen._scroll_required or screen._repaint_required
                                or screen._recompose_required or screen._dirty_widgets):
        return False
    screen._on_timer_update()
    return True


def install() -> None:
    """Pilot's and `App._press_keys`'s waits become `wait_for_quiet` (they import Textual's by name)."""
    textual.pilot.wait_for_idle = wait_for_quiet
    textual.app.wait_for_idle = wait_for_quiet
