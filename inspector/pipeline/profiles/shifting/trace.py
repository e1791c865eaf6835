"""What the built-in truncate's replay shares across budgets: the growing prefix, traced once per thread.

`ShiftingReplayer._truncate` walks the requests with a `PrefixBlocks` and, per request, patches
the blocks whose prefix-dependent fields changed (a tool result joining its call's group, a
group becoming protected, the current input moving). None of that depends on a config key: the
blocks, their costs, their groups and protection are the thread's, and only the cut (how many
of the oldest removable groups go) reads the budget. A config edit replays the same thread under
another window, so the prefix is traced once per thread and counter and every replay reads the
trace: per request, the prefix's end and total cost, and for every block that changed, what
`_truncate` derives from it (its removable position, its kept row's fields, its excluded row,
its audit group). Each of those is computed from the prefix at the request where the block last
changed, which is what `_truncate` computed lazily before (a block's rows are valid until it
changes; `tests/engine/test_shifting_fast.py` checks every audit against the seed-literal reference).

The trace also keeps, every CHECKPOINT_EVERY requests, each message's latest change: the rows of
any request are its messages' latest changes (excluded rows, or kept rows' fields) and the
request's kept list, so the app's replay records no rows at all (`ShiftingReplayer.audit(k)`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from inspector.model import Message, Request, assign_turns, effective_requests
from inspector.pipeline.audit import BlockAudit, BlockStatus, Reason
from inspector.pipeline.profiles.shifting.prefix import PrefixBlocks

Change = tuple[int, int, tuple, BlockAudit, str | None]
"""(message index, removable position or -1 when protected, its kept row's fields but tokens sent,
position, summary and group, its excluded row, its audit group)."""


@dataclass(frozen=True, slots=True)
class PrefixStep:
    """One request's prefix: `messages[: end + 1]`, its cost and the blocks that changed."""

    end: int
    total: int   # cost of the whole prefix
    system: int  # cost of its protected system messages
    changes: tuple[Change, ...]


CHECKPOINT_EVERY = 128
"""`PrefixTrace.latest(k)` starts from request k - k % CHECKPOINT_EVERY, kept whole (`PrefixTrace.every`)."""


@dataclass(frozen=True, slots=True)
class PrefixTrace:
    costs: tuple[int, ...]  # per message (0 for those no request reaches)
    steps: tuple[PrefixStep, ...]
    # request k (a multiple of `every`) -> per message of its prefix, its latest change up to k
    checkpoints: dict[int, tuple[Change, ...]]
    every: int  # CHECKPOINT_EVERY when traced

    def latest(self, k: int) -> list[Change]:
        """Per message of request k's prefix, its latest change up to request k (every message
        changed when it came into the prefix): from the last checkpoint at or before k."""
        start = k - k % self.every
        latest = list(self.checkpoints[start])
        latest.extend([None] * (self.steps[k].end + 1 - len(latest)))  # type: ignore[list-item]  # set below
        for step in self.steps[start + 1 : k + 1]:
            for change in step.changes:
                latest[change[0]] = change
        return latest


def excluded_row(prefix: PrefixBlocks, i: int, cost: int) -> BlockAudit:
    b = prefix.blocks[i]
    first = prefix.first_of(i) == i
    return BlockAudit(
        message_id=b.key,
        role=b.role,
        kind=b.kind,
        turn=b.turn,
        status=BlockStatus.EXCLUDED,
        protected=False,
        reason=Reason.SHIFTED_OLDEST if first else Reason.TOOL_GROUP,
        tokens=cost,
        tokens_sent=0,
        position=None,
        summary_id=None,
        group=prefix.grouped(i),
    )


def build_trace(messages: Sequence[Message], requests: Sequence[Request], index: dict[str, int],
                turns: list[int | None], count) -> PrefixTrace:
    """The prefix of every request in order (`count`: a block's cost, `blocks.block_counter`)."""
    prefix = PrefixBlocks(messages, turns)
    costs = [0] * len(messages)
    total = system = 0
    steps: list[PrefixStep] = []
    latest: list[Change] = []
    checkpoints: dict[int, tuple[Change, ...]] = {}
    every = CHECKPOINT_EVERY
    for k, req in enumerate(requests):
        end = index[req.after_message_id]
        new_from = prefix.end + 1
        dirty = prefix.advance(end)
        blocks = prefix.blocks
        for i in range(new_from, end + 1):
            costs[i] = c = count(blocks[i])
            total += c
            if prefix.own[i] is Reason.PROTECTED_SYSTEM:
                system += c
        changes: list[Change] = []
        for i in dirty:  # the set's own order, as `_truncate` iterated it
            b = blocks[i]
            protection = b.protection
            position = prefix.first_of(i) if protection is None else -1
            args = (b.key, b.role, b.kind, b.turn, BlockStatus.KEPT, protection is not None,
                    Reason.WITHIN_BUDGET if protection is None else protection, costs[i])
            changes.append((i, position, args, excluded_row(prefix, i, costs[i]), prefix.grouped(i)))
        steps.append(PrefixStep(end, total, system, tuple(changes)))
        latest.extend([None] * (end + 1 - len(latest)))  # type: ignore[list-item]  # set below
        for change in changes:
            latest[change[0]] = change
        if k % every == 0:
            checkpoints[k] = tuple(latest)
    return PrefixTrace(tuple(costs), tuple(steps), checkpoints, every)


@dataclass(frozen=True, slots=True)
class ThreadFacts:
    """What a shifting replay reads of its thread before any budget: the requests in thread order
    (`effective_requests`), every message's turn (`assign_turns`; read, never written) and
    whether the message ids are unique (blocks are keyed by id)."""

    requests: tuple[Request, ...]
    turns: list[int | None]
    unique_ids: bool


def thread_facts(thread, counter) -> ThreadFacts:
    """`ThreadFacts` of `thread`, remembered per thread (on `counter`, like `prefix_trace`)."""
    memo = counter.__dict__.setdefault("_shifting_thread_facts", {})
    key = (id(thread.messages), id(thread.requests))
    hit = memo.get(key)
    if hit is not None and hit[0] is thread.messages and hit[1] is thread.requests:
        return hit[2]
    ids = [m.id for m in thread.messages]
    facts = ThreadFacts(effective_requests(thread), assign_turns(thread.messages), len(set(ids)) == len(ids))
    if len(memo) >= 4:
        memo.clear()
    memo[key] = (thread.messages, thread.requests, facts)
    return facts


def prefix_trace(thread, requests: Sequence[Request], turns: list[int | None], counter, count) -> PrefixTrace:
    """`build_trace` of `thread`, remembered per thread and counter (every edit replays the thread)."""
    memo = counter.__dict__.setdefault("_shifting_prefix_traces", {})
    key = (id(thread.messages), id(thread.requests))
    hit = memo.get(key)
    if hit is not None and hit[0] is thread.messages and hit[1] is thread.requests:
        return hit[2]
    trace = build_trace(thread.messages, requests, thread.message_index(), turns, count)
    if len(memo) >= 4:
        memo.clear()
    memo[key] = (thread.messages, thread.requests, trace)
    return trace
