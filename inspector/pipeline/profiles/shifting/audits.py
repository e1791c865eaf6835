"""What every request of a shifting replay shares (`ReplaySetup`) and its audit: the blocks
the host guard kept, excluded, truncated or summarized, with their reasons and positions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from inspector.model import Summary, Thread, assign_turns
from inspector.pipeline.audit import BlockAudit, BlockStatus, BudgetAudit, Reason, RequestAudit, RequestError
from inspector.pipeline.profiles.shifting.blocks import (
    OVERHEAD,
    SUMMARY_KIND,
    Block,
    CountTokens,
    block_counter,
    group_members,
)
from inspector.pipeline.profiles.shifting.guard import (
    DEFAULT_REGISTRY,
    run_strategy,
)
from inspector.tokens import TokenCounter, message_costs, text_cost, tools_cost

if TYPE_CHECKING:
    from inspector.pipeline.profiles.base import Settings


def prompt_budget(config: Settings) -> int:
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
    def of(cls, thread: Thread, config: Settings, ctx, registry=None, interceptors=None,
           turns: list[int | None] | None = None) -> ReplaySetup:
        """`turns`: `assign_turns(thread.messages)` when the caller has them."""

        if registry is None:
            registry = getattr(ctx, "strategies", None) or DEFAULT_REGISTRY
        if interceptors is None:
            interceptors = getattr(ctx, "interceptors", ()) or ()
        counter: TokenCounter = ctx.counter
        message_costs(counter, thread.messages, OVERHEAD)  # one batched count warms the cache for every block
        system_prompt_tokens = text_cost(counter, thread.system_prompt, OVERHEAD)
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
            turns=assign_turns(thread.messages) if turns is None else turns,
        )

    def shift(self, blocks: tuple[Block, ...], request_id: str):
        """The configured strategy on one prompt's `blocks`, under the host guard (a GuardedShift)."""

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
