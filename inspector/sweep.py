"""Sweeps: replay a thread (or every thread) under every combination of config values, one row
per combination: compactions (and how many came right after the previous one), failures, billed
prompt tokens, cache-read share, cache breaks, cost (the compactions' summarization calls
included, and shown apart) and facts lost.

Above the engine (it goes through `service.run_replay`, so a sweep row means what `simulate`
means). `--all` is the fleet sweep (`inspector.fleet`): batches of threads on a process pool or a
Dask cluster, the rows added up exactly (`fleet.rollup`).
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.config import COMPACTION_MODES, Config, ConfigError, coerce
from inspector.model import Thread


@dataclass(frozen=True, slots=True)
class SweepRow:
    config: dict[str, Any]
    threads: int
    requests: int
    compactions: int
    failures: int
    prompt_tokens: int
    cache_read_tokens: int
    cache_breaks: int
    cost: float | None  # the known costs (threads without a price are counted in `unpriced_threads`)
    facts_lost: int | None = None
    baseline: bool = False  # the combination is the thread's own config
    summarization_cost: float | None = None  # the compactions' summarization calls, part of `cost`
    back_to_back: int = 0  # compactions right after the previous one
    unpriced_threads: int = 0  # threads whose cost is unknown (a model with no price), not in `cost`

    @property
    def cache_read_share(self) -> float | None:
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else None

    def to_json(self) -> dict[str, Any]:
        share = self.cache_read_share
        return {"config": dict(self.config), "compactions": self.compactions, "back_to_back": self.back_to_back,
                "failures": self.failures, "prompt_tokens": self.prompt_tokens,
                "cache_read_share": None if share is None else round(share, 4),
                "cache_breaks": self.cache_breaks, "cost": _dollars(self.cost),
                "summarization_cost": _dollars(self.summarization_cost),
                "unpriced_threads": self.unpriced_threads, "facts_lost": self.facts_lost}


def _dollars(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def parse_key(item: str) -> tuple[str, list[Any]]:
    """`K=V1,V2,...` -> (key, validated values); a one-line ConfigError naming the key otherwise."""
    key, sep, values = item.partition("=")
    key = key.strip()
    if not sep or not values.strip():
        raise ConfigError(f"--key expects KEY=V1,V2,...: got {item!r}")
    out = [coerce(key, v) for v in values.split(",") if v.strip()]
    if not out:
        raise ConfigError(f"--key {key} has no values")
    return key, out


MAX_COMBINATIONS = 1_000
"""Combinations replayed at most unless the caller allows more (each is a whole replay of the thread:
10,000 ran for minutes; 102 million were built in memory before the first one ran)."""

MANY_COMBINATIONS = 100
"""From this many, the CLI says how many it is about to replay."""


def combination_count(keys: Sequence[tuple[str, Sequence[Any]]]) -> int:
    return math.prod(len(values) for _, values in keys)


def combinations(keys: Sequence[tuple[str, Sequence[Any]]], limit: int = MAX_COMBINATIONS) -> list[dict[str, Any]]:
    """Every combination, the first key varying slowest, each key's values in the order given; a
    ConfigError (counted before any is built) when there are more than `limit`."""
    names = [k for k, _ in keys]
    if len(set(names)) != len(names):
        raise ConfigError(f"--key given twice: {', '.join(sorted({n for n in names if names.count(n) > 1}))}")
    count = combination_count(keys)
    if count > limit:
        sizes = " x ".join(f"{len(v):,}" for _, v in keys)
        raise ConfigError(f"--key values make {count:,} combinations ({sizes}); at most {limit:,} are replayed "
                          "(give fewer values, or raise --max-combinations)")
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(v for _, v in keys))]


def unread_keys(profile: str, combos: Sequence[Mapping[str, Any]]) -> list[str]:
    """The swept keys that `profile` does not read (every row is the same for them)."""
    from inspector.config import PROFILE_KEYS

    read = PROFILE_KEYS.get(profile, ())
    return [k for k in (combos[0] if combos else {}) if k not in read]


def _facts_lost(thread: Thread, replay, memo: Any = None) -> int:
    """Facts of the compacted spans that the replay's summaries did not keep (`pipeline.survival`);
    `memo`: a `survival.LossMemo` the thread's other values filled (they share the compactions they
    agree on)."""
    from inspector.pipeline.survival import compaction_losses

    return sum(len(loss.lost()) for loss in compaction_losses(thread, replay, memo=memo))


def _loss_memo() -> Any:
    from inspector.pipeline.survival import LossMemo

    return LossMemo()


def sweep_thread(thread: Thread, base: Config, combos: Sequence[Mapping[str, Any]], *,
                 compactions: str = "decide", on_row: Callable[[SweepRow], None] | None = None,
                 jobs: int = 1, own_process: bool = False) -> list[SweepRow]:
    """One row per combination, in order. `compactions`: `recorded` follows the thread's recorded
    compactions, `decide` lets the config decide every one (as `simulate --set` does).

    `jobs` > 1: the messages' facts are extracted once, in `jobs` forked processes, while this one
    counts the thread's tokens in a first replay (of the first combination); the other combinations
    are replayed in `jobs` processes forked then, which inherit both, while this one judges the first
    one's compactions; one process where the platform cannot fork.

    `own_process`: the process runs this sweep alone (the CLI), so the garbage collector may be
    settled for it (`gcpolicy`): a long thread and what its first replay leaves for the others
    (token counts, the summaries' features, the facts) are frozen out of the full collections, which
    otherwise walk them again every value or two (half of a value's time on the bench thread)."""
    if compactions not in COMPACTION_MODES:
        raise ConfigError(f"--compactions must be one of {', '.join(COMPACTION_MODES)}: got {compactions!r}")
    from inspector.gcpolicy import LongLivedObjects

    collector = LongLivedObjects()
    settle = (lambda: collector.settle(len(thread.messages))) if own_process and len(combos) > 1 else (lambda: False)
    try:
        return _sweep(thread, base, combos, compactions, on_row, jobs, settle)
    finally:
        collector.release()


def _sweep(thread: Thread, base: Config, combos: Sequence[Mapping[str, Any]], compactions: str,
           on_row: Callable[[SweepRow], None] | None, jobs: int, settle: Callable[[], bool]) -> list[SweepRow]:
    memo = _loss_memo()
    if jobs <= 1 or len(combos) < 3 or not _can_fork():
        settle()  # the thread itself
        rows = []
        for combo in combos:
            rows.append(sweep_row(thread, base, combo, compactions, loss_memo=memo))
            if len(rows) == 1:
                settle()  # and what the first value left for the others
            if on_row is not None:
                on_row(rows[-1])
        return rows
    import multiprocessing

    from inspector.pipeline.facts import remember
    from inspector.service import run_replay

    global _FORKED
    context = multiprocessing.get_context("fork")
    workers = min(jobs, len(combos) - 1)
    _FORKED = (thread, base, tuple(combos), compactions, memo)
    try:
        # The facts of the thread's messages (what costs most the first time, the same for every
        # value) in the workers while this process counts the thread's tokens in a first replay.
        with _frozen(settle), context.Pool(workers, initializer=default_signals) as pool:
            size = -(-len(thread.messages) // (2 * workers)) or 1
            slices = [(i, min(i + size, len(thread.messages))) for i in range(0, len(thread.messages), size)]
            found = pool.map_async(_forked_facts, slices)
            replay = run_replay(thread, base.updated(dict(combos[0])), compactions=compactions)
            replay.cost_totals()
            for (lo, hi), facts in zip(slices, found.get(), strict=True):
                remember(thread.messages[lo:hi], facts)
        # The other values in workers forked now (they inherit the counts, the summaries' features and
        # the facts), while this process judges the first value's compactions.
        with _frozen(settle), context.Pool(workers, initializer=default_signals) as pool:
            others = pool.imap(_forked_row, range(1, len(combos)))
            rows = [sweep_row(thread, base, combos[0], compactions, loss_memo=memo, replay=replay)]
            if on_row is not None:
                on_row(rows[0])
            for row in others:
                rows.append(row)
                if on_row is not None:
                    on_row(row)
    finally:
        _FORKED = None
    return rows


@contextlib.contextmanager
def _frozen(settle: Callable[[], bool]) -> Iterator[None]:
    """What this process holds moved out of the collector's sight while forked workers run (their
    full collections would otherwise walk, and so copy page by page, every object they inherited):
    `settle()` where it applies (it stays settled after), else frozen for the workers' time only."""
    if settle():
        yield
        return
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def default_signals() -> None:
    """A forked worker's SIGTERM and SIGHUP back to their default: the command's own handlers (which
    end it as an error would, `inspector.cli.root`) would turn the pool's terminate into a Python
    exit inside a copy of a threaded process, which can wait forever on a lock a thread held at the
    fork."""
    import signal

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


_FORKED: tuple | None = None
"""What `sweep_thread`'s forked processes replay (set before the fork, so nothing is pickled but
the combination's index and the row)."""


def _forked_facts(span: tuple[int, int]) -> list:
    from inspector.pipeline.facts import keyed_facts

    assert _FORKED is not None
    return keyed_facts(_FORKED[0].messages[span[0]:span[1]])


def _forked_row(index: int) -> SweepRow:
    assert _FORKED is not None
    thread, base, combos, compactions, memo = _FORKED
    return sweep_row(thread, base, combos[index], compactions, loss_memo=memo)


def _can_fork() -> bool:
    import multiprocessing
    import sys

    return sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods()


def sweep_row(thread: Thread, base: Config, combo: Mapping[str, Any], compactions: str, *,
              loss_memo: Any = None, replay: Any = None) -> SweepRow:
    """The row of one combination: `base` with `combo`, replayed (`loss_memo`: `_facts_lost`'s;
    `replay`: that combination's replay, where the caller has it already)."""
    from inspector.pipeline.accounting import back_to_back
    from inspector.service import run_replay

    config = base.updated(dict(combo))
    if replay is None:
        replay = run_replay(thread, config, compactions=compactions)
    totals = replay.cost_totals()
    timeline = replay.timeline
    if totals is None:
        return SweepRow(dict(combo), 1, len(timeline), sum(1 for a in timeline if a.compaction is not None),
                        sum(1 for a in timeline if a.failed),
                        sum(a.budget.prompt_tokens for a in timeline if not a.failed), 0, 0, None,
                        _facts_lost(thread, replay, loss_memo), config == base, None, back_to_back(timeline), 1)
    unpriced = totals.cost is None
    return SweepRow(dict(combo), 1, totals.requests, totals.compactions, totals.failures,
                    totals.prompt_tokens, totals.cache_read_tokens, totals.cache_breaks, totals.cost,
                    _facts_lost(thread, replay, loss_memo), config == base,
                    None if unpriced else totals.summarization_cost, totals.back_to_back, int(unpriced))


METRICS: dict[str, str] = {
    "cost": "cost ($)",
    "summarization_cost": "summarization calls ($)",
    "prompt_tokens": "billed prompt tokens",
    "cache_read_share": "cache-read share",
    "cache_breaks": "cache breaks",
    "compactions": "compactions",
    "failures": "failed requests",
    "facts_lost": "facts lost",
}


def value_label(key: str, value: Any) -> str:
    """A swept value as the table says it: `0 (unset)` where the value means the key is not set."""
    from inspector.config import KEY_SPECS

    spec = KEY_SPECS.get(key)
    return f"{value} (unset)" if spec is not None and spec.unset is not None and value == spec.unset else str(value)


def plot_x(key: str, value: Any) -> float | None:
    """Where a swept value goes on the plot's x axis: the value itself; an unset value where it behaves
    (a percentage override's 0 at 100), or None (drawn apart from the line) where nothing behaves so."""
    from inspector.config import KEY_SPECS

    spec = KEY_SPECS.get(key)
    if spec is not None and spec.unset is not None and value == spec.unset:
        return None if spec.unset_behaves_as is None else float(spec.unset_behaves_as)
    return float(value)


def metric(row: SweepRow, name: str) -> float | None:
    """The value of one of `METRICS` in a row (None where unknown)."""
    value = row.cache_read_share if name == "cache_read_share" else getattr(row, name)
    return None if value is None else float(value)


def default_values(key: str, value: Any, count: int = 10) -> list[Any]:
    """A range to sweep around the current value: ratios in (0, 1], counts and sizes from half to double."""
    from inspector.config import KEY_SPECS

    spec = KEY_SPECS[key]
    if spec.type is float and spec.check(0.5) is None and spec.check(1.5) is not None:  # a ratio in (0, 1]
        lo = max(0.05, round(value - 0.25, 2))
        hi = min(1.0, round(value + 0.2, 2))
        step = (hi - lo) / (count - 1)
        out = sorted({round(lo + i * step, 3) for i in range(count)} | {value})
    elif spec.type is int and spec.check(100) is None and spec.check(101) is not None:  # a percentage
        out = sorted({value, *range(50, 100, 5)})
    elif spec.type is int:
        lo, hi = max(0, value // 2), max(value * 2, value + count - 1)
        step = max(1, (hi - lo) // (count - 1))
        out = sorted({lo + i * step for i in range(count)} | {value})
    elif spec.type is float:
        out = sorted({round(value * (0.5 + i * (1.5 / (count - 1))), 3) for i in range(count)} | {value})
    else:
        raise ConfigError(f"{key} is not a number: a sweep needs numeric values")
    return [v for v in out if spec.check(v) is None]


HEADER = ("COMPACTIONS", "BACK-TO-BACK", "FAILURES", "PROMPT TOKENS", "CACHE READ", "BREAKS", "COST",
          "SUMMARIZATION", "FACTS LOST")
"""The text table's columns after the keys (`iter_table`'s cells, then the baseline mark)."""


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.2f}"


def iter_table(rows: Sequence[SweepRow]) -> Iterator[tuple[str, ...]]:
    """The text table's cells, one tuple per row (keys first, then `HEADER`, then the baseline mark)."""
    for row in rows:
        share = row.cache_read_share
        yield (*(value_label(k, v) for k, v in row.config.items()), str(row.compactions), str(row.back_to_back),
               str(row.failures), f"{row.prompt_tokens:,}", "-" if share is None else f"{share:.1%}",
               str(row.cache_breaks), _money(row.cost), _money(row.summarization_cost),
               "-" if row.facts_lost is None else str(row.facts_lost), "*" if row.baseline else "")


def footnotes(rows: Sequence[SweepRow]) -> list[str]:
    """What the table's figures leave out: the threads without a price, the back-to-back compactions."""
    out: list[str] = []
    unpriced = max((r.unpriced_threads for r in rows), default=0)
    if unpriced:
        out.append(f"{unpriced} thread{'s' if unpriced != 1 else ''} without a price (a model the price table "
                   f"does not list, or no cache model): not in COST")
    if any(r.back_to_back for r in rows):
        out.append("BACK-TO-BACK: compactions right after the previous one, each paying its summarization call")
    return out
