"""What moved between two replays of one thread: compactions, failures and block statuses.

Pure: takes two `Simulation`s (the baseline and a what-if replay) and returns frozen dataclasses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter, ne
from typing import Any

from inspector.frozen import fast_frozen_init
from inspector.model import is_manual_summary
from inspector.pipeline.accounting import billed_prompt_tokens
from inspector.pipeline.audit import BlockStatus, RequestAudit, Simulation
from inspector.pipeline.facts import KINDS
from inspector.pipeline.survival import OPAQUE, CompactionLoss, survival_table


@dataclass(frozen=True, slots=True)
class CompactionMove:
    """The n-th automatic compaction of the thread in each replay (None where that replay has fewer), or,
    `manual`, the user's own compaction (Claude Code's /compact) before one request, which both replays
    make where it happened: paired by that request, not by rank, so an automatic compaction that moves
    before it is never told as the manual one moving (a manual one in one replay only: new or gone)."""

    ordinal: int  # 1-based, among the automatic compactions (among the manual ones where `manual`)
    base_index: int | None
    new_index: int | None
    manual: bool = False

    @property
    def shift(self) -> int | None:
        """Requests later (> 0) or earlier (< 0) than the baseline; None when added or removed."""
        if self.base_index is None or self.new_index is None:
            return None
        return self.new_index - self.base_index


@fast_frozen_init  # a profile switch on a long thread changes every block of the selected request
@dataclass(frozen=True, slots=True)
class BlockChange:
    request_index: int
    message_id: str
    before: str
    after: str


# How the diff names the facts of each kind.
LOSS_NOUNS = {
    "path": ("file path", "file paths"), "command": ("command", "commands"), "error": ("error", "errors"),
    "identifier": ("identifier", "identifiers"), "url": ("URL", "URLs"), "number": ("number", "numbers"),
    "instruction": ("correction", "corrections"),
}


@dataclass(frozen=True, slots=True)
class LossChange:
    """Facts of one kind that the compactions lost, in the baseline and in the what-if."""

    kind: str
    before: int
    after: int

    def phrase(self) -> str:
        if self.kind == OPAQUE_KIND:
            return f"facts lost not compared: {OPAQUE}"
        delta = self.after - self.before
        noun = LOSS_NOUNS[self.kind][abs(delta) != 1]
        if self.before == 0:
            return f"{delta} {noun} lost"
        return f"{delta} more {noun} lost" if delta > 0 else f"{-delta} fewer {noun} lost"


OPAQUE_KIND = "opaque"  # a LossChange that says the loss cannot be compared


def diff_loss(base: Iterable[CompactionLoss], new: Iterable[CompactionLoss]) -> tuple[LossChange, ...]:
    """Kinds whose lost-fact count differs between two replays' compactions, in kind order. Where
    either side has a compaction whose summary cannot be read and the counts differ, one change of
    kind `OPAQUE_KIND` instead: an unknown fate compared with a known one is no number to give."""
    base, new = tuple(base), tuple(new)
    before, after = survival_table(base), survival_table(new)
    if before == after:
        return ()
    if not all(loss.summary_readable for loss in (*base, *new)):
        return (LossChange(OPAQUE_KIND, 0, 0),)
    return tuple(LossChange(str(k), before[k].lost, after[k].lost) for k in KINDS if before[k].lost != after[k].lost)


def edit_label(overrides: Mapping[str, Any]) -> str:
    """The config edit a diff is about, e.g. `context.compaction_threshold=0.6`."""
    return ", ".join(f"{key}={value}" for key, value in sorted(overrides.items()))


def loss_sentence(changes: Iterable[LossChange], label: str = "") -> str | None:
    """`threshold 0.6: 14 more file paths lost, 2 corrections lost`; None when nothing changed."""
    parts = [c.phrase() for c in changes]
    if not parts:
        return None
    return f"{label}: {', '.join(parts)}" if label else ", ".join(parts)


@dataclass(frozen=True, slots=True)
class SimulationDiff:
    compactions: tuple[CompactionMove, ...]
    failures_appeared: tuple[int, ...]
    failures_disappeared: tuple[int, ...]
    changed_blocks: dict[int, int]  # request index -> number of blocks whose status changed
    prompt_delta: dict[int, int]    # request index -> new prompt tokens - baseline prompt tokens
    cost: CostDelta | None = None   # billed prompt tokens, cache breaks and dollars, whole thread
    loss: tuple[LossChange, ...] = ()  # facts lost per kind, where it changed (set by the caller)
    loss_label: str = ""               # the edit the loss sentence names
    pricing: str = ""                  # said in place of the cost line while `cost` is not known yet

    @property
    def empty(self) -> bool:
        return (
            all(m.shift == 0 for m in self.compactions)
            and not self.failures_appeared
            and not self.failures_disappeared
            and not self.changed_blocks
            and not any(self.prompt_delta.values())
            and not self.loss
        )

    def lines(self, moves_shown: int | None = None) -> list[str]:
        """Human-readable sentences, one per change (1-based request numbers, as the UI shows them).

        `moves_shown`: list at most that many compaction moves, then one line counting the rest
        (an edit on a long thread can move hundreds). The cost line comes first."""
        out: list[str] = []
        if self.pricing:
            out.append(self.pricing)
        elif self.cost is not None and not self.cost.empty:
            out.append(self.cost.line())
        moved = [m for m in self.compactions if m.base_index is None or m.new_index is None or m.shift]
        # where the user compacted by hand, "compaction #2" would not say which: the automatic ones are named so
        automatic = "automatic " if any(m.manual for m in self.compactions) else ""
        for move in moved if moves_shown is None else moved[:moves_shown]:
            label = "manual compaction (/compact)" if move.manual else f"{automatic}compaction #{move.ordinal}"
            if move.base_index is None:
                out.append(f"{label}: new, before request {move.new_index + 1}")
            elif move.new_index is None:
                out.append(f"{label}: gone (was before request {move.base_index + 1})")
            else:
                when = "earlier" if move.shift < 0 else "later"
                out.append(
                    f"{label}: request {move.base_index + 1} -> {move.new_index + 1} ({abs(move.shift)} {when})"
                )
        if moves_shown is not None and len(moved) > moves_shown:
            out.append(f"… and {len(moved) - moves_shown:,} more compactions moved")
        if self.failures_appeared:
            out.append("failures appear at requests " + _numbers(self.failures_appeared))
        if self.failures_disappeared:
            out.append("failures disappear at requests " + _numbers(self.failures_disappeared))
        if self.changed_blocks:
            total = sum(self.changed_blocks.values())
            out.append(f"{total} block statuses changed across {len(self.changed_blocks)} requests")
        sentence = loss_sentence(self.loss, self.loss_label)
        if sentence:
            out.append(sentence)
        return out


@dataclass(frozen=True, slots=True)
class CostDelta:
    """What an edit does to the thread's bill: billed prompt tokens, cache breaks (by cause) and dollars."""

    base_prompt_tokens: int
    new_prompt_tokens: int
    base_breaks: dict[str, int]
    new_breaks: dict[str, int]
    base_cost: float | None
    new_cost: float | None
    base_break_cost: float | None
    new_break_cost: float | None

    @property
    def breaks_delta(self) -> int:
        return sum(self.new_breaks.values()) - sum(self.base_breaks.values())

    @property
    def cost_delta(self) -> float | None:
        return None if self.base_cost is None or self.new_cost is None else self.new_cost - self.base_cost

    @property
    def empty(self) -> bool:
        return (self.base_prompt_tokens == self.new_prompt_tokens and self.base_breaks == self.new_breaks
                and not self.cost_delta)

    def line(self) -> str:
        """ "-31% prompt tokens, +14 cache breaks (pruning +14), +$2.10" """
        parts: list[str] = []
        if self.base_prompt_tokens:
            change = (self.new_prompt_tokens - self.base_prompt_tokens) / self.base_prompt_tokens
            parts.append(f"{change:+.0%} prompt tokens")
        causes = sorted(self.base_breaks.keys() | self.new_breaks.keys())
        by_cause = ", ".join(f"{c} {self.new_breaks.get(c, 0) - self.base_breaks.get(c, 0):+d}" for c in causes
                             if self.new_breaks.get(c, 0) != self.base_breaks.get(c, 0))
        parts.append(f"{self.breaks_delta:+d} cache breaks" + (f" ({by_cause})" if by_cause else ""))
        if self.base_break_cost is not None and self.new_break_cost is not None and \
                self.new_break_cost != self.base_break_cost:
            parts.append(f"breaks cost {_dollars(self.new_break_cost - self.base_break_cost)}")
        delta = self.cost_delta
        parts.append("cost unknown (no price for the model)" if delta is None else _dollars(delta))
        return ", ".join(parts)


