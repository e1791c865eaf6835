"""The iris profile's seed-literal reference: every request rebuilt from scratch, turn by turn.

The oracle of the differential tests (`tests/engine/test_iris_fast.py`) and of `bench/`: a
readable transcription of seeds/iris-context-management.txt and iris-summarization.txt
(where they are silent, DESIGN.md's "Semantics"). The product replays with
`inspector.pipeline.profiles.iris.replayer.IrisReplayer`, which must give identical audits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import msgspec

from inspector.config import Config
from inspector.model import Message, Request, Role, Summary, Thread, assign_turns, effective_requests
from inspector.pipeline import audit
from inspector.pipeline.audit import BlockAudit, BlockStatus, BudgetAudit, Reason, RequestAudit
from inspector.pipeline.profiles.iris.stages import (
    PLACEHOLDER,
    compaction_threshold_tokens,
    covering_summaries,
    fallback_sequence,
    protected_turns,
    summarize_span,
)
from inspector.tokens import TokenCounter, message_costs, text_cost, tools_cost

OVERHEAD = 0  # the seeds count a message as its content's tokens


@dataclass(frozen=True, slots=True)
class TokenBudget:
    """available = window x ratio - system - tools - injected summaries - reserve."""

    window: int
    ratio: float
    system_tokens: int
    tool_tokens: int
    summary_tokens: int
    response_reserve: int

    @property
    def available(self) -> int:
        return (
            math.floor(self.window * self.ratio)
            - self.system_tokens
            - self.tool_tokens
            - self.summary_tokens
            - self.response_reserve
        )


def should_compact_on_tokens(trigger_tokens: int | None, config: Config) -> bool:
    """prompt_tokens >= context_window x compaction_threshold."""
    if trigger_tokens is None:
        return False
    return trigger_tokens >= config["context.window"] * config["context.compaction_threshold"]


def count_unsummarized_for_guard(messages: list[Message], eligible: list[int]) -> int:
    """The summarization.threshold guard counts the unsummarized user and assistant
    messages that compaction could summarize (those older than the kept tail).
    Tool results ride with the call that produced them, as in Iris's conversation rows."""
    return sum(1 for i in eligible if messages[i].role in (Role.USER, Role.ASSISTANT))


@dataclass
class _Loaded:
    ok: bool
    protect: int
    loaded_turns: set[int]
    history_tokens: int
    pruned: set[int]  # message indices whose tool output is cleared
    needed: int       # tokens the must-load turns need


def load_history_newest_first(
    turn_of: list[int | None],
    history: list[int],
    costs: list[int],
    pruned_costs: list[int],
    is_tool: list[bool],
    current_turn: int | None,
    protect: int,
    available: int,
) -> _Loaded:
    """Accumulate whole turns newest-first until the budget is exhausted.

    `history` is the in-order list of unsummarized message indices that belong to a turn.
    Tool outputs outside the protected turns cost their placeholder.
    """
    shielded = protected_turns(current_turn, protect)
    by_turn: dict[int, list[int]] = {}
    for i in history:
        by_turn.setdefault(turn_of[i], []).append(i)  # type: ignore[arg-type]
    pruned = {i for i in history if is_tool[i] and turn_of[i] not in shielded}
    turn_cost = {
        t: sum(pruned_costs[i] if i in pruned else costs[i] for i in idxs) for t, idxs in by_turn.items()
    }
    loaded: set[int] = set()
    total = 0
    for t in sorted(by_turn, reverse=True):
        if total + turn_cost[t] > available:
            break
        total += turn_cost[t]
        loaded.add(t)
    must = set(shielded) & set(by_turn) if protect > 0 else ({current_turn} & set(by_turn))
    needed = sum(turn_cost[t] for t in must)
    ok = must <= loaded and available >= 0
    return _Loaded(ok=ok, protect=protect, loaded_turns=loaded, history_tokens=total, pruned=pruned, needed=needed)


