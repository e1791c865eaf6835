"""The iris profile's pure stages (budget figures, protected turns, the fallback sequence,
the summary chain's coverage) and the per-thread tables the replayer searches: every
message's full and pruned cost with their prefix sums. Sources: see `replayer`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from inspector.model import Message, Request, Role, Summary, Thread, assign_turns, effective_requests
from inspector.tokens import TokenCounter, message_costs

if TYPE_CHECKING:
    from inspector.pipeline.profiles.base import Settings

PLACEHOLDER = "[Tool output cleared]"
OVERHEAD = 0  # tokens iris adds to each message's content: none


def compaction_threshold_tokens(config: Settings) -> int:
    return math.ceil(config["context.window"] * config["context.compaction_threshold"])


def protected_turns(current_turn: int | None, n: int) -> range:
    """The N most recent turns, the current one included."""
    if not current_turn or n <= 0:
        return range(0)
    return range(max(1, current_turn - n + 1), current_turn + 1)


def fallback_sequence(n: int) -> list[int]:
    """Configured value -> 1 -> 0, without repeats."""
    out = [n]
    for step in (1, 0):
        if step < out[-1]:
            out.append(step)
    return out


def summarize_span(ctx, msgs: list[Message], eligible: list[int], chain: list[Summary], req: Request) -> Summary:
    if ctx.summarizer is None:
        raise ValueError("compaction needs a summarizer (summarization.summarizer)")
    span = msgs[eligible[0] : eligible[-1] + 1]
    return ctx.summarizer.summarize(
        span,
        chain[-1] if chain else None,
        summary_id=f"replay-{req.id}",
        before_request_id=req.id,
    )


def covering_summaries(chain: list[Summary], index: dict[str, int]) -> dict[int, str]:
    """Message index -> id of the summary that covers it (the first one that does)."""
    out: dict[int, str] = {}
    start = 0
    for s in chain:
        last = index.get(s.last_message_id, -1)
        first = index.get(s.first_message_id, start)
        for i in range(min(first, start), last + 1):
            out.setdefault(i, s.id)
        start = max(start, last + 1)
    return out


def build_tables(counter: TokenCounter, thread: Thread) -> tuple:
    """Everything about a thread that no config key changes: costs and their prefix sums."""
    msgs = list(thread.messages)
    index = {m.id: i for i, m in enumerate(msgs)}
    turn_of = assign_turns(msgs)
    costs = message_costs(counter, thread.messages, OVERHEAD)
    placeholder = counter.count(PLACEHOLDER) + OVERHEAD
    is_tool = [m.role is Role.TOOL for m in msgs]
    pruned_costs = [placeholder if t else c for t, c in zip(is_tool, costs, strict=True)]
    n = len(msgs)
    full = [0] * (n + 1)
    pruned = [0] * (n + 1)
    tools = [0] * (n + 1)
    talk = [0] * (n + 1)
    pre = [0] * (n + 1)
    for i in range(n):
        in_turn = turn_of[i] is not None
        full[i + 1] = full[i] + (costs[i] if in_turn else 0)
        pruned[i + 1] = pruned[i] + (pruned_costs[i] if in_turn else 0)
        tools[i + 1] = tools[i] + (1 if in_turn and is_tool[i] else 0)
        talk[i + 1] = talk[i] + (1 if in_turn and msgs[i].role in (Role.USER, Role.ASSISTANT) else 0)
        pre[i + 1] = pre[i] + (0 if in_turn else costs[i])
    turn_start: list[int] = [n]  # turn_start[t] = index of turn t's first message
    for i, t in enumerate(turn_of):
        if t is not None and t == len(turn_start):
            turn_start.append(i)
    # The prefix sums at each turn's first message: non-decreasing in t, so `bisect` finds
    # the oldest turn that still fits (index 0 is a sentinel that no search reaches).
    turn_pruned = [0] + [pruned[i] for i in turn_start[1:]]
    turn_full = [0] + [full[i] for i in turn_start[1:]]
    labels = [(m.id, str(m.role), str(m.kind)) for m in msgs]  # what every BlockAudit of a message repeats
    return (msgs, index, turn_of, costs, is_tool, pruned_costs, full, pruned, tools, talk, pre, turn_start,
            turn_pruned, turn_full, labels)


def thread_tables(counter: TokenCounter, thread: Thread) -> tuple:
    """`build_tables`, remembered per thread and counter: config edits replay the same thread."""
    memo = counter.__dict__.setdefault("_iris_tables", {})
    hit = memo.get(id(thread.messages))
    if hit is not None and hit[0] is thread.messages:
        return hit[1]
    tables = build_tables(counter, thread)
    if len(memo) >= 4:
        memo.clear()
    memo[id(thread.messages)] = (thread.messages, tables)
    return tables


def requests_in_order(thread: Thread, index: dict[str, int]) -> tuple[Request, ...]:
    """`effective_requests`, with the message index the tables already hold."""
    if not thread.requests:
        return effective_requests(thread)
    known = [r for r in thread.requests if r.after_message_id in index]
    return tuple(sorted(known, key=lambda r: index[r.after_message_id]))
