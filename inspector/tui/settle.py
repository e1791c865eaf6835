"""Waiting, under textual's Pilot, until the app has settled: every worker done and nothing waiting for a
paint (a view's prices and losses start in workers once it is painted: `controllers.after_paint`). The tests,
the benchmarks and the screenshots wait with this; it follows the app's progress, never the clock."""

from __future__ import annotations

from typing import Any

SETTLE_ROUNDS = 12  # a view's chain is a few links: the replay, its paint, its prices and losses, their paint


async def settle(app: Any, pilot: Any) -> None:
    """Until every worker is done and what they handed over is processed, with nothing left to start."""
    for round_ in range(SETTLE_ROUNDS):
        await app.workers.wait_for_complete()
        await pilot.pause()
        main = getattr(app, "_main_screen", None)
        after_paint = main.after_paint if main is not None else None
        if after_paint is not None and after_paint.pending:
            await after_paint.drained()  # the next paint (or its wait at the latest) starts what waits
        elif round_ and all(worker.is_finished for worker in app.workers):
            await _laid_out(app, pilot)
            return


async def _laid_out(app: Any, pilot: Any) -> None:
    """Until the screen has no layout, paint or message left to do: a layout can ask for another (a
    scrollbar that comes or goes changes a panel's width, so its height), which a loaded machine may
    not have reached when the workers are done."""
    screen = app.screen
    for _ in range(SETTLE_ROUNDS):
        if not (screen._layout_required or screen._dirty_widgets or not screen._message_queue.empty()):
            return
        await screen.wait_for_refresh()
        await pilot.pause()
