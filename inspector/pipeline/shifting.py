"""The shifting profile: fit the conversation into `limit - response reserve` by removing
the oldest unprotected blocks, tool calls and their results as one group.

Source: seeds/context-shifting.txt; where it is silent, the public implementation
(Disya123/NeoTavern `apps/server/src/pipeline/contextShift.ts` and `promptPipeline.ts`),
ported, not copied. This module holds the pure stages (protected set, grouping,
`shift_context`) and `replay`; the strategies, their registry and the host guard live in
`inspector.pipeline.strategies`.

`shift_context` keeps a running total (each block counted once, a removal subtracts its
group's cost); its core is `truncate_costs`: the same decision on numbers alone (costs
counted once, int group labels, protected flags), a few C-level passes when every group is
one run. The replay itself is in `inspector.pipeline.shifting_fast` (blocks and costs built
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

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, chain, compress, repeat
from operator import attrgetter, eq, is_not

from inspector.config import Config
from inspector.model import Kind, Message, Role, Summary, Thread, assign_turns, tool_groups
from inspector.pipeline.audit import (
    BlockAudit,
    BlockStatus,
    BudgetAudit,
    Reason,
    RequestAudit,
    RequestError,
)
from inspector.tokens import MESSAGE_OVERHEAD, TokenCounter, message_costs, text_cost, tools_cost

PROFILE = "shifting"
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
    overhead = MESSAGE_OVERHEAD[PROFILE]
    memo: dict[str, int] = {}

    def count(block: Block) -> int:
        hit = memo.get(block.text)
        if hit is None:
            hit = memo[block.text] = counter.count(block.text) + overhead
        return hit

    return count


# --- replay ----------------------------------------------------------------------------


def prompt_budget(config: Config) -> int:
    """available = window x token_budget_ratio - response_reserve (the whole prompt's share)."""
    window, ratio = config["context.window"], config["context.token_budget_ratio"]
    return math.floor(window * ratio) - config["context.response_reserve"]


@dataclass(frozen=True, slots=True)
class ReplaySetup:
    """What every request of one replay shares: the counter, the budget and the strategy."""

    count: CountTokens
    system_prompt_tokens: int
    tool_tokens: int
    window: int
    ratio: float
    reserve: int
    strategy: str
    available: int
    shift_budget: int
    registry: object
    interceptors: tuple
    summarizer: object
    turns: list[int | None]

    @classmethod
    def of(cls, thread: Thread, config: Config, ctx, registry=None, interceptors=None) -> ReplaySetup:
        from inspector.pipeline.strategies import DEFAULT_REGISTRY

        if registry is None:
            registry = getattr(ctx, "strategies", None) or DEFAULT_REGISTRY
        if interceptors is None:
            interceptors = getattr(ctx, "interceptors", ()) or ()
        counter: TokenCounter = ctx.counter
        message_costs(counter, thread.messages, PROFILE)  # one batched count warms the cache for every block
        system_prompt_tokens = text_cost(counter, thread.system_prompt, PROFILE)
        tool_tokens = tools_cost(counter, thread.tools)
        available = prompt_budget(config)
        return cls(
            count=block_counter(counter),
            system_prompt_tokens=system_prompt_tokens,
            tool_tokens=tool_tokens,
            window=config["context.window"],
            ratio=config["context.token_budget_ratio"],
            reserve=config["context.response_reserve"],
            strategy=config["context.strategy"],
            available=available,
            shift_budget=available - system_prompt_tokens - tool_tokens,
            registry=registry,
            interceptors=tuple(interceptors),
            summarizer=ctx.summarizer,
            turns=assign_turns(thread.messages),
        )

    def shift(self, blocks: tuple[Block, ...], request_id: str):
        """The configured strategy on one prompt's `blocks`, under the host guard (a GuardedShift)."""
        from inspector.pipeline.strategies import run_strategy

        return run_strategy(self.strategy, blocks, self.count, self.shift_budget, registry=self.registry,
                            summarizer=self.summarizer, interceptors=self.interceptors, request_id=request_id)

    def budget_error(self, needed: int) -> RequestError:
        return RequestError(
            code="TOKEN_BUDGET_EXCEEDED",
            message=(
                f"protected context needs {needed} tokens; the prompt budget is {self.available} "
                f"({self.window} x {self.ratio} - {self.reserve} reserved for the response)"
            ),
        )


def replay(
    thread: Thread,
    config: Config,
    ctx,
    *,
    registry=None,
    interceptors: Sequence[Callable[[tuple[Block, ...]], Sequence[Block]]] | None = None,
) -> tuple[list[RequestAudit], list[Summary]]:
    """One audit per request of `effective_requests(thread)` under `config["context.strategy"]`.

    `registry` (a StrategyRegistry; default: the built-ins) and `interceptors` may also
    come from `ctx.strategies` / `ctx.interceptors`. Returns the audits and the summaries
    the summarize strategy sent (one per request at most; they do not chain). Identical to
    the reference (tests/reference/shifting.py), in about linear time per request (see
    `inspector.pipeline.shifting_fast`).
    """
    from inspector.pipeline.shifting_fast import ShiftingReplayer

    return ShiftingReplayer(thread, config, ctx, registry=registry, interceptors=interceptors).run()


def audit_summaries(audit: RequestAudit, result) -> tuple[Summary, ...]:
    """The summaries a request actually sent (none when it failed)."""
    return () if audit.failed else result.summaries


def guarded_request_audit(setup: ReplaySetup, k: int, req, turn: int | None, blocks: tuple[Block, ...], result):
    """The audit of request `k` from its blocks and the host guard's `result` (a GuardedShift)."""
    failed = not result.fits
    audit_blocks = _audit_blocks(blocks, result, setup.count, failed)
    system_tokens = setup.system_prompt_tokens + sum(
        b.tokens for b in audit_blocks if b.reason == Reason.PROTECTED_SYSTEM
    )
    summary_tokens = sum(b.tokens_sent for b in audit_blocks if b.kind == SUMMARY_KIND)
    history_tokens = sum(
        b.tokens_sent for b in audit_blocks if b.kind != SUMMARY_KIND and b.reason != Reason.PROTECTED_SYSTEM
    )
    error = None
    needed = None
    if failed:
        needed = setup.system_prompt_tokens + setup.tool_tokens + result.needed
        error = setup.budget_error(needed)
    sent_summaries = () if failed else result.summaries
    return RequestAudit(
        index=k,
        request_id=req.id,
        after_message_id=req.after_message_id,
        turn=turn,
        status="failed" if failed else "completed",
        error=error,
        budget=BudgetAudit(
            window=setup.window,
            system_tokens=system_tokens,
            tool_tokens=setup.tool_tokens,
            summary_tokens=summary_tokens,
            response_reserve=setup.reserve,
            available=setup.available,
            history_tokens=history_tokens,
            prompt_tokens=0 if failed else system_tokens + setup.tool_tokens + summary_tokens + history_tokens,
            recorded_prompt_tokens=req.prompt_tokens,
            trigger_source=None,
            pruned_savings=sum(b.tokens - b.tokens_sent for b in audit_blocks if b.status is BlockStatus.TRUNCATED),
            needed_tokens=needed,
        ),
        compaction=None,
        summaries_injected=tuple(s.id for s in sent_summaries),
        protect_turns=None,
        blocks=audit_blocks,
        diagnostics=result.diagnostics,
        stats={
            "strategy": setup.strategy,
            "strategy_used": result.strategy_used,
            "shift_budget": setup.shift_budget,
            "blocks_tokens": result.total,
            "block_statuses": not_excluded(audit_blocks),
            "block_counts": message_block_counts(audit_blocks),
        },
    )


def message_block_counts(blocks: Sequence[BlockAudit]) -> dict[str, int]:
    """Status -> number of message blocks, as `RequestAudit.block_counts()` would count them
    (kept in the stats so a diff against a timeline-only replay need not walk the blocks)."""
    counts: dict[str, int] = {}
    for b in blocks:
        if b.message_id is not None:
            counts[str(b.status)] = counts.get(str(b.status), 0) + 1
    return counts


def not_excluded(blocks: Sequence[BlockAudit]) -> dict[str, BlockStatus]:
    """Message id -> status of every message block that is not excluded (the others are).

    Kept in the audit's stats: shifting keeps a few dozen blocks of a long history, so two
    replays of a request compare in the size of this map rather than of the thread (`diff`)."""
    return {b.message_id: b.status for b in blocks if b.message_id is not None and b.status is not BlockStatus.EXCLUDED}


def _audit_blocks(blocks: tuple[Block, ...], result, count: CountTokens, failed: bool) -> tuple[BlockAudit, ...]:
    """Every message block in thread order, then the synthetic blocks, with statuses and positions."""
    position = {b.key: p for p, b in enumerate(result.kept)}
    sent = {b.key: b for b in result.kept}
    truncated = {b.key for b in result.truncated}
    summary_ids = {f"summary:{s.id}": s.id for s in result.summaries}
    sizes = {g: len(ms) for g, ms in group_members(blocks).items()}
    out: list[BlockAudit] = []
    for b in (*blocks, *result.added):
        tokens = count(b)
        summary_id = summary_ids.get(b.key) or summary_ids.get(result.covered.get(b.key, ""))
        grouped = b.group if sizes.get(b.group, 1) > 1 or (b.message is not None and b.message.tool_calls) else None
        if b.key in sent:
            if b.key in truncated:
                status, reason = BlockStatus.TRUNCATED, result.reasons.get(b.key, Reason.TRUNCATED_TO_FIT)
            else:
                status = BlockStatus.KEPT
                if b.protection is not None:
                    reason = b.protection
                elif b.key in summary_ids:
                    reason = Reason.EXTRACTIVE_SUMMARY
                else:
                    reason = Reason.WITHIN_BUDGET
            tokens_sent = 0 if failed else count(sent[b.key])
            pos = None if failed else position[b.key]
        elif b.key in result.covered and not failed:
            status, reason, tokens_sent, pos = BlockStatus.SUMMARIZED, Reason.SUMMARIZED, 0, None
        else:
            status, reason = BlockStatus.EXCLUDED, result.reasons.get(b.key, Reason.SHIFTED_OLDEST)
            tokens_sent, pos = 0, None
            summary_id = None
        out.append(
            BlockAudit(
                message_id=b.message_id,
                role=b.role,
                kind=b.kind,
                turn=b.turn,
                status=status,
                protected=b.protected,
                reason=reason,
                tokens=tokens,
                tokens_sent=tokens_sent,
                position=pos,
                summary_id=summary_id,
                group=grouped,
            )
        )
    return tuple(out)
