"""`run_fleet`: a fleet sweep from start to end. The threads not yet in the results store go out in
batches to the executor; each finished batch is written to the store (when there is one) and added
to the rollup; the rows of pairs found in the store are added without replaying them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.fleet.executors import Executor
from inspector.fleet.results import ResultsStore
from inspector.fleet.rollup import Rollup
from inspector.fleet.work import FleetSpec, ThreadResult, run_batch
from inspector.sweep import SweepRow

BATCH_THREADS = 50
"""Threads per task at most: a fleet of 100,000 threads is 2,000 tasks, not 100,000, and a worker's
memory is bounded by one batch."""


@dataclass(frozen=True, slots=True)
class FleetResult:
    rows: list[tuple[str | None, SweepRow]]  # (group or None, row), `Rollup.rows`
    errors: list[str]
    skipped: int  # (thread, config) pairs found in the results store, not replayed
    executor: dict[str, Any]
    threads: int
    cancelled: bool = False
    written: int = 0  # pairs written to the results store by this run
    dashboard: str | None = field(default=None)


def batch_size(threads: int, workers: int, limit: int = BATCH_THREADS) -> int:
    """Threads per batch: about four batches per worker for a small fleet (so the workers share it
    evenly), `limit` for a large one."""
    return max(1, min(limit, -(-threads // max(1, 4 * workers))))


def run_fleet(spec: FleetSpec, thread_ids: Sequence[str], executor: Executor, *,
              results: ResultsStore | None = None, group_by: str | None = None,
              progress: Callable[[int, int], None] | None = None, stop: Callable[[], bool] | None = None,
              batch_threads: int | None = None) -> FleetResult:
    """Every thread of `thread_ids` under every combination of `spec`, on `executor`.

    `progress(done, total)` after each batch (threads); `stop()` True ends the run after the batch
    that finished (`cancelled`), the batches in flight are dropped."""
    rollup = Rollup(spec.combos, group_by)
    ids = list(dict.fromkeys(thread_ids))
    keys = spec.config_keys
    index_of = {k: i for i, k in enumerate(keys)}
    done: dict[str, set[int]] = {}
    skipped = 0
    if results is not None:
        for stored in results.read(ids, keys):
            done.setdefault(stored.thread_id, set()).add(index_of[stored.config_key])
            rollup.add(index_of[stored.config_key], stored.row, stored.groups)
            skipped += 1
    every = range(len(spec.combos))
    work = [(tid, tuple(i for i in every if i not in done.get(tid, ()))) for tid in ids]
    work = [w for w in work if w[1]]
    total = len(ids)
    finished = total - len(work)
    workers = max(1, int(executor.info().get("workers") or 1))
    size = batch_threads or batch_size(len(work), workers)
    batches = [work[i:i + size] for i in range(0, len(work), size)]
    errors: list[str] = []
    written = 0
    cancelled = False
    if progress is not None:
        progress(finished, total)
    for batch_results in executor.run(run_batch, spec, batches, stop=stop):
        batch_results: list[ThreadResult]
        if results is not None:
            written += results.write(batch_results, keys, spec.settings())
        for result in batch_results:
            if result.error is not None:
                errors.append(f"thread {result.thread_id}: {result.error}")
            for index, row in result.rows:
                rollup.add(index, row, result.groups)
        finished += len(batch_results)
        if progress is not None:
            progress(finished, total)
        if stop is not None and stop():
            cancelled = finished < total
            break
    return FleetResult(rollup.rows(), errors, skipped, executor.info(), total, cancelled, written,
                       executor.dashboard)
