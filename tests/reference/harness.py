"""The harness profile's seed-literal reference, after agent-harness-context-management.txt.

Two layers, both oracles (never imported by the product):

- The seed's own API on its dict messages (`estimate_message_tokens`, `prune_messages`,
  `compact`, and `ContextManager` wrapping them), so the seed's worked examples run as tests
  almost verbatim (`tests/engine/test_harness.py`).
- `replay_reference(thread, config, ctx)`: the same policy applied to a recorded thread,
  every request rebuilt from the whole thread. `inspector.pipeline.profiles.harness.replayer.HarnessReplayer`
  must give identical audits (`tests/engine/test_harness_fast.py`, `bench/`). The replay semantics are
  in the docstring of `inspector.pipeline.profiles.harness.stages`.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_right
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.config import Config
from inspector.model import (
    Message,
    Role,
    Summary,
    Thread,
    ToolCall,
    assign_turns,
    effective_requests,
    tool_groups,
)
from inspector.pipeline import ReplayContext, audit
from inspector.pipeline.audit import BlockAudit, BlockStatus, BudgetAudit, Reason, RequestAudit
from inspector.pipeline.profiles.harness import stages as stages
from inspector.pipeline.profiles.harness.stages import context_stats, context_summary_text, plan_removals
from inspector.tokens import TokenCounter, message_costs, text_cost, tools_cost

DictMessage = Mapping[str, Any]
OVERHEAD = 10  # the seed: ceil(chars / 4) + 10 per message


def _dict_text(message: DictMessage) -> str:
    """Content plus the JSON of any tool calls, as the estimator counts them."""
    content = message.get("content")
    if content is None:
        text = ""
    elif isinstance(content, str):
        text = content
    else:  # content blocks (Anthropic-style lists): count their JSON
        text = json.dumps(content, ensure_ascii=False, sort_keys=True)
    calls = message.get("tool_calls")
    if calls:
        text += json.dumps(calls, ensure_ascii=False, sort_keys=True, default=str)
    return text


def estimate_message_tokens(message: DictMessage | Message, counter: TokenCounter | None = None) -> int:
    """ceil(chars / 4) + 10 for one message (the harness's cheap steering estimate).

    For a `Message`, a given `counter` replaces the chars/4 part with its tokenizer.
    """
    overhead = OVERHEAD
    if isinstance(message, Message):
        text = message.text_for_count()
        if counter is not None:
            return counter.count(text) + overhead
        return math.ceil(len(text) / 4) + overhead
    return math.ceil(len(_dict_text(message)) / 4) + overhead


@dataclass(frozen=True, slots=True)
class PruneResult:
    """The pruned copy plus the record of what left: input index -> reason."""

    messages: list[dict[str, Any]]
    removed: dict[int, Reason]


def _split(count: int, has_system: bool, keep_last: int) -> tuple[int, int]:
    """(start, end) of the middle: after the system message, before the protected tail."""
    start = 1 if has_system else 0
    end = max(start, count - keep_last) if keep_last > 0 else count
    return start, end


def _has_system(messages: Sequence[DictMessage]) -> bool:
    return bool(messages) and messages[0].get("role") == Role.SYSTEM


def prune_messages_detailed(
    messages: Sequence[DictMessage], *, window: int, compaction_threshold: float, keep_last: int
) -> PruneResult:
    """`prune_messages` with the record of which input index was removed and why."""
    start, end = _split(len(messages), _has_system(messages), keep_last)
    middle = messages[start:end]
    removed_middle = plan_removals(
        [str(m.get("role", "")) for m in middle],
        [estimate_message_tokens(m) for m in middle],
        window * compaction_threshold,
    )
    removed = {start + j: reason for j, reason in removed_middle.items()}
    kept = [dict(m) for i, m in enumerate(messages) if i not in removed]
    return PruneResult(messages=kept, removed=removed)


def prune_messages(
    messages: Sequence[DictMessage], *, window: int, compaction_threshold: float, keep_last: int
) -> list[dict[str, Any]]:
    """A pruned copy: system message and last `keep_last` messages verbatim; old tool
    messages elided first, then old assistant messages, until the middle's estimate is
    below window x compaction_threshold. The input is never mutated."""
    return prune_messages_detailed(
        messages, window=window, compaction_threshold=compaction_threshold, keep_last=keep_last
    ).messages


def is_context_summary(message: DictMessage) -> bool:
    content = message.get("content")
    return message.get("role") == Role.USER and isinstance(content, str) and content.startswith(stages.CONTEXT_SUMMARY_MARKER)


def compact(
    messages: Sequence[DictMessage],
    *,
    keep_last: int,
    summarize: Callable[[list[dict[str, Any]]], str],
) -> list[dict[str, Any]]:
    """System message + one `[Context Summary]` user message + the last `keep_last` messages.

    A fixed point: when the middle is empty or already exactly one `[Context Summary]`
    message, the result equals the input and `summarize` is not called.
    """
    start, end = _split(len(messages), _has_system(messages), keep_last)
    copies = [dict(m) for m in messages]
    middle = copies[start:end]
    if not middle or (len(middle) == 1 and is_context_summary(middle[0])):
        return copies
    summary = {"role": Role.USER.value, "content": context_summary_text(summarize(middle))}
    return copies[:start] + [summary] + copies[end:]


# ---------------------------------------------------------------------------
# The seed's ContextManager, over plain numbers
# ---------------------------------------------------------------------------


class ContextManager:
    """The seed's manager: the last reported prompt size against the two thresholds."""

    def __init__(
        self,
        window: int,
        *,
        compaction_threshold: float = 0.8,
        pruning_threshold: float = 0.9,
        keep_last: int = 2,
    ) -> None:
        self.window = window
        self.compaction_threshold = compaction_threshold
        self.pruning_threshold = pruning_threshold
        self.keep_last = keep_last
        self.prompt_tokens = 0

    @staticmethod
    def estimate_message_tokens(message: DictMessage | Message) -> int:
        return estimate_message_tokens(message)

    def update_token_count(self, prompt_tokens: int) -> None:
        """The prompt size of the latest call; it replaces, never adds to, the previous one."""
        self.prompt_tokens = prompt_tokens

    def stats(self) -> stages.ContextStats:
        return context_stats(self.prompt_tokens, self.window, self.compaction_threshold, self.pruning_threshold)

    def get_context_stats(self) -> dict[str, Any]:
        return self.stats().as_dict()

    def prune_messages(self, messages: Sequence[DictMessage]) -> list[dict[str, Any]]:
        return prune_messages(
            messages, window=self.window, compaction_threshold=self.compaction_threshold, keep_last=self.keep_last
        )


def message_from_dict(data: DictMessage, index: int = 0) -> Message:
    """A seed-style dict message as a `Message` (id `m<index>` when it has none)."""
    raw_role = str(data.get("role", "user"))
    role = Role.SYSTEM if raw_role == "developer" else Role(raw_role)
    calls = []
    for n, call in enumerate(data.get("tool_calls") or ()):
        function = call.get("function") or {}
        calls.append(
            ToolCall(
                id=str(call.get("id") or f"call-{index}-{n}"),
                name=str(call.get("name") or function.get("name") or ""),
                arguments=call.get("arguments", function.get("arguments", {})),
            )
        )
    return Message(
        id=str(data.get("id") or f"m{index}"),
        role=role,
        content=_dict_text({"content": data.get("content")}),
        tool_calls=tuple(calls),
        tool_call_id=data.get("tool_call_id"),
    )


def messages_from_dicts(messages: Sequence[DictMessage]) -> list[Message]:
    return [message_from_dict(m, i) for i, m in enumerate(messages)]


def replay_reference(thread: Thread, config: Config, ctx: ReplayContext) -> tuple[list[RequestAudit], list[Summary]]:
    """Replay every request of `thread` under the harness policy; see the module docstring."""
    window: int = config["context.window"]
    compaction_threshold: float = config["context.compaction_threshold"]
    pruning_threshold: float = config["harness.pruning_threshold"]
    keep_last: int = config["harness.keep_last"]
    trigger_mode: str = config["context.trigger_tokens"]
    reserve: int = config["context.response_reserve"]
    available = int(window * config["context.token_budget_ratio"]) - reserve
    target = window * compaction_threshold

    counter: TokenCounter = ctx.counter
    messages = thread.messages
    index = thread.message_index()
    costs = message_costs(counter, messages, OVERHEAD)
    turns = assign_turns(messages)
    groups = tool_groups(messages)
    head = stages.head_indices(messages)
    system_tokens = text_cost(counter, thread.system_prompt, OVERHEAD)
    tool_tokens = tools_cost(counter, thread.tools)
    recorded_by_span = {(s.first_message_id, s.last_message_id): s for s in thread.summaries}
    # Per-message facts that never change between requests.
    ids = [m.id for m in messages]
    role_values = [m.role.value for m in messages]
    kind_values = [m.kind.value for m in messages]
    owners = [ids[g] if g != k or messages[k].tool_calls else None for k, g in enumerate(groups)]
    head_sorted = sorted(head)
    non_head = [k for k in range(len(messages)) if k not in head]
    # The block of each message as last built: most blocks are unchanged from one request to
    # the next, and frozen dataclasses are slow to build, so an equal block is reused.
    last_key: list[tuple[Any, ...] | None] = [None] * len(messages)
    last_block: list[BlockAudit | None] = [None] * len(messages)

    covered: dict[int, str] = {}  # message index -> id of the summary that replaced it
    elided: dict[int, Reason] = {}  # message index -> why pruning removed it (persists)
    current: Summary | None = None
    current_cost = 0
    chain: list[Summary] = []
    audits: list[RequestAudit] = []
    previous_recorded: int | None = None
    previous_replayed: int | None = None

    for request_index, request in enumerate(effective_requests(thread)):
        last = index[request.after_message_id]
        diagnostics: list[str] = []

        # 1. The measurement the thresholds read: the previous request's prompt size.
        trigger_source, trigger_tokens = stages.trigger_reading(request_index, trigger_mode, previous_recorded,
                                                         previous_replayed)
        stats = context_stats(trigger_tokens or 0, window, compaction_threshold, pruning_threshold)

        # 2. Head, protected tail (+ group partners), middle.
        visible_others = non_head[: bisect_right(non_head, last)]
        others = [k for k in visible_others if k not in elided and k not in covered]
        tail = set(visible_others[-keep_last:]) - covered.keys() - elided.keys() if keep_last > 0 else set()
        tail_groups = {groups[k] for k in tail}
        partners = {k for k in others if k not in tail and groups[k] in tail_groups}
        protected = tail | partners
        middle = [k for k in others if k not in protected]

        # 3. Compaction of the not yet summarized middle.
        compaction: audit.CompactionAudit | None = None
        fixed_point = False
        if stats.needs_compaction:
            if middle:
                span = [messages[k] for k in middle]
                summary = stages.compaction_summary(thread, ctx, span, current, request, recorded_by_span)
                chain.append(summary)
                for k in middle:
                    covered[k] = summary.id
                current = summary
                current_cost = text_cost(counter, context_summary_text(summary), OVERHEAD)
                compaction = audit.CompactionAudit("token_threshold", summary.id, span[0].id, span[-1].id)
                middle = []
            else:  # nothing to summarize: the middle is only the summary already, or empty
                fixed_point = current is not None
                diagnostics.append(stages.FIXED_POINT_NOTE if fixed_point else stages.NOTHING_TO_COMPACT_NOTE)

        # 4. Pruning of what is left: the summary message (never removed) + the live middle.
        pruned_now = False
        if stats.needs_pruning:
            pruned_now = True
            roles = ([Role.USER.value] if current is not None else []) + [messages[k].role.value for k in middle]
            middle_costs = ([current_cost] if current is not None else []) + [costs[k] for k in middle]
            middle_groups: list[Hashable] = (["summary"] if current is not None else []) + [groups[k] for k in middle]
            offset = 1 if current is not None else 0
            removals = plan_removals(roles, middle_costs, target, middle_groups)
            for j, reason in removals.items():
                elided[middle[j - offset]] = reason
            remaining = sum(c for j, c in enumerate(middle_costs) if j not in removals)
            if remaining >= target:
                diagnostics.append(stages.pruning_stopped_note(remaining, target))
            middle = [k for k in middle if k not in elided]

        # 5. Sent order, token totals, blocks.
        sent_messages = head_sorted[: bisect_right(head_sorted, last)] + ([-1] if current is not None else [])
        # The protected ones and what is left of the middle after compaction and pruning.
        sent_messages += [k for k in others if k not in elided and k not in covered]
        history_tokens = sum(costs[k] for k in sent_messages if k >= 0)
        summary_tokens = current_cost if current is not None else 0
        prompt_tokens = system_tokens + tool_tokens + summary_tokens + history_tokens
        failed = prompt_tokens > available
        position = {k: p for p, k in enumerate(sent_messages)}
        if failed:
            diagnostics.append(stages.over_budget_note(prompt_tokens, available))

        blocks: list[BlockAudit] = []
        for k in range(last + 1):
            summary_id: str | None = None
            is_protected = k in head or k in protected
            if k in head:
                status, reason = BlockStatus.KEPT, Reason.SYSTEM
            elif k in covered:
                status, reason, summary_id = BlockStatus.SUMMARIZED, Reason.SUMMARIZED, covered[k]
            elif k in elided:
                status, reason = BlockStatus.EXCLUDED, elided[k]
            elif k in tail:
                status, reason = BlockStatus.KEPT, Reason.KEEP_LAST
            elif k in partners:
                status, reason = BlockStatus.KEPT, Reason.PROTECTED_GROUP
            elif pruned_now and role_values[k] not in (Role.TOOL, Role.ASSISTANT):
                status, reason = BlockStatus.KEPT, Reason.NOT_PRUNABLE
            else:
                status, reason = BlockStatus.KEPT, Reason.WITHIN_BUDGET
            sent_position = position[k] if status is BlockStatus.KEPT and not failed else None
            key = (status, reason, is_protected, sent_position, summary_id)
            if key != last_key[k]:
                cost = costs[k]
                last_key[k] = key
                last_block[k] = BlockAudit(
                    message_id=ids[k],
                    role=role_values[k],
                    kind=kind_values[k],
                    turn=turns[k],
                    status=status,
                    protected=is_protected,
                    reason=reason,
                    tokens=cost,
                    tokens_sent=0 if sent_position is None else cost,
                    position=sent_position,
                    summary_id=summary_id,
                    group=owners[k],
                )
            blocks.append(last_block[k])  # type: ignore[arg-type]
        if current is not None:
            blocks.append(
                BlockAudit(
                    message_id=None,
                    role=Role.USER.value,
                    kind=stages.SUMMARY_KIND,
                    turn=None,
                    status=BlockStatus.KEPT,
                    protected=False,
                    reason=Reason.CONTEXT_SUMMARY,
                    tokens=current_cost,
                    tokens_sent=0 if failed else current_cost,
                    position=None if failed else position[-1],
                    summary_id=current.id,
                )
            )

        audits.append(
            RequestAudit(
                index=request_index,
                request_id=request.id,
                after_message_id=request.after_message_id,
                turn=turns[last],
                status="failed" if failed else "completed",
                error=audit.RequestError(
                    code="TOKEN_BUDGET_EXCEEDED",  # the seeds' and DESIGN's error code (the block reason is lower case)
                    message=f"prompt of {prompt_tokens} tokens exceeds the {available} available",
                )
                if failed
                else None,
                budget=BudgetAudit(
                    window=window,
                    system_tokens=system_tokens,
                    tool_tokens=tool_tokens,
                    summary_tokens=summary_tokens,
                    response_reserve=reserve,
                    available=available,
                    history_tokens=0 if failed else history_tokens,
                    prompt_tokens=0 if failed else prompt_tokens,
                    recorded_prompt_tokens=request.prompt_tokens,
                    trigger_source=trigger_source,
                    trigger_tokens=trigger_tokens,
                    needed_tokens=prompt_tokens if failed else None,
                ),
                compaction=compaction,
                summaries_injected=(current.id,) if current is not None and not failed else (),
                protect_turns=None,
                blocks=tuple(blocks),
                diagnostics=tuple(diagnostics),
                stats={
                    "usage_percent": stats.usage_percent,
                    "needs_compaction": stats.needs_compaction,
                    "needs_pruning": stats.needs_pruning,
                    "compaction_fixed_point": fixed_point,
                },
            )
        )
        previous_recorded = request.prompt_tokens
        # A failed request still tells the harness how big its prompt was.
        previous_replayed = prompt_tokens
    return audits, chain
