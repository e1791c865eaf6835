"""The agent-harness pipeline (profile "harness"), after agent-harness-context-management.txt.

Two layers:

- Seed-shaped stages on the dict messages of the seed (`estimate_message_tokens`,
  `context_stats`, `prune_messages`, `compact`, and `ContextManager` wrapping them),
  so the seed's worked examples run as tests almost verbatim.
- `replay(thread, config, ctx)`, which applies the same policy to a recorded thread,
  request by request, and records every decision in the audit.

Replay semantics (where the seed is silent):

- The thread's system prompt is message zero (`system_tokens`); role-system messages
  before the first user message are kept with it (Reason.SYSTEM). Neither is ever pruned
  nor compacted. The protected tail is the last `harness.keep_last` other messages, plus
  the tool-group partners of those (Reason.PROTECTED_GROUP): a tool group is kept or
  removed whole.
- The thresholds read the previous request's prompt tokens ("last update wins"): its
  recorded value when `context.trigger_tokens` is "recorded" and it has one, else its
  replayed value. The first request has no measurement and triggers nothing.
- Compaction replaces the not yet summarized middle with one `[Context Summary]` message
  (a new summary chained to the previous one) and persists for later requests; a middle
  that is already just that summary is a fixed point (no summarizer call). A recorded
  summary of the thread covering exactly the same span is reused instead of a new one.
- Pruning then elides old tool messages, then old assistant messages (oldest first, whole
  tool groups), until the middle is below window x compaction_threshold. Like compaction,
  elision persists: the harness replaces its history with the pruned copy. After a
  compaction the middle is only the summary (never removed), so pruning removes anything
  only when its threshold is below the compaction threshold.
- A prompt over the available budget fails (TOKEN_BUDGET_EXCEEDED): the harness never
  cuts its protected tail, so the provider would reject it. Nothing is sent.
- Sent order: head system messages, the `[Context Summary]`, then the other sent
  messages in thread order.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_right
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from inspector.config import Config
from inspector.model import (
    Kind,
    Message,
    Role,
    Summary,
    Thread,
    ToolCall,
    assign_turns,
    effective_requests,
    tool_groups,
)
from inspector.pipeline.audit import (
    BlockAudit,
    BlockStatus,
    BudgetAudit,
    CompactionAudit,
    Reason,
    RequestAudit,
    RequestError,
)
from inspector.tokens import MESSAGE_OVERHEAD, TokenCounter, message_costs, text_cost, tools_cost

if TYPE_CHECKING:
    from inspector.pipeline import ReplayContext

PROFILE = "harness"
CONTEXT_SUMMARY_MARKER = "[Context Summary]"
SUMMARY_KIND = "summary"

DictMessage = Mapping[str, Any]


# ---------------------------------------------------------------------------
# Estimation and stats
# ---------------------------------------------------------------------------


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
    overhead = MESSAGE_OVERHEAD[PROFILE]
    if isinstance(message, Message):
        text = message.text_for_count()
        if counter is not None:
            return counter.count(text) + overhead
        return math.ceil(len(text) / 4) + overhead
    return math.ceil(len(_dict_text(message)) / 4) + overhead


@dataclass(frozen=True, slots=True)
class ContextStats:
    """How full the measured prompt is against the window and the two thresholds."""

    prompt_tokens: int
    window: int
    usage_percent: float
    needs_compaction: bool
    needs_pruning: bool

    def as_dict(self) -> dict[str, Any]:
        """The keys of the seed's get_context_stats()."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "window": self.window,
            "usage_percent": self.usage_percent,
            "needs_compaction": self.needs_compaction,
            "needs_pruning": self.needs_pruning,
        }


@lru_cache(maxsize=64)
def _as_written(threshold: float) -> tuple[int, int]:
    """The threshold as the decimal it is written as (0.8 is 4/5), numerator and denominator."""
    return Fraction(repr(float(threshold))).as_integer_ratio()


def _at_least(tokens: int, window: int, threshold: float) -> bool:
    # Exact comparison of tokens / window against the threshold as written (0.8 is 4/5):
    # float products such as 100 * 0.57 would move the boundary by one token. window > 0.
    numerator, denominator = _as_written(threshold)
    return tokens * denominator >= numerator * window


def context_stats(
    prompt_tokens: int, window: int, compaction_threshold: float, pruning_threshold: float
) -> ContextStats:
    """Usage of the window by the last measured prompt; thresholds are inclusive (>=)."""
    if window <= 0:
        raise ValueError(f"window must be > 0: got {window}")
    return ContextStats(
        prompt_tokens=prompt_tokens,
        window=window,
        usage_percent=prompt_tokens / window * 100,
        needs_compaction=_at_least(prompt_tokens, window, compaction_threshold),
        needs_pruning=_at_least(prompt_tokens, window, pruning_threshold),
    )


# ---------------------------------------------------------------------------
# Pruning
# ---------------------------------------------------------------------------


