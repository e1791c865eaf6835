"""Work that waits for the screen's paint: an edit's prices and losses start once its replay is on screen.

A worker started with the panes' update shares the interpreter with the layout and the paint that follow
it (the GIL: the paint took half as long again). textual's `call_after_refresh` runs before that paint when
the widgets have not yet told the screen what changed, and its layout signal misses the paints without a
layout (the panes whose size the CSS fixes, or whose lines did not change), so the main screen tells the
queue here after each of its paints (`MainScreen._compositor_refresh`, textual's own paint, pinned with
textual), and what is queued runs then, or `WAIT` seconds at the latest (nothing changed on screen: the
work is not held back for longer than a paint would take)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

WAIT = 0.1  # seconds a queued callback waits at most for a paint


class AfterPaint:
    """Callbacks run (on the UI thread, in order) after the screen's next paint, or `wait` seconds at the latest."""

    def __init__(self, screen: Any, *, wait: float = WAIT) -> None:
        self.screen = screen
        self.wait = wait
        self._queued: list[Callable[[], None]] = []
        self._timer: Any = None
        self._empty: asyncio.Event | None = None  # set while nothing is queued (`drained`)
        self.painted_runs = 0  # how many times a paint (not the wait) let the queue run

    def painted(self) -> None:
        """The screen was painted (called from inside textual's refresh: what is queued runs once it has
        returned)."""
        if self._queued:
            self.painted_runs += 1
            self.screen.call_later(self.run)

    @property
    def pending(self) -> bool:
        return bool(self._queued)

    async def drained(self) -> None:
        """Until nothing is queued (what waits for the app to settle: the tests, the benchmarks)."""
        if self._queued:
            if self._empty is None:
                self._empty = asyncio.Event()
            self._empty.clear()
            await self._empty.wait()

    def queue(self, callback: Callable[[], None]) -> None:
        self._queued.append(callback)
        if self._timer is None:
            self._timer = self.screen.set_timer(self.wait, self.run)

    def run(self) -> None:
        """Run what is queued (the screen was painted, or the wait is over)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        queued, self._queued = self._queued, []
        for callback in queued:
            callback()
        if self._empty is not None and not self._queued:
            self._empty.set()
