"""The harness profile in time linear in the thread: the timeline at once, blocks on demand.

The reference (`tests/reference/harness.py`) rebuilds every request from the whole thread (readable;
`tests/engine/test_harness_fast.py` pins identical audits). Here the live messages (visible, not
yet summarized or elided) are kept in order with their running cost, so a request that
neither compacts nor prunes costs only its protected tail; compaction and pruning walk the
live messages, which they then shrink. Each message remembers the request that summarized
or elided it, which is all `audit(k)` needs to rebuild request k's blocks.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from msgspec.structs import replace  # the audits are msgspec Structs

from inspector.model import Role, Summary, Thread, assign_turns, effective_requests, tool_groups
from inspector.pipeline.audit import (
    BlockAudit,
    BlockStatus,
    BudgetAudit,
    CompactionAudit,
    Reason,
    RequestAudit,
    RequestError,
)
from inspector.pipeline.profiles.base import ReplayerBase
from inspector.pipeline.profiles.harness.stages import (
    FIXED_POINT_NOTE,
    NOTHING_TO_COMPACT_NOTE,
    OVERHEAD,
    SUMMARY_KIND,
    Policy,
    compaction_summary,
    context_stats,
    context_summary_text,
    head_indices,
    over_budget_note,
    plan_removals,
    pruning_stopped_note,
    trigger_reading,
)
from inspector.pipeline.thread_memo import remembered
from inspector.tokens import TokenCounter, message_costs, text_cost, tools_cost

if TYPE_CHECKING:
    from inspector.pipeline.profiles.base import Settings

NEVER = 1 << 62  # `gone_at` of a message nothing summarized or elided


@dataclass(frozen=True, slots=True)
class _ThreadFacts:
    """What the replayer reads from the thread alone (shared by every replay of it: read only)."""

    index: dict[str, int]
    costs: list[int]
    turns: list[int | None]
    groups: list[int]
    head: set[int]
    head_sorted: list[int]
    non_head: list[int]
    members: dict[int, list[int]]
    system_tokens: int
    tool_tokens: int
    requests: tuple
    # per message, as audit(k) writes them in its blocks
    ids: list[str]
    roles: list[str]
    kinds: list[str]
    group_ids: list[str | None]  # the audit's `group`: the group's first message where it has partners or calls
    not_prunable: list[bool]     # neither a tool output nor an assistant message

    @classmethod
    def of(cls, thread: Thread, counter: TokenCounter) -> _ThreadFacts:
        messages = thread.messages
        groups = tool_groups(messages)
        head = head_indices(messages)
        members: dict[int, list[int]] = {}
        for k, g in enumerate(groups):
            members.setdefault(g, []).append(k)
        return cls(thread.message_index(), message_costs(counter, messages, OVERHEAD), assign_turns(messages),
                   groups, head, sorted(head), [k for k in range(len(messages)) if k not in head], members,
                   text_cost(counter, thread.system_prompt, OVERHEAD), tools_cost(counter, thread.tools),
                   effective_requests(thread), [m.id for m in messages], [m.role.value for m in messages],
                   [m.kind.value for m in messages],
                   [messages[g].id if g != i or m.tool_calls else None for i, (m, g) in enumerate(zip(messages, groups,
                                                                                                     strict=True))],
                   [m.role.value not in (Role.TOOL, Role.ASSISTANT) for m in messages])


class HarnessReplayer(ReplayerBase):
    """`timeline()` for every request, `audit(k)` with blocks for one; equal to the reference."""

    fills_calibration = True  # its budgets carry calibrated_prompt_tokens (Replay need not add them)

    def __init__(self, thread: Thread, config: Settings, ctx) -> None:
        self.thread, self.config, self.ctx = thread, config, ctx
        facts = remembered(ctx.counter, "harness", thread, lambda: _ThreadFacts.of(thread, ctx.counter))
        self.index, self.costs, self.turns, self.groups = facts.index, facts.costs, facts.turns, facts.groups
        self.head, self.head_sorted, self.non_head, self.members = (
            facts.head, facts.head_sorted, facts.non_head, facts.members)
        self.system_tokens, self.tool_tokens, self.requests = facts.system_tokens, facts.tool_tokens, facts.requests
        self.facts = facts
        messages = thread.messages
        # Filled by timeline(): per message, the request that summarized or elided it, and how.
        self.gone_at = [NEVER] * len(messages)
        self.covered: dict[int, str] = {}
        self.elided: dict[int, Reason] = {}
        self.chain: list[Summary] = []
        # Per request: what audit(k) needs beyond the aggregate.
        self._tails: list[frozenset[int]] = []
        self._partners: list[frozenset[int]] = []
        self._pruned_now: list[bool] = []
        self._current: list[tuple[Summary, int] | None] = []
        self._timeline: list[RequestAudit] | None = None

    def timeline(self) -> list[RequestAudit]:
        """Per-request aggregates (no block lists), with the message block counts in `stats`."""
        if self._timeline is not None:
            return self._timeline
        window, compaction_threshold, pruning_threshold, keep_last, trigger_mode, reserve, available, target = (
            Policy.of(self.config))
        messages, costs, groups, members = self.thread.messages, self.costs, self.groups, self.members
        non_head, head, head_sorted = self.non_head, self.head, self.head_sorted
        gone_at, covered, elided = self.gone_at, self.covered, self.elided
        counter: TokenCounter = self.ctx.counter
        recorded_by_span = {(s.first_message_id, s.last_message_id): s for s in self.thread.summaries}
        head_prefix = [0]
        for k in head_sorted:
            head_prefix.append(head_prefix[-1] + costs[k])

        live: list[int] = []  # visible non-head messages not summarized or elided, in thread order
        live_cost = 0
        visible = 0  # non_head[:visible] are the messages up to the current request's last one
        current: Summary | None = None
        current_cost = 0
        previous_recorded: int | None = None
        previous_replayed: int | None = None
        previous_blocks: int | None = None  # the message blocks the previous request sent
        calibration = getattr(self.ctx, "calibration", None)  # the counterfactual trigger's model
        out: list[RequestAudit] = []
        for ri, request in enumerate(self.requests):
            last = self.index[request.after_message_id]
            diagnostics: list[str] = []
            trigger_source, trigger_tokens = trigger_reading(ri, trigger_mode, previous_recorded, previous_replayed,
                                                             calibration, previous_blocks)
            stats = context_stats(trigger_tokens or 0, window, compaction_threshold, pruning_threshold)

            # Messages that came into view since the previous request.
            upto = bisect_right(non_head, last)
            for k in non_head[visible:upto]:
                live.append(k)
                live_cost += costs[k]
            visible = upto

            # The protected tail (the last keep_last visible messages still live) and its group partners.
            tail = frozenset()
            if keep_last > 0:
                tail = frozenset(k for k in non_head[max(0, visible - keep_last) : visible] if gone_at[k] == NEVER)
            tail_groups = {groups[k] for k in tail}
            partners = frozenset(
                m for g in tail_groups for m in members[g]
                if m <= last and m not in head and gone_at[m] == NEVER and m not in tail
            )
            protected = tail | partners

            compaction: CompactionAudit | None = None
            fixed_point = False
            if stats.needs_compaction:
                middle = [k for k in live if k not in protected]
                if middle:
                    span = [messages[k] for k in middle]
                    summary = compaction_summary(self.thread, self.ctx, span, current, request, recorded_by_span)
                    self.chain.append(summary)
                    for k in middle:
                        covered[k] = summary.id
                        gone_at[k] = ri
                    live = [k for k in live if k in protected]
                    live_cost = sum(costs[k] for k in live)
                    current = summary
                    current_cost = text_cost(counter, context_summary_text(summary), OVERHEAD)
                    compaction = CompactionAudit("token_threshold", summary.id, span[0].id, span[-1].id)
                elif current is not None:
                    fixed_point = True
                    diagnostics.append(FIXED_POINT_NOTE)
                else:
                    diagnostics.append(NOTHING_TO_COMPACT_NOTE)

            if stats.needs_pruning:
                middle = [k for k in live if k not in protected]
                roles = ([Role.USER.value] if current is not None else []) + [messages[k].role.value for k in middle]
                middle_costs = ([current_cost] if current is not None else []) + [costs[k] for k in middle]
                middle_groups: list[Hashable] = ["summary"] if current is not None else []
                middle_groups += [groups[k] for k in middle]
                offset = 1 if current is not None else 0
                removals = plan_removals(roles, middle_costs, target, middle_groups)
                for j, reason in removals.items():
                    k = middle[j - offset]
                    elided[k] = reason
                    gone_at[k] = ri
                remaining = sum(c for j, c in enumerate(middle_costs) if j not in removals)
                if remaining >= target:
                    diagnostics.append(pruning_stopped_note(remaining, target))
                if removals:
                    live = [k for k in live if gone_at[k] == NEVER]
                    live_cost = sum(costs[k] for k in live)

            heads = bisect_right(head_sorted, last)
            history_tokens = head_prefix[heads] + live_cost
            summary_tokens = current_cost if current is not None else 0
            prompt_tokens = self.system_tokens + self.tool_tokens + summary_tokens + history_tokens
            failed = prompt_tokens > available
            if failed:
                diagnostics.append(over_budget_note(prompt_tokens, available))
            counts = {"kept": heads + len(live), "summarized": len(covered), "excluded": len(elided)}
            self._tails.append(tail)
            self._partners.append(partners)
            self._pruned_now.append(stats.needs_pruning)
            self._current.append((current, current_cost) if current is not None else None)
            calibrated = None if calibration is None else calibration.calibrated(ri, prompt_tokens, counts["kept"])
            out.append(RequestAudit(
                ri, request.id, request.after_message_id, self.turns[last], "failed" if failed else "completed",
                RequestError("TOKEN_BUDGET_EXCEEDED",
                             f"prompt of {prompt_tokens} tokens exceeds the {available} available") if failed else None,
                BudgetAudit(window, self.system_tokens, self.tool_tokens, summary_tokens, reserve, available,
                            0 if failed else history_tokens, 0 if failed else prompt_tokens, request.prompt_tokens,
                            trigger_source, trigger_tokens, 0, prompt_tokens if failed else None, calibrated,
                            None if calibrated is None else calibrated - prompt_tokens),
                compaction,
                (current.id,) if current is not None and not failed else (),
                None,
                (),
                tuple(diagnostics),
                {
                    "usage_percent": stats.usage_percent,
                    "needs_compaction": stats.needs_compaction,
                    "needs_pruning": stats.needs_pruning,
                    "compaction_fixed_point": fixed_point,
                    "block_counts": {status: n for status, n in counts.items() if n},
                },
            ))
            previous_recorded = request.prompt_tokens
            previous_replayed = prompt_tokens  # a failed request still tells the harness its prompt size
            previous_blocks = counts["kept"]
        self._timeline = out
        return out

    def statuses(self, k: int, indices) -> dict[int, BlockStatus]:
        """The status `audit(k)` gives each message index of `indices` up to the request's last
        message, without building the request's blocks (what a probe reads)."""
        last = self.index[self.timeline()[k].after_message_id]
        out: dict[int, BlockStatus] = {}
        for i in indices:
            if i > last:
                continue
            if i in self.head or self.gone_at[i] > k:
                out[i] = BlockStatus.KEPT
            else:
                out[i] = BlockStatus.SUMMARIZED if i in self.covered else BlockStatus.EXCLUDED
        return out

    def summary_spans(self) -> dict[str, tuple[str, ...]]:
        """Summary id -> ids of the messages its compaction replaced (what `audit(k)` marks summarized
        by it), without building any request's blocks."""
        self.timeline()
        out: dict[str, list[str]] = {}
        for i in sorted(self.covered):
            out.setdefault(self.covered[i], []).append(self.thread.messages[i].id)
        return {sid: tuple(ids) for sid, ids in out.items()}

    def audit(self, k: int) -> RequestAudit:
        """Request `k` with every block, rebuilt from what the timeline remembered."""
        agg = self.timeline()[k]
        last = self.index[agg.after_message_id]
        tail, partners, pruned_now, current = self._tails[k], self._partners[k], self._pruned_now[k], self._current[k]
        failed = agg.failed
        costs, turns, head, gone_at = self.costs, self.turns, self.head, self.gone_at
        # Sent order: head system messages, the [Context Summary], then the live messages in thread order.
        sent = self.head_sorted[: bisect_right(self.head_sorted, last)] + ([-1] if current is not None else [])
        sent += [i for i in self.non_head[: bisect_right(self.non_head, last)] if gone_at[i] > k]
        position = {i: p for p, i in enumerate(sent)}
        facts = self.facts
        ids, roles, kinds, group_ids, not_prunable = (
            facts.ids, facts.roles, facts.kinds, facts.group_ids, facts.not_prunable)
        covered, elided = self.covered, self.elided
        blocks: list[BlockAudit] = []
        append = blocks.append
        for i in range(last + 1):  # per-message fields from the thread's columns (no enum reads per block)
            summary_id: str | None = None
            is_protected = i in head or i in tail or i in partners
            if i in head:
                status, reason = BlockStatus.KEPT, Reason.SYSTEM
            elif gone_at[i] <= k and i in covered:
                status, reason, summary_id = BlockStatus.SUMMARIZED, Reason.SUMMARIZED, covered[i]
            elif gone_at[i] <= k:
                status, reason = BlockStatus.EXCLUDED, elided[i]
            elif i in tail:
                status, reason = BlockStatus.KEPT, Reason.KEEP_LAST
            elif i in partners:
                status, reason = BlockStatus.KEPT, Reason.PROTECTED_GROUP
            elif pruned_now and not_prunable[i]:
                status, reason = BlockStatus.KEPT, Reason.NOT_PRUNABLE
            else:
                status, reason = BlockStatus.KEPT, Reason.WITHIN_BUDGET
            sent_position = position[i] if status is BlockStatus.KEPT and not failed else None
            append(BlockAudit(
                ids[i], roles[i], kinds[i], turns[i], status, is_protected, reason, costs[i],
                0 if sent_position is None else costs[i], sent_position, summary_id, group_ids[i],
            ))
        if current is not None:
            summary, cost = current
            blocks.append(BlockAudit(None, Role.USER.value, SUMMARY_KIND, None, BlockStatus.KEPT, False,
                                     Reason.CONTEXT_SUMMARY, cost, 0 if failed else cost,
                                     None if failed else position[-1], summary.id))
        stats = dict(agg.stats)
        stats.pop("block_counts", None)
        return replace(agg, blocks=tuple(blocks), stats=stats)
