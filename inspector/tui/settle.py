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
            return
