"""Per-thread facts that no config key changes, remembered across the replays of one thread.

A config edit replays the same thread again; what a replayer derives from the thread alone
(message indices, turns, tool groups, token costs under the counter) is the same every time.
`remembered(counter, name, thread, build)` keeps `build()`'s value on the counter (costs depend on
it), keyed by the thread object itself: a `Thread` is frozen, so the same object has the same
messages, requests, system prompt and tools. A few threads per name are kept (the shown one and
the one before it); the values are shared, so callers must not change them.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Any, TypeVar

T = TypeVar("T")
KEEP = 4  # threads remembered per name and counter


def remembered(counter: Any, name: str, thread: Any, build: Callable[[], T]) -> T:
    """`build()` for `thread`, computed once per counter and thread object."""
    memo = counter.__dict__.setdefault("_thread_memo_" + name, {})
    hit = memo.get(id(thread))
    if hit is not None and hit[0] is thread:
        return hit[1]
    value = build()
    if len(memo) >= KEEP:
        memo.clear()
    memo[id(thread)] = (thread, value)
    return value


def label_columns(counter: Any, labels: list[tuple[str, str, str]]) -> tuple[list[str], list[str], list[str]]:
    """The (id, role, kind) labels of a thread's messages as three columns, for building block rows
    in C-level maps (`labels`: a replayer's per-thread table, the same list on every replay)."""
    return remembered(counter, "label_columns", labels, lambda: (
        list(map(itemgetter(0), labels)), list(map(itemgetter(1), labels)), list(map(itemgetter(2), labels))))
