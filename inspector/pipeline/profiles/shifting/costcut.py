"""`truncate_costs`: the shifting profile's truncate decided on numbers alone.

Costs counted once, int group labels, protected flags in; position ranges out. A few
C-level passes when every group is one run of adjacent blocks (the usual prompt), a plain
loop otherwise. `blocks.shift_context` uses it for the default removal order.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, compress, repeat

_SCAN_CHUNK = 512  # blocks summed at a time while looking for the cut


@dataclass(frozen=True, slots=True)
class CostCut:
    """What `truncate_costs` decided, by position.

    `excluded` holds half-open position ranges `(start, stop)` in the order removed (every
    position in them is excluded, nothing else is); `total` is the kept cost. With groups in
    runs the ranges are in prompt order and the kept positions are `[0, cut)` minus the
    excluded ranges, then everything from `cut` on.
    """

    excluded: tuple[tuple[int, int], ...]
    total: int
    budget: int

    @property
    def fits(self) -> bool:
        return self.total <= self.budget

    def kept_of(self, items: Sequence) -> list:
        """`items` (one per position) at the kept positions, in prompt order, by C-level slices."""
        out: list = []
        at = 0
        for start, stop in sorted(self.excluded):
            out += items[at:start]
            at = stop
        out += items[at:]
        return out

    def excluded_of(self, items: Sequence) -> list:
        """`items` at the excluded positions, in the order removed."""
        out: list = []
        for start, stop in self.excluded:
            out += items[start:stop]
        return out

    def excluded_positions(self) -> chain[int]:
        return chain.from_iterable(map(range, *zip(*self.excluded, strict=True))) if self.excluded else chain()


def truncate_costs(
    costs: Sequence[int], groups: Sequence[int], protected: Sequence[bool], budget: int, *, total: int | None = None
) -> CostCut:
    """`shift_context` on numbers: the oldest unprotected groups go until the rest fits `budget`.

    `costs[i]` is block i's full cost (counted beforehand), `groups[i]` an int label (blocks
    sharing a label are one group; the index of the group's first block is the natural
    label), `protected[i]` whether block i can never go (its whole group then stays).
    Positions are the blocks' identities: the same result as the reference `shift_context` on
    blocks with unique keys and those costs, groups and protections.

    When the labels never decrease along the prompt (every group is one run of adjacent
    blocks, the usual prompt) this is a few C-level passes and O(log n) per protected group:
    removing the oldest groups until the rest fits is cutting the prompt after the run of the
    first block at which the cumulative removable cost reaches `total - budget`; the
    protected runs before the cut stay. Otherwise a plain loop over the blocks does it.
    """
    if total is None:
        total = sum(costs)
    if total <= budget:
        return CostCut((), total, budget)
    if not isinstance(groups, list):
        groups = list(groups)
    if groups != sorted(groups):
        return _truncate_costs_loop(costs, groups, protected, budget, total)
    n = len(costs)
    need = total - budget
    held = sorted((bisect_left(groups, g), bisect_right(groups, g)) for g in set(compress(groups, protected)))
    weights = list(costs)  # removable cost per position
    removable = total
    for start, stop in held:
        removable -= sum(weights[start:stop])
        weights[start:stop] = repeat(0, stop - start)
    if removable < need:
        cut, removed = n, removable  # everything removable goes and it still does not fit
    else:
        # The first position p whose cumulative removable cost reaches `need`: whole chunks
        # summed until the one holding p, then a cumulative sum inside it.
        before = 0
        at = 0
        while True:
            chunk_sum = sum(weights[at:at + _SCAN_CHUNK])
            if before + chunk_sum >= need:
                break
            before += chunk_sum
            at += _SCAN_CHUNK
        cumulative = list(accumulate(weights[at:at + _SCAN_CHUNK], initial=before))
        p = at + bisect_left(cumulative, need, 1) - 1
        cut = bisect_right(groups, groups[p], p)  # the end of p's run
        removed = cumulative[p + 1 - at] + sum(weights[p + 1:cut])
    excluded: list[tuple[int, int]] = []
    at = 0
    for start, stop in held:
        if start >= cut:
            break
        if at < start:
            excluded.append((at, start))
        at = stop
    if at < cut:
        excluded.append((at, cut))
    return CostCut(tuple(excluded), total - removed, budget)


def _truncate_costs_loop(
    costs: Sequence[int], groups: Sequence[int], protected: Sequence[bool], budget: int, total: int
) -> CostCut:
    """`truncate_costs` when a group is split over several runs: groups go in the order of
    their first block, each whole (its members in prompt order)."""
    members: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    held = set(compress(groups, protected))
    excluded: list[tuple[int, int]] = []
    for g, positions in members.items():  # dicts keep insertion order: by first block
        if total <= budget:
            break
        if g in held:
            continue
        for i in positions:
            total -= costs[i]
            excluded.append((i, i + 1))
    return CostCut(tuple(excluded), total, budget)


def group_labels(groups: Sequence[str]) -> list[int]:
    """Int group labels for `truncate_costs`: the position of each group's first block."""
    first = dict(zip(reversed(groups), range(len(groups) - 1, -1, -1), strict=True))
    return list(map(first.__getitem__, groups))
