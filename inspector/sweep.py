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
import os
import selectors
import signal
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.config import COMPACTION_MODES, Config, ConfigError, coerce
from inspector.forks import can_fork as _can_fork
from inspector.forks import child_signals, ending_held
from inspector.forks import death as _death
from inspector.forks import frames as _frames
from inspector.forks import send as _send
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

    `jobs` > 1: the messages' facts are extracted once, in `jobs - 1` forked children, while this
    process counts the thread's tokens in a first replay (of the first combination), after which it
    extracts, from the end, what the children have not sent yet, until they meet; every
    combination is then replayed in `jobs` children forked after it, which inherit the counts, the
    facts and the first replay (its row reuses it); this process only reads their pipes and hands
    the rows to `on_row` in order (`_Children`: plain forks, no pool, no lock shared with them). A
    child that fails or dies is a `ChildError` naming its value. One process where the platform
    cannot fork.

    `own_process` (`jobs` 1): the process runs this sweep alone (the CLI), so the garbage collector
    may be settled for it (`gcpolicy`): a long thread and what its first replay leaves for the others
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
    # Every module a child runs imported here, before any fork (an import in a child could wait on
    # a lock another thread of this process held at the fork).
    from inspector.pipeline.accounting import back_to_back  # noqa: F401
    from inspector.pipeline.facts import keyed_facts, remember
    from inspector.pipeline.survival import compaction_losses  # noqa: F401
    from inspector.service import run_replay

    messages = thread.messages
    rows: list[SweepRow | None] = [None] * len(combos)
    reported = [0]

    def take_row(index: int, row: SweepRow) -> None:
        rows[index] = row
        while reported[0] < len(rows) and rows[reported[0]] is not None:  # in order, as one process gives them
            if on_row is not None:
                on_row(rows[reported[0]])
            reported[0] += 1

    with _frozen():
        # The facts of the thread's messages (what costs most the first time, the same for every value)
        # in `jobs - 1` children while this process counts the thread's tokens in a first replay (one
        # process a core: a third would only slow the replay down); then this process takes its share
        # of what is left (`_share_facts`).
        facts_jobs = max(1, jobs - 1)
        size = -(-len(messages) // facts_jobs) or 1
        spans = [(lo, min(lo + size, len(messages))) for lo in range(0, len(messages), size)]

        def facts_work(send: Callable[[tuple], None], span: tuple[int, int]) -> None:
            for lo in range(span[0], span[1], FACTS_CHUNK):
                hi = min(lo + FACTS_CHUNK, span[1])
                send(("facts", lo, hi, keyed_facts(messages[lo:hi])))

        with _Children() as children:
            for span in spans:
                children.start(facts_work, span, f"the facts of messages {span[0]:,}-{span[1]:,}",
                               expect=0, pipe_size=FACTS_PIPE_SIZE)
            replay = run_replay(thread, base.updated(dict(combos[0])), compactions=compactions)
            replay.cost_totals()
            _share_facts(messages, spans, children, keyed_facts, remember)
        # Every value in `jobs` children forked now, each given its values before the fork (every
        # `jobs`-th, so the rows come in about in order): they inherit the counts, the summaries'
        # features, the facts and the first value's replay (which its row reuses).
        gc.freeze()

        def rows_work(send: Callable[[tuple], None], indexes: list[int]) -> None:
            for index in indexes:
                send(("row", index, _child_row(thread, base, combos[index], compactions, memo,
                                               replay if index == 0 else None)))

        with _Children() as children:
            for k in range(min(jobs, len(combos))):
                indexes = list(range(k, len(combos), jobs))
                children.start(rows_work, indexes, lambda done, i=indexes: _value_name(combos[_first_missing(i, done)]),
                               expect=len(indexes))
            for _kind, index, row in children.results():
                take_row(index, row)
    assert reported[0] == len(rows)
    return rows  # type: ignore[return-value]


def _child_row(thread: Thread, base: Config, combo: Mapping[str, Any], compactions: str, memo: Any,
               replay: Any) -> SweepRow:
    """One value's row in a child (a seam for the tests)."""
    return sweep_row(thread, base, combo, compactions, loss_memo=memo, replay=replay)


def _value_name(combo: Mapping[str, Any]) -> str:
    return "the value " + ", ".join(f"{k}={v}" for k, v in combo.items())


def _first_missing(indexes: list[int], done: int) -> int:
    return indexes[min(done, len(indexes) - 1)]


FACTS_CHUNK = 250
"""Messages per message of a facts child, and per step of this process's share."""

FACTS_PIPE_SIZE = 1 << 20
"""A facts child's pipe (Linux's default most an unprivileged process may ask): the facts it sends
during the first replay, which this process reads only after it, fill it before the child waits."""


def _share_facts(messages: Sequence[Any], spans: list[tuple[int, int]], children: _Children,
                 keyed_facts: Callable, remember: Callable) -> None:
    """Every message's facts known in this process: each span's from its child, which goes from the
    span's start, and from this process, which goes from the span's end (the span with most left
    first) until the two meet. The children's messages are read as they come, never waited for: a
    child slowed down (or one that had not started) leaves more to this process, one done first
    leaves it nothing. The children still running are ended by the caller's `with`."""
    if not spans:
        return
    start = {span: span[0] for span in spans}  # what the child has sent: [span start, start)
    end = {span: span[1] for span in spans}  # what this process has done: [end, span end)
    pieces: dict[int, tuple[int, list]] = {}
    while True:
        for _kind, lo, hi, facts in children.ready():
            pieces[lo] = (hi, facts)
            remember(messages[lo:hi], facts)
        for span in spans:
            while start[span] in pieces and start[span] < span[1]:
                start[span] = pieces.pop(start[span])[0]
        left = max(spans, key=lambda sp: end[sp] - start[sp])
        if end[left] <= start[left]:
            return
        lo = max(start[left], end[left] - FACTS_CHUNK)
        keyed_facts(messages[lo:end[left]])  # remembered as they are found
        end[left] = lo


@contextlib.contextmanager
def _frozen() -> Iterator[None]:
    """What this process holds moved out of the collector's sight while forked children run: their full
    collections would otherwise walk (and so copy, page by page) every object they inherited, and this
    process's walk the loaded thread. A freeze, not a collection first: that alone is a walk of it."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class ChildError(RuntimeError):
    """A sweep child failed (an exception, reported through its pipe) or died (a signal, an exit)."""


class _Children:
    """Plain `os.fork()` children, each given its work before the fork and writing its pickled results
    to its own pipe: no lock is shared with this process or between children, no queue, no thread, so
    nothing a thread of this process held at the fork (an xdist worker's, a logging handler's) is ever
    waited on. A child only computes, pickles and `os.write`s, and leaves by `os._exit` whatever
    happens (an exception is sent as an error first). `results()` reads every pipe as it fills
    (`selectors`), reaps each child (`os.waitpid`) and raises a one-line `ChildError` naming the work
    of one that failed or died. On the way out (the results read, an error, SIGINT, SIGTERM) every
    child still running is killed by its pid and reaped: nothing is left behind."""

    def __init__(self) -> None:
        self._children: dict[int, list] = {}  # read fd -> [pid, name, buffer, messages, expected]

    def __enter__(self) -> _Children:
        return self

    def start(self, work: Callable[..., None], arg: Any, name: str | Callable[[int], str], *,
              expect: int = 1, pipe_size: int | None = None) -> None:
        # a Ctrl-C from the pipe's making to the child's registration is held (`ending_held`): it cannot
        # leave a child this process does not know of, and kill on the way out
        with ending_held() as held:
            read, write = os.pipe()
            if pipe_size is not None:  # Linux: a pipe that holds more before the child's write waits
                with contextlib.suppress(ImportError, OSError, AttributeError):
                    import fcntl

                    fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, pipe_size)
            pid = os.fork()
            if pid == 0:  # the child: nothing but the work, pickle and os.write (no lock another thread holds)
                code = 1
                try:
                    os.close(read)
                    for fd in [fd for fd in self._children]:
                        os.close(fd)
                    child_signals()  # SIGINT ignored: the parent ends its children itself
                    signal.pthread_sigmask(signal.SIG_SETMASK, held)
                    try:
                        work(lambda message: _send(write, message), arg)
                        code = 0
                    except BaseException as exc:  # noqa: BLE001  (reported, then the child leaves)
                        _send(write, ("error", f"{type(exc).__name__}: {exc}"))
                finally:
                    os._exit(code)
            os.close(write)
            self._children[read] = [pid, name, bytearray(), 0, expect]

    def results(self) -> Iterator[tuple]:
        """Every child's messages as they come (each child's in its order); a `ChildError` at the
        first child that fails or dies."""
        with selectors.DefaultSelector() as selector:
            for fd in self._children:
                selector.register(fd, selectors.EVENT_READ)
            while selector.get_map():
                for key, _ in selector.select():
                    yield from self._take(key.fd, selector)

    def ready(self) -> list[tuple]:
        """The messages the children have sent so far, without waiting for more (what their pipes hold
        now, each child's in its order); a `ChildError` as in `results()`."""
        out: list[tuple] = []
        with selectors.DefaultSelector() as selector:
            for fd in self._children:
                selector.register(fd, selectors.EVENT_READ)
            while selector.get_map():
                events = selector.select(0)
                if not events:
                    break
                for key, _ in events:
                    out.extend(self._take(key.fd, selector))
        return out

    def _take(self, fd: int, selector: selectors.BaseSelector) -> Iterator[tuple]:
        """What one read of a readable pipe completes; at its end, the child reaped (a `ChildError`
        where it failed, died or sent fewer messages than expected)."""
        child = self._children[fd]
        chunk = os.read(fd, 1 << 20)
        if chunk:
            child[2] += chunk
            for message in _frames(child[2]):
                if message[0] == "error":
                    raise ChildError(f"sweep: {self._name(child)} failed: {message[1]}")
                child[3] += 1
                yield message
            return
        selector.unregister(fd)
        os.close(fd)
        del self._children[fd]
        _, status = os.waitpid(child[0], 0)
        if child[3] < child[4] or status != 0:
            raise ChildError(f"sweep: the process computing {self._name(child)} {_death(status)}")

    @staticmethod
    def _name(child: list) -> str:
        name = child[1]
        return name if isinstance(name, str) else name(child[3])

    def __exit__(self, *_exc: object) -> None:
        for fd, child in self._children.items():
            with contextlib.suppress(ProcessLookupError):
                os.kill(child[0], signal.SIGKILL)
            os.close(fd)
        for child in self._children.values():
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child[0], 0)
        self._children.clear()


def default_signals() -> None:
    """A forked worker's SIGTERM and SIGHUP back to their default: the command's own handlers (which
    end it as an error would, `inspector.cli.root`) would turn the pool's terminate into a Python
    exit inside a copy of a threaded process, which can wait forever on a lock a thread held at the
    fork."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


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