def plan_removals(
    roles: Sequence[str],
    costs: Sequence[int],
    target: float,
    groups: Sequence[Hashable] | None = None,
) -> dict[int, Reason]:
    """Which middle items to elide, and why, so the middle's cost falls below `target`.

    Old tool messages go first (oldest first), then old assistant messages; user and
    system items are never removed. With `groups`, an item leaves with every member of its
    group (partners get Reason.TOOL_GROUP); a group holding a user or system item stays.
    Stops as soon as the remaining total is below the target, or when nothing is left to
    remove (then the middle stays over the target).
    """
    members: dict[Hashable, list[int]] = {}
    if groups is not None:
        for j, g in enumerate(groups):
            members.setdefault(g, []).append(j)
    total = sum(costs)
    removed: dict[int, Reason] = {}
    for phase_role, reason in ((Role.TOOL, Reason.TOOL_ELIDED), (Role.ASSISTANT, Reason.ASSISTANT_ELIDED)):
        for j, role in enumerate(roles):
            if total < target:
                return removed
            if role != phase_role or j in removed:
                continue
            group = [j] if groups is None else [m for m in members[groups[j]] if m not in removed]
            if any(roles[m] not in (Role.TOOL, Role.ASSISTANT) for m in group):
                continue
            for m in group:
                removed[m] = reason if m == j else Reason.TOOL_GROUP
                total -= costs[m]
    return removed


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


# ---------------------------------------------------------------------------
# Compaction
# ---------------------------------------------------------------------------


def is_context_summary(message: DictMessage) -> bool:
    content = message.get("content")
    return message.get("role") == Role.USER and isinstance(content, str) and content.startswith(CONTEXT_SUMMARY_MARKER)


def context_summary_text(summary: str | Summary) -> str:
    """The content of the synthetic `[Context Summary]` user message."""
    text = summary.injected_text() if isinstance(summary, Summary) else summary
    return f"{CONTEXT_SUMMARY_MARKER}\n{text}"


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

    def stats(self) -> ContextStats:
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


# ---------------------------------------------------------------------------
# Replay
# ---------------------------------------------------------------------------


def _head_indices(messages: Sequence[Message]) -> set[int]:
    """Role-system messages before the first user message: sent with the system prompt."""
    head: set[int] = set()
    for i, m in enumerate(messages):
        if m.role is Role.USER and m.kind is Kind.MESSAGE:
            break
        if m.role is Role.SYSTEM:
            head.add(i)
    return head


def trigger_reading(request_index: int, mode: str, previous_recorded: int | None,
                    previous_replayed: int | None) -> tuple[str | None, int | None]:
    """(source, tokens) the thresholds read: the previous request's recorded prompt size when
    `mode` is "recorded" and it has one, else its replayed size; nothing for the first request."""
    if request_index == 0:
        return None, None
    if mode == "recorded" and previous_recorded is not None:
        return "recorded", previous_recorded
    return "estimated", previous_replayed


def pruning_stopped_note(remaining: int, target: float) -> str:
    return (f"pruning stopped at {remaining} middle tokens (target {target:g}): "
            "only user messages and the protected tail are left")


def over_budget_note(prompt_tokens: int, available: int) -> str:
    return (f"the prompt needs {prompt_tokens} tokens, over the {available} available: "
            "the harness never cuts the protected tail")


def compaction_summary(thread: Thread, ctx: ReplayContext, span: list[Message], current: Summary | None,
                       request, recorded_by_span: Mapping[tuple[str, str], Summary]) -> Summary:
    """The summary that replaces `span` before `request`: the thread's recorded one for exactly
    that span, else a new one chained to `current`."""
    summary = recorded_by_span.get((span[0].id, span[-1].id))
    if summary is not None:
        return summary
    if ctx.summarizer is None:
        raise ValueError(
            f"harness replay of thread {thread.id!r} must compact before request {request.id!r} "
            "but no summarizer was given (pass one to simulate(summarizer=...))"
        )
    return ctx.summarizer.summarize(span, current, summary_id=f"harness-{request.id}", before_request_id=request.id)


def replay(thread: Thread, config: Config, ctx: ReplayContext) -> tuple[list[RequestAudit], list[Summary]]:
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
    costs = message_costs(counter, messages, PROFILE)
    turns = assign_turns(messages)
    groups = tool_groups(messages)
    head = _head_indices(messages)
    system_tokens = text_cost(counter, thread.system_prompt, PROFILE)
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
        trigger_source, trigger_tokens = trigger_reading(request_index, trigger_mode, previous_recorded,
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
        compaction: CompactionAudit | None = None
        fixed_point = False
        if stats.needs_compaction:
            if middle:
                span = [messages[k] for k in middle]
                summary = compaction_summary(thread, ctx, span, current, request, recorded_by_span)
                chain.append(summary)
                for k in middle:
                    covered[k] = summary.id
                current = summary
                current_cost = text_cost(counter, context_summary_text(summary), PROFILE)
                compaction = CompactionAudit("token_threshold", summary.id, span[0].id, span[-1].id)
                middle = []
            elif current is not None:
                fixed_point = True
                diagnostics.append("compaction: the middle is already one [Context Summary] (fixed point)")
            else:
                diagnostics.append("compaction: nothing older than the protected tail to summarize")

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
                diagnostics.append(pruning_stopped_note(remaining, target))
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
            diagnostics.append(over_budget_note(prompt_tokens, available))

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
                    kind=SUMMARY_KIND,
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
                error=RequestError(
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
