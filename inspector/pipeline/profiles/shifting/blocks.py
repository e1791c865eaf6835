"""The shifting profile: fit the conversation into `limit - response reserve` by removing
the oldest unprotected blocks, tool calls and their results as one group.

Source: seeds/context-shifting.txt; where it is silent, the public implementation
(Disya123/NeoTavern `apps/server/src/pipeline/contextShift.ts` and `promptPipeline.ts`),
ported, not copied. This module holds the pure stages (protected set, grouping,
`shift_context`) and `replay`; the strategies, their registry and the host guard live in
`strategies` and `guard`.

`shift_context` keeps a running total (each block counted once, a removal subtracts its
group's cost); its core is `truncate_costs`: the same decision on numbers alone (costs
counted once, int group labels, protected flags), a few C-level passes when every group is
one run. The replay itself is in `replayer` (blocks and costs built
once per thread, a linear-time path for truncate). The seed-literal oracles they are checked
against (recount the whole prompt after every removal; rebuild every request from scratch)
are in `tests/reference/shifting.py`.

Decisions where the seed is silent:
- The current input is the request's latest user message. The assistant and tool
  messages after it in the current turn are NOT protected (as in NeoTavern, where only the
  user input is pinned): they are ordinary history, but being the newest they go last.
- A required memory block is protected like a required lorebook entry (NeoTavern pins
  both; reason `protected_required_memory`).
- The thread's system prompt and the tool definitions are not blocks: they are always sent,
  so the blocks get `available - system prompt - tools` to share.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter, eq, is_not

from inspector.model import Kind, Message, Role, Summary, assign_turns, tool_groups
from inspector.pipeline.audit import Reason
from inspector.pipeline.profiles.shifting.costcut import group_labels, truncate_costs
from inspector.tokens import TokenCounter

OVERHEAD = 4  # tokens shifting adds per message (NeoTavern's per-message overhead)
SUMMARY_KIND = "summary"
PLUGIN_KIND = "plugin"
RETRIEVED_KINDS = (str(Kind.LOREBOOK), str(Kind.MEMORY))


@dataclass(frozen=True, slots=True)
class Block:
    """One block of the prompt as the shifter sees it.

    `key` is unique in a prompt: the message id, or a synthetic key for blocks the
    pipeline or a plugin adds (those have no `message`). `text` is what is counted and
    sent; a compressed block keeps its key and carries a shorter text. Blocks sharing a
    `group` are removed together. `protection` is why the block can never be removed
    (None when it can).
    """

    key: str
    role: str
    kind: str
    text: str
    group: str
    protection: Reason | None = None
    relevance: float | None = None
    manual_excluded: bool = False
    current_input: bool = False
    turn: int | None = None
    message: Message | None = field(default=None, compare=False, repr=False)

    @property
    def protected(self) -> bool:
        return self.protection is not None

    @property
    def message_id(self) -> str | None:
        return None if self.message is None else self.message.id

    @property
    def retrieved(self) -> bool:
        """A lorebook or memory block (what vector-recall ranks by relevance)."""
        return self.kind in RETRIEVED_KINDS


def synthetic_block(key: str, text: str, *, role: str = "system", kind: str = PLUGIN_KIND) -> Block:
    """A block with no message behind it (a summary, a plugin's addition); never protected."""
    return Block(key=key, role=role, kind=kind, text=text, group=key)


CountTokens = Callable[[Block], int]
"""Full cost of a block as sent: its text plus the per-message overhead."""

RemovalOrder = Callable[[Block, int], float]
"""Sort key for removal (lower goes first); gets the block and its index in the prompt."""


@dataclass(frozen=True, slots=True)
class ShiftResult:
    """What a shift (or a strategy) decided.

    `kept` is the prompt in order; `excluded` the removed blocks in the order removed;
    `truncated` the kept blocks that were compressed (their sent version). `reasons` maps
    the key of every excluded or truncated block to its reason. `covered` maps the key of
    each block a kept summary replaces to that summary block's key; `summaries` are the
    summaries those blocks carry.
    """

    kept: tuple[Block, ...]
    excluded: tuple[Block, ...]
    truncated: tuple[Block, ...] = ()
    diagnostics: tuple[str, ...] = ()
    reasons: Mapping[str, Reason] = field(default_factory=dict)
    total: int = 0
    budget: int = 0
    covered: Mapping[str, str] = field(default_factory=dict)
    summaries: tuple[Summary, ...] = ()
    strategy: str = "truncate"

    @property
    def fits(self) -> bool:
        return self.total <= self.budget


# --- pure stages -----------------------------------------------------------------------


def current_input_index(messages: Sequence[Message]) -> int | None:
    """Index of the request's current input: its latest user message (None if there is none)."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role is Role.USER and m.kind is Kind.MESSAGE:
            return i
    return None


def protection_of(message: Message, *, current_input: bool = False) -> Reason | None:
    """Why `message` can never be removed, or None. First matching rule wins."""
    if message.role is Role.SYSTEM and message.kind is Kind.MESSAGE:
        return Reason.PROTECTED_SYSTEM
    if message.kind is Kind.CHARACTER:
        return Reason.PROTECTED_CHARACTER
    if message.kind is Kind.LOREBOOK and message.required:
        return Reason.PROTECTED_REQUIRED_LOREBOOK
    if message.kind is Kind.MEMORY and message.required:
        return Reason.PROTECTED_REQUIRED_MEMORY
    if message.pinned:
        return Reason.PINNED
    if current_input:
        return Reason.CURRENT_INPUT
    return None


def build_blocks(messages: Sequence[Message]) -> tuple[Block, ...]:
    """The blocks of a prompt made of `messages` (thread order), with groups and protection.

    Groups come from `inspector.model.tool_groups` (results linked by call id, adjacent or
    not, parallel calls included); a group holding a protected block is protected whole,
    its other members with reason `protected_group`.
    """
    groups = tool_groups(messages)
    turns = assign_turns(messages)
    current = current_input_index(messages)
    own = [protection_of(m, current_input=i == current) for i, m in enumerate(messages)]
    held = {groups[i] for i, p in enumerate(own) if p is not None}
    blocks: list[Block] = []
    for i, m in enumerate(messages):
        protection = own[i] or (Reason.PROTECTED_GROUP if groups[i] in held else None)
        blocks.append(
            Block(
                key=m.id,
                role=str(m.role),
                kind=str(m.kind),
                text=m.text_for_count(),
                group=messages[groups[i]].id,
                protection=protection,
                relevance=m.relevance,
                manual_excluded=m.manual_excluded,
                current_input=i == current,
                turn=turns[i],
                message=m,
            )
        )
    return tuple(blocks)


def group_members(blocks: Iterable[Block]) -> dict[str, list[Block]]:
    members: dict[str, list[Block]] = {}
    for b in blocks:
        members.setdefault(b.group, []).append(b)
    return members


def held_groups(blocks: Iterable[Block]) -> set[str]:
    """Groups holding a protected block: they are never removed, not even in part."""
    return {b.group for b in blocks if b.protected}


def unremovable_total(blocks: Sequence[Block], count_tokens: CountTokens) -> int:
    """Cost of what no shift can remove: the protected blocks and their groups."""
    held = held_groups(blocks)
    return sum(count_tokens(b) for b in blocks if b.group in held)


def shift_context(
    blocks: Iterable[Block],
    count_tokens: CountTokens,
    budget: int,
    *,
    removal_order: RemovalOrder | None = None,
    reason_for: Callable[[Block], Reason] | None = None,
) -> ShiftResult:
    """Remove whole groups, oldest unprotected first, until the blocks fit `budget`.

    `removal_order` changes which group goes first (default: prompt order); `reason_for`
    names why the block that triggered a removal went (default `shifted_oldest`); its group
    partners get `tool_group`. A group holding a protected block is skipped. If the
    protected context alone is over, everything removable is gone and the result does not fit.

    Each block is counted once: a block's cost is its own (`count_tokens` takes one block),
    so the prompt total is additive and a removal subtracts what it removes. The result is
    identical to the seed-literal reference (tests/reference/shifting.py), which recounts
    everything after every removal.
    """
    blocks = tuple(blocks)
    costs = list(map(count_tokens, blocks))
    total = sum(costs)
    if total <= budget:
        return ShiftResult(kept=blocks, excluded=(), reasons={}, total=total, budget=budget)
    if removal_order is None and reason_for is None:
        by_runs = _shift_runs(blocks, costs, total, budget)
        if by_runs is not None:
            return by_runs
    # Cost per key, not per block: the reference drops every block sharing a removed key.
    key_cost: dict[str, int] = {}
    for b, c in zip(blocks, costs, strict=True):
        key_cost[b.key] = key_cost.get(b.key, 0) + c
    members = group_members(blocks)
    held = held_groups(blocks)
    removable = [(i, b) for i, b in enumerate(blocks) if not b.protected]
    if removal_order is not None:
        removable.sort(key=lambda item: removal_order(item[1], item[0]))
    removed: set[str] = set()
    excluded: list[Block] = []
    reasons: dict[str, Reason] = {}
    for _, block in removable:
        if total <= budget:
            break
        if block.key in removed or block.group in held:
            continue
        first = reason_for(block) if reason_for is not None else Reason.SHIFTED_OLDEST
        for member in members[block.group]:
            if member.key in removed:
                continue
            removed.add(member.key)
            excluded.append(member)
            reasons[member.key] = first if member is block else Reason.TOOL_GROUP
            total -= key_cost[member.key]
    kept = tuple(b for b in blocks if b.key not in removed)
    diagnostics: tuple[str, ...] = ()
    if total > budget:
        diagnostics = (f"protected context alone ({total} tokens) exceeds the budget ({budget} tokens)",)
    return ShiftResult(
        kept=kept, excluded=tuple(excluded), diagnostics=diagnostics, reasons=reasons, total=total, budget=budget
    )


_KEY = attrgetter("key")
_GROUP = attrgetter("group")
_PROTECTION = attrgetter("protection")
_REASON_BY_START = (Reason.TOOL_GROUP, Reason.SHIFTED_OLDEST).__getitem__


def _shift_runs(blocks: tuple[Block, ...], costs: list[int], total: int, budget: int) -> ShiftResult | None:
    """`shift_context` in prompt order by `truncate_costs` when every group is one run of
    adjacent blocks (the usual prompt); None when that does not hold (or when a removed key
    repeats, where the reference's by-key removal applies)."""
    if not blocks:
        return None
    labels = group_labels(list(map(_GROUP, blocks)))
    if labels != sorted(labels):
        return None  # a group is split in several runs
    protected = list(map(is_not, map(_PROTECTION, blocks), repeat(None)))
    cut = truncate_costs(costs, labels, protected, budget, total=total)
    excluded = tuple(cut.excluded_of(blocks))
    kept = tuple(cut.kept_of(blocks))
    positions = list(cut.excluded_positions())
    starts = map(eq, map(labels.__getitem__, positions), positions)  # a group's first block triggered its removal
    reasons = dict(zip(map(_KEY, excluded), map(_REASON_BY_START, starts), strict=True))
    if len(reasons) != len(excluded) or not reasons.keys().isdisjoint(map(_KEY, kept)):
        return None  # a removed key repeats
    diagnostics: tuple[str, ...] = ()
    if not cut.fits:
        diagnostics = (f"protected context alone ({cut.total} tokens) exceeds the budget ({budget} tokens)",)
    return ShiftResult(
        kept=kept, excluded=excluded, diagnostics=diagnostics, reasons=reasons, total=cut.total, budget=budget
    )


def block_counter(counter: TokenCounter) -> CountTokens:
    """Cost of a block under the shifting profile: tokens of its text + 4 per message."""
    overhead = OVERHEAD
    memo: dict[str, int] = {}

    def count(block: Block) -> int:
        hit = memo.get(block.text)
        if hit is None:
            hit = memo[block.text] = counter.count(block.text) + overhead
        return hit

    return count
