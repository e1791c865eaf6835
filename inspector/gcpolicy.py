"""Keeping the garbage collector's full passes off the edit path of long threads.

A loaded 10,000-message thread, its caches and Textual's widgets are some 150,000 tracked
objects that live as long as the thread is shown. CPython considers a full collection,
which walks every one of them, after every 10 collections of the middle generation; a
config edit on such a thread makes about 30,000 objects that live until the next edit,
so every edit or two paid a 100-300 ms pass on top of its own work.

Once a long thread is shown, `settle()` collects once, moves the survivors to the
permanent generation (`gc.freeze()`), so full passes walk only what later edits made,
and considers full passes ten times less often. `release()` (the next thread, the app's
exit) undoes both, so nothing stays uncollectable longer than its thread is shown.
Measured with `python -m bench.bench_tui` (bench/RESULTS.md).
"""

from __future__ import annotations

import gc

LONG_THREAD_MESSAGES = 2_000
"""Below this a replay makes too few objects to bring on full collections: nothing to settle."""

FULL_PASS_EVERY = 100
"""Middle-generation collections between two full ones while a long thread is shown (CPython: 10)."""


_SETTLED = [False]  # whether a `LongLivedObjects` holds the process's long-lived objects frozen


def settled() -> bool:
    """Whether the process's long-lived objects are frozen (`LongLivedObjects.settle`): a collection then
    walks only what was made since (`gc.get_freeze_count()` walks every frozen object to count them)."""
    return _SETTLED[0]


class LongLivedObjects:
    """The app's use of `gc.freeze()` and the collector's thresholds (process-wide, like the collector)."""

    def __init__(self) -> None:
        self._thresholds: tuple[int, int, int] | None = None

    @property
    def settled(self) -> bool:
        return self._thresholds is not None

    def settle(self, messages: int) -> bool:
        """After a thread of `messages` messages is shown: collect, freeze the survivors."""
        self.release()
        if messages < LONG_THREAD_MESSAGES:
            return False
        gc.collect()
        gc.freeze()
        _SETTLED[0] = True
        self._thresholds = gc.get_threshold()
        young, middle, old = self._thresholds
        gc.set_threshold(young, middle, max(old, FULL_PASS_EVERY))
        return True

    def release(self) -> None:
        if self._thresholds is not None:
            gc.unfreeze()
            _SETTLED[0] = False
            gc.set_threshold(*self._thresholds)
            self._thresholds = None


class CollectionPause:
    """No generational collection while entered, where the process's long-lived objects are not frozen
    (`settled`) and the collector is on: for work that makes hundreds of thousands of objects that live
    for a while and no reference cycles (an import: each file's decoded records, its messages, rows held
    until their batch is committed), whose collections would walk them again and again (the middle and
    full ones too, as they pile up). `collect()` at a point where that work's objects are gone (a
    committed batch) collects what was made since the pause began and is still alive (everything made
    in a pause stays in the youngest generation: nothing else is walked), so reference cycles the work
    did make wait at most until then. Where the objects are frozen, a collection walks only what the
    work makes: nothing is paused there, as in the shifting replay. Not reentrant."""

    def __init__(self) -> None:
        self.active = False

    def __enter__(self) -> CollectionPause:
        self.active = not settled() and gc.isenabled()
        if self.active:
            gc.disable()
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.active:
            self.active = False
            gc.enable()

    def collect(self) -> None:
        if self.active:
            gc.collect(0)