def _dollars(value: float) -> str:
    sign = "-" if value < 0 else "+"
    return f"{sign}${abs(value):,.2f}" if abs(value) >= 0.005 or value == 0 else f"{sign}${abs(value):.4f}"


def cost_delta_of_totals(base, new) -> CostDelta | None:
    """The bill's change from two replays' `accounting.ThreadCost` (None where either has none)."""
    if base is None or new is None:
        return None
    return CostDelta(base.prompt_tokens, new.prompt_tokens, dict(base.breaks_by_cause or {}),
                     dict(new.breaks_by_cause or {}), base.cost, new.cost, base.break_cost, new.break_cost)


def cost_delta(base: Simulation, new: Simulation) -> CostDelta | None:
    """The whole thread's bill in each replay; None when neither carries the cache model."""
    def tally(sim: Simulation):
        prompt, breaks, cost, break_cost, modelled = 0, {}, 0.0, 0.0, False
        for r in sim.requests:
            b = r.budget
            if b.cache_read_tokens is not None:
                modelled = True
            if not r.failed:
                prompt += billed_prompt_tokens(b)
            if b.cache_break is not None:
                breaks[b.cache_break.cause] = breaks.get(b.cache_break.cause, 0) + 1
                break_cost = None if break_cost is None or b.cache_break.cost is None else break_cost + b.cache_break.cost
            cost = None if cost is None or b.cost is None else cost + b.cost
        return modelled, prompt, breaks, cost, break_cost

    m1, p1, b1, c1, bc1 = tally(base)
    m2, p2, b2, c2, bc2 = tally(new)
    if not (m1 and m2):
        return None
    return CostDelta(p1, p2, b1, b2, c1, c2, bc1, bc2)