def replay_reference(thread: Thread, config: Config, ctx) -> tuple[list[RequestAudit], list[Summary]]:
    """The plain reference: every request rebuilt from scratch, turn by turn.

    Kept as the yardstick for `IrisReplayer` (differential tests and bench/)."""
    counter: TokenCounter = ctx.counter
    msgs = list(thread.messages)
    index = {m.id: i for i, m in enumerate(msgs)}
    turn_of = assign_turns(msgs)
    costs = message_costs(counter, msgs, OVERHEAD)
    placeholder_cost = counter.count(PLACEHOLDER) + OVERHEAD
    is_tool = [m.role is Role.TOOL for m in msgs]
    pruned_costs = [placeholder_cost if t else c for t, c in zip(is_tool, costs, strict=True)]
    base_system = text_cost(counter, thread.system_prompt, OVERHEAD)
    tool_tokens = tools_cost(counter, thread.tools)

    window = config["context.window"]
    ratio = config["context.token_budget_ratio"]
    reserve = config["context.response_reserve"]
    n_protect = config["context.prune_protect_turns"]
    max_injected = config["summarization.max_injected"]
    guard = config["summarization.threshold"]
    follow_recorded = bool(getattr(ctx, "follow_recorded", False)) and bool(thread.summaries)
    recorded_by_request = {s.before_request_id: s for s in thread.summaries if s.before_request_id}
    recorded_by_span = {(s.first_message_id, s.last_message_id): s for s in thread.summaries}

    requests = effective_requests(thread)
    chain: list[Summary] = []
    covered_upto = -1  # index of the last message covered by the chain
    summary_cost: dict[str, int] = {}
    audits: list[RequestAudit] = []

    for k, req in enumerate(requests):
        end = index[req.after_message_id]
        cur = turn_of[end]

        trigger_tokens, trigger_source = _trigger(k, requests, audits, config)
        compaction: audit.CompactionAudit | None = None
        eligible = [
            i
            for i in range(covered_upto + 1, end + 1)
            if turn_of[i] is not None and cur is not None and turn_of[i] <= cur - n_protect - 1
        ]
        # The seed's two triggers, in its order: the token threshold, then the message count.
        if should_compact_on_tokens(trigger_tokens, config):
            due: str | None = "token_threshold"
        elif count_unsummarized_for_guard(msgs, eligible) >= guard:
            due = "message_count"
        else:
            due = None
        new_summary: Summary | None = None
        trigger: str | None = None
        if follow_recorded:  # the thread's own compactions, named by what would have triggered them
            recorded = recorded_by_request.get(req.id)
            if recorded is not None and recorded.last_message_id in index:
                new_summary, trigger = recorded, due or "recorded"
        elif eligible and due is not None:
            trigger = due
            span = (msgs[eligible[0]].id, msgs[eligible[-1]].id)
            new_summary = recorded_by_span.get(span) or summarize_span(ctx, msgs, eligible, chain, req)
        if new_summary is not None and trigger is not None:
            chain.append(new_summary)
            covered_upto = max(covered_upto, index[new_summary.last_message_id])
            compaction = audit.CompactionAudit(
                trigger=trigger,
                summary_id=new_summary.id,
                first_message_id=new_summary.first_message_id,
                last_message_id=new_summary.last_message_id,
            )

        covering = covering_summaries(chain, index)
        injected = chain[-max_injected:] if max_injected > 0 else []
        for s in chain:
            if s.id not in summary_cost:
                summary_cost[s.id] = text_cost(counter, s.injected_text(), OVERHEAD)
        summary_tokens = sum(summary_cost[s.id] for s in injected)
        pre_turn = [i for i in range(end + 1) if turn_of[i] is None]
        system_tokens = base_system + sum(costs[i] for i in pre_turn)
        budget = TokenBudget(window, ratio, system_tokens, tool_tokens, summary_tokens, reserve)
        available = budget.available
        history = [i for i in range(covered_upto + 1, end + 1) if turn_of[i] is not None]

        result: _Loaded | None = None
        for protect in fallback_sequence(n_protect):
            result = load_history_newest_first(
                turn_of, history, costs, pruned_costs, is_tool, cur, protect, available
            )
            if result.ok:
                break
        assert result is not None
        failed = not result.ok
        shielded = protected_turns(cur, result.protect)

        blocks: list[BlockAudit] = []
        position = 0
        sent_order: list[tuple[int, int]] = []  # (block list index, message index) for history
        for i in range(end + 1):
            m = msgs[i]
            t = turn_of[i]
            common = dict(message_id=m.id, role=str(m.role), kind=str(m.kind), turn=t, tokens=costs[i])
            if t is None:
                blocks.append(BlockAudit(**common, status=BlockStatus.KEPT, protected=True, reason=Reason.SYSTEM,
                                         tokens_sent=0 if failed else costs[i], position=None if failed else position))
                position += 0 if failed else 1
            elif i <= covered_upto:
                blocks.append(BlockAudit(**common, status=BlockStatus.SUMMARIZED, protected=False,
                                         reason=Reason.SUMMARIZED, tokens_sent=0, position=None,
                                         summary_id=covering.get(i)))
            elif t in result.loaded_turns and not failed:
                is_protected = t in shielded
                if i in result.pruned:
                    status, reason, sent = BlockStatus.PRUNED, Reason.TOOL_OUTPUT_CLEARED, pruned_costs[i]
                else:
                    status = BlockStatus.KEPT
                    reason = Reason.CURRENT_TURN if t == cur else (
                        Reason.PROTECTED_TURN if is_protected else Reason.WITHIN_BUDGET)
                    sent = costs[i]
                sent_order.append((len(blocks), i))
                blocks.append(BlockAudit(**common, status=status, protected=is_protected, reason=reason,
                                         tokens_sent=sent, position=None))
            else:
                is_protected = t in shielded
                if failed:
                    status = BlockStatus.PRUNED if i in result.pruned else BlockStatus.EXCLUDED
                    reason = Reason.TOKEN_BUDGET_EXCEEDED
                else:
                    status, reason = BlockStatus.EXCLUDED, Reason.BUDGET_EXHAUSTED
                blocks.append(BlockAudit(**common, status=status, protected=is_protected, reason=reason,
                                         tokens_sent=0, position=None))
        # Injected summaries sit in the system prompt, after the pre-turn blocks.
        for s in chain:
            is_injected = s in injected
            blocks.append(BlockAudit(
                message_id=None, role="system", kind="summary", turn=None,
                status=BlockStatus.KEPT if is_injected and not failed else BlockStatus.EXCLUDED,
                protected=is_injected, reason=Reason.SUMMARY_INJECTED if is_injected else Reason.SUMMARY_NOT_INJECTED,
                tokens=summary_cost[s.id], tokens_sent=summary_cost[s.id] if is_injected and not failed else 0,
                position=(position := position + 1) - 1 if is_injected and not failed else None,
                summary_id=s.id,
            ))
        for block_index, _ in sent_order:
            b = blocks[block_index]
            blocks[block_index] = _with_position(b, position)
            position += 1

        history_tokens = 0 if failed else result.history_tokens
        prompt = 0 if failed else system_tokens + tool_tokens + summary_tokens + history_tokens
        pruned_savings = sum(b.tokens - b.tokens_sent for b in blocks if b.status is BlockStatus.PRUNED and not failed)
        needed = None
        error = None
        if failed:
            needed = system_tokens + tool_tokens + summary_tokens + reserve + result.needed
            error = audit.RequestError(
                code="TOKEN_BUDGET_EXCEEDED",
                message=(
                    f"protected context needs {needed} tokens with every tool output pruned; "
                    f"the budget is {math.floor(window * ratio)} ({window} x {ratio})"
                ),
            )
        audits.append(RequestAudit(
            index=k,
            request_id=req.id,
            after_message_id=req.after_message_id,
            turn=cur,
            status="failed" if failed else "completed",
            error=error,
            budget=BudgetAudit(
                window=window, system_tokens=system_tokens, tool_tokens=tool_tokens,
                summary_tokens=summary_tokens, response_reserve=reserve, available=available,
                history_tokens=history_tokens, prompt_tokens=prompt,
                recorded_prompt_tokens=req.prompt_tokens, trigger_source=trigger_source,
                trigger_tokens=trigger_tokens, pruned_savings=pruned_savings, needed_tokens=needed,
            ),
            compaction=compaction,
            summaries_injected=tuple(s.id for s in injected),
            protect_turns=result.protect,
            blocks=tuple(blocks),
            stats={
                "compaction_threshold_tokens": compaction_threshold_tokens(config),
                "budget_tokens": math.floor(window * ratio),
                "unsummarized_guard_count": count_unsummarized_for_guard(msgs, eligible),
            },
        ))
    return audits, chain


def _with_position(block: BlockAudit, position: int) -> BlockAudit:
    return msgspec.structs.replace(block, position=position)  # BlockAudit is a msgspec Struct


def _trigger(k: int, requests: tuple[Request, ...], audits: list[RequestAudit], config: Config):
    """The previous request's recorded prompt tokens where known, else its replayed estimate."""
    if k == 0:
        return None, None
    prev = requests[k - 1]
    if config["context.trigger_tokens"] == "recorded" and prev.prompt_tokens is not None:
        return prev.prompt_tokens, "recorded"
    budget = audits[-1].budget
    return (budget.needed_tokens if budget.needed_tokens is not None else budget.prompt_tokens), "estimated"