def _numbers(indices: tuple[int, ...], limit: int = 12) -> str:
    shown = ", ".join(str(i + 1) for i in indices[:limit])
    return shown + (f" (+{len(indices) - limit} more)" if len(indices) > limit else "")


def compaction_indices(sim: Simulation) -> tuple[int, ...]:
    return tuple(r.index for r in sim.requests if r.compaction is not None)


def compaction_moves(base: Simulation, new: Simulation) -> tuple[CompactionMove, ...]:
    """The automatic compactions paired by rank, then the manual ones (`CompactionMove.manual`) by the
    request they came before (one both replays make there: a shift of 0, not listed by `lines`)."""
    def split(sim: Simulation) -> tuple[list[int], list[int]]:
        automatic, manual = [], []
        for r in sim.requests:
            if r.compaction is not None:
                (manual if r.compaction.manual else automatic).append(r.index)
        return automatic, manual

    (base_a, base_m), (new_a, new_m) = split(base), split(new)
    moves = [CompactionMove(i + 1, base_a[i] if i < len(base_a) else None, new_a[i] if i < len(new_a) else None)
             for i in range(max(len(base_a), len(new_a)))]
    in_base, in_new = set(base_m), set(new_m)
    for rank, index in enumerate(sorted(in_base | in_new)):
        moves.append(CompactionMove(rank + 1, index if index in in_base else None, index if index in in_new else None,
                                    manual=True))
    return tuple(moves)


def failure_indices(sim: Simulation) -> tuple[int, ...]:
    return tuple(r.index for r in sim.requests if r.status == "failed")  # `failed`, without a property call each


def block_changes(base: RequestAudit, new: RequestAudit) -> list[BlockChange]:
    """Blocks of one request (by message id) whose status differs between the two replays."""
    aligned = _aligned_changes(base, new)
    if aligned is not None:
        return aligned
    before = {b.message_id: str(b.status) for b in base.blocks if b.message_id is not None}
    out: list[BlockChange] = []
    for block in new.blocks:
        if block.message_id is None:
            continue
        old = before.get(block.message_id)
        if old is not None and old != str(block.status):
            out.append(BlockChange(new.index, block.message_id, old, str(block.status)))
    return out


def _aligned_changes(base: RequestAudit, new: RequestAudit) -> list[BlockChange] | None:
    """`block_changes` in one pass when both replays list the same messages in the same order
    (they do for one request of one thread); None when they do not."""
    out: list[BlockChange] = []
    for old, block in zip(base.blocks, new.blocks):  # noqa: B905 - the longer one's tail is synthetic or new
        if old.message_id != block.message_id:
            return None
        if block.message_id is not None and old.status != block.status:
            out.append(BlockChange(new.index, block.message_id, str(old.status), str(block.status)))
    return out


_MESSAGE_ID = attrgetter("message_id")
_REQUEST_ID = attrgetter("request_id")
_STATUS = attrgetter("status")


def block_changes_shown(base: RequestAudit, new: RequestAudit, limit: int) -> tuple[int, list[BlockChange]]:
    """`len(block_changes(base, new))` and its first `limit` changes, without making the others
    (a profile switch on a long thread changes every block of the selected request): where both
    list the same messages in the same order, the statuses are compared at C level."""
    a, b = base.blocks, new.blocks
    n = min(len(a), len(b))
    ids = list(map(_MESSAGE_ID, b[:n]))
    if list(map(_MESSAGE_ID, a[:n])) != ids:
        every = block_changes(base, new)
        return len(every), every[:limit]
    before, after = list(map(_STATUS, a[:n])), list(map(_STATUS, b[:n]))
    changed = [i for i in compress(range(n), map(ne, before, after)) if ids[i] is not None]
    return len(changed), [BlockChange(new.index, ids[i], str(before[i]), str(after[i])) for i in changed[:limit]]


def status_moves(before: dict[str, int], after: dict[str, int]) -> int:
    """The fewest blocks that must have changed status to turn one count per status into the other."""
    moved = 0
    get = before.get
    for status, n in after.items():  # a loop, not a generator: once per changed request of every edit
        more = n - get(status, 0)
        if more > 0:
            moved += more
    return moved


def status_map_changes(before: Mapping[str, BlockStatus], after: Mapping[str, BlockStatus]) -> int:
    """How many blocks have another status in `after` than in `before`, maps of block -> status that
    leave out excluded blocks (a block in one map only was excluded in the other). Where neither map
    lists an excluded block, counted by set operations in C: a block in one map only is changed, and a
    block in both with two statuses gives two of the (block, status) pairs found in one map only."""
    if before == after:
        return 0
    excluded = BlockStatus.EXCLUDED
    if excluded in before.values() or excluded in after.values():  # listed as excluded: as in neither map
        return sum(1 for mid in before.keys() | after.keys() if before.get(mid, excluded) != after.get(mid, excluded))
    one_side = len(before.keys() ^ after.keys())
    return one_side + (len(before.items() ^ after.items()) - one_side) // 2


def diff_simulations(base: Simulation, new: Simulation, *, cost: bool = True) -> SimulationDiff:
    """What moved from `base` to `new`. `cost=False` leaves `cost` None, for a caller that has the
    replays' totals (`cost_delta_of_totals`) rather than priced timelines."""
    moves = compaction_moves(base, new)
    base_f, new_f = set(failure_indices(base)), set(failure_indices(new))
    changed: dict[int, int] = {}
    delta: dict[int, int] = {}
    olds, news = base.requests, new.requests
    if len(olds) == len(news) and list(map(_REQUEST_ID, olds)) == list(map(_REQUEST_ID, news)):
        pairs: Iterable[tuple[RequestAudit | None, RequestAudit]] = zip(olds, news, strict=True)  # one thread: the same requests
    else:
        by_id = {r.request_id: r for r in olds}
        pairs = ((by_id.get(r.request_id), r) for r in news)
    for old, req in pairs:
        if old is None:
            continue
        before_tokens, after_tokens = old.budget.prompt_tokens, req.budget.prompt_tokens
        if before_tokens != after_tokens:
            delta[req.index] = after_tokens - before_tokens
        before_statuses, after_statuses = old.stats.get("block_statuses"), req.stats.get("block_statuses")
        if before_statuses is not None and after_statuses is not None:
            # Replays that list their non-excluded blocks (shifting): compare those maps only.
            count = status_map_changes(before_statuses, after_statuses)
        elif not old.blocks or not req.blocks:
            # Timeline-level replays (long threads): blocks that changed status, from the counts
            # per status (exact when blocks move one way, as a config edit typically makes them).
            before, after = old.stats.get("block_counts"), req.stats.get("block_counts")
            if before is not None and before == after:
                continue  # fast path: most requests of an edit keep their counts
            # the counts as `block_counts()` gives them, without its copies
            count = status_moves(old.block_counts() if before is None else before,
                                 req.block_counts() if after is None else after)
        elif [b.status for b in old.blocks] == [b.status for b in req.blocks]:
            continue  # fast path: identical status sequences need no per-block work
        else:
            count = len(block_changes(old, req))
        if count:
            changed[req.index] = count
    return SimulationDiff(
        compactions=moves,
        failures_appeared=tuple(sorted(new_f - base_f)),
        failures_disappeared=tuple(sorted(base_f - new_f)),
        changed_blocks=changed,
        prompt_delta=delta,
        cost=cost_delta(base, new) if cost else None,
    )


def reproduced_compactions(recorded: list[int] | tuple[int, ...], placed: list[int] | tuple[int, ...],
                           tolerance: int = 1) -> int:
    """How many recorded compaction requests have a placed one within `tolerance` requests
    (each placed compaction matched once, in order)."""
    used: set[int] = set()
    done = 0
    for r in sorted(recorded):
        for p in sorted(placed):
            if p not in used and abs(p - r) <= tolerance:
                used.add(p)
                done += 1
                break
    return done


def reproduction(summaries, decided: tuple[RequestAudit, ...] | list[RequestAudit]) -> tuple[int, int] | None:
    """(reproduced, recorded): how many of the thread's recorded automatic compactions (manual ones
    are the user's, not the profile's to decide) a replay left to decide (`decided`) places within
    one request of where the agent compacted; None when none was recorded."""
    index = {r.request_id: r.index for r in decided}
    recorded = sorted(index[s.before_request_id] for s in summaries
                      if s.before_request_id in index and not is_manual_summary(s))
    if not recorded:
        return None
    placed = [r.index for r in decided if r.compaction is not None and not r.compaction.manual]
    return reproduced_compactions(recorded, placed), len(recorded)
