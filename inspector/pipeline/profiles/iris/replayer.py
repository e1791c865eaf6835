"""The iris profile: token budget, newest-first loading of whole turns, tool-output
pruning outside the protected turns, compaction into a summary chain, progressive
fallback N -> 1 -> 0, TOKEN_BUDGET_EXCEEDED.

Sources: seeds/iris-context-management.txt and seeds/iris-summarization.txt; where
they are silent, DESIGN.md's "Semantics" section. `IrisReplayer` replays in time linear
in the thread; the seed-literal reference it is checked against (every request rebuilt from
scratch) is `tests/reference/iris.py`.

A little over 400 lines: the timeline pass and `audit(k)`, the block builder, read the same
per-request state and per-thread tables, and are read together.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from itertools import compress, repeat
from typing import TYPE_CHECKING, NamedTuple

from msgspec.structs import replace  # the audits are msgspec Structs

from inspector.model import Summary, Thread
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
from inspector.pipeline.profiles.common import sent_count
from inspector.pipeline.profiles.iris.stages import (
    OVERHEAD,
    compaction_threshold_tokens,
    covering_summaries,
    fallback_sequence,
    protected_turns,
    requests_in_order,
    summarize_span,
    thread_tables,
)
from inspector.pipeline.thread_memo import label_columns
from inspector.tokens import TokenCounter, text_cost, tools_cost

if TYPE_CHECKING:
    from inspector.pipeline.profiles.base import Settings


class _RequestState(NamedTuple):
    """What the timeline pass decided for one request; enough to rebuild its blocks.

    A NamedTuple rather than a dataclass: one is made per request on every config edit."""

    end: int
    cur: int | None
    covered_upto: int
    chain_len: int
    injected_from: int          # chain[injected_from:chain_len] are injected
    protect: int
    failed: bool
    history_lo: int             # first unsummarized turn message (index)
    loaded_lo: int              # first loaded message (index); end + 1 when none
    shield_lo: int              # first message of the shielded turns within history
    system_tokens: int
    summary_tokens: int
    history_tokens: int


def replay(thread: Thread, config: Settings, ctx) -> tuple[list[RequestAudit], list[Summary]]:
    """Every request with its full block list (the fast replayer, blocks built per request)."""
    replayer = IrisReplayer(thread, config, ctx)
    timeline = replayer.timeline()
    return [replayer.audit(k) for k in range(len(timeline))], replayer.chain



class IrisReplayer(ReplayerBase):
    """Replays the iris pipeline in time linear in the thread.

    Prefix sums over every message's full and pruned cost make each request's
    newest-first fit a binary search over turns; blocks are only built for the
    request being looked at (`audit(k)`). Results equal `tests/reference/iris.py`.
    """

    fills_calibration = True  # its budgets carry calibrated_prompt_tokens (Replay need not add them)

    def __init__(self, thread: Thread, config: Settings, ctx) -> None:
        self.thread, self.config, self.ctx = thread, config, ctx
        counter: TokenCounter = ctx.counter
        tables = thread_tables(counter, thread)
        (self.msgs, self.index, self.turn_of, self.costs, self.is_tool, self.pruned_costs, self.full, self.pruned,
         self.tools, self.talk, self.pre, self.turn_start, self.turn_pruned, self.turn_full, self.labels) = tables
        n = len(self.msgs)
        self.first_turn_index = self.turn_start[1] if len(self.turn_start) > 1 else n
        self.base_system = text_cost(counter, thread.system_prompt, OVERHEAD)
        self.tool_tokens = tools_cost(counter, thread.tools)
        self.requests = requests_in_order(thread, self.index)
        self.chain: list[Summary] = []
        self.summary_cost: dict[str, int] = {}
        self.states: list[_RequestState] = []
        self._timeline: list[RequestAudit] | None = None
        self._budget_keys = (config["context.window"], config["context.token_budget_ratio"],
                             config["context.response_reserve"])

    def _fit(self, cur: int | None, history_lo: int, end: int, protect: int, available: int):
        """(ok, loaded_lo, shield_lo, history_tokens, needed) for one fallback attempt.

        Loading turns newest-first until one does not fit is finding the oldest turn t whose
        messages from its start to `end` cost at most `available`, tool outputs before the
        shielded turns at their placeholder cost. That cost falls as t grows, so two bisections
        over the per-turn prefix sums find t: one over the unshielded turns (pruned costs up to
        the shield, then full ones), one over the shielded turns (full costs).
        """
        if cur is None or history_lo > end:
            return available >= 0, end + 1, end + 1, 0, 0
        turn_start, pruned, full = self.turn_start, self.pruned, self.full
        first = self.turn_of[history_lo] or 1
        shielded_first = max(1, cur - protect + 1) if protect > 0 else cur + 1
        shield_lo = max(history_lo, turn_start[shielded_first]) if shielded_first <= cur else end + 1
        full_end, pruned_shield = full[end + 1], pruned[shield_lo]
        shielded_cost = full_end - full[shield_lo]

        def cost_from(start: int) -> int:  # messages start..end; shield_lo >= history_lo always
            if start <= shield_lo:
                return pruned_shield - pruned[start] + shielded_cost
            return full_end - full[start]

        if cost_from(history_lo) <= available:
            loaded_turn = first
        else:
            a_lo = first + 1
            a_hi = max(a_lo, min(shielded_first, cur) + 1)
            # unshielded starts: pruned_shield - turn_pruned[t] + shielded_cost <= available
            loaded_turn = bisect_left(self.turn_pruned, pruned_shield + shielded_cost - available, a_lo, a_hi)
            if loaded_turn == a_hi:  # shielded starts: full_end - turn_full[t] <= available
                loaded_turn = bisect_left(self.turn_full, full_end - available, a_hi, cur + 1)
        must_first = max(shielded_first, first) if protect > 0 else cur
        needed = cost_from(max(history_lo, turn_start[must_first]))
        if loaded_turn > cur:
            return False, end + 1, shield_lo, 0, needed
        start = max(history_lo, turn_start[loaded_turn])
        ok = loaded_turn <= must_first and available >= 0
        return ok, start, shield_lo, cost_from(start), needed

    def timeline(self) -> list[RequestAudit]:
        """Per-request aggregates for every request (no block lists).

        This runs on every config edit over thousands of requests, so the loop keeps to
        local names and plain arithmetic; `tests/reference/iris.py` is the readable yardstick.
        """
        if self._timeline is not None:
            return self._timeline
        cfg = self.config
        window, ratio = cfg["context.window"], cfg["context.token_budget_ratio"]
        reserve, n_protect = cfg["context.response_reserve"], cfg["context.prune_protect_turns"]
        max_injected, guard = cfg["summarization.max_injected"], cfg["summarization.threshold"]
        recorded_trigger = cfg["context.trigger_tokens"] == "recorded"
        calibration = getattr(self.ctx, "calibration", None)
        counterfactual = recorded_trigger and calibration is not None and not calibration.identity_model
        compact_at = window * cfg["context.compaction_threshold"]  # should_compact_on_tokens, inlined
        budget_tokens = math.floor(window * ratio)
        threshold_tokens = compaction_threshold_tokens(cfg)
        attempts = fallback_sequence(n_protect)
        thread, msgs, index, turn_of, talk = self.thread, self.msgs, self.index, self.turn_of, self.talk
        turn_start, pre, first_turn_index = self.turn_start, self.pre, self.first_turn_index
        base_system, tool_tokens = self.base_system, self.tool_tokens
        chain, summary_cost, states, fit = self.chain, self.summary_cost, self.states, self._fit
        follow_recorded = bool(getattr(self.ctx, "follow_recorded", False)) and bool(thread.summaries)
        recorded_by_request = {s.before_request_id: s for s in thread.summaries if s.before_request_id}
        recorded_by_span = {(s.first_message_id, s.last_message_id): s for s in thread.summaries}
        covered_upto = -1
        injected: tuple[str, ...] = ()
        injected_key: tuple[int, int] = (0, 0)
        summary_tokens = 0
        out: list[RequestAudit] = []
        requests = self.requests
        for k, req in enumerate(requests):
            end = index[req.after_message_id]
            cur = turn_of[end]
            # _trigger: the previous request's recorded prompt tokens where known, else its replayed estimate
            if k == 0:
                trigger_tokens = trigger_source = None
            elif counterfactual:
                # the recorded count only while the replayed history is the recorded one, else the
                # calibrated prompt of this replay's own previous request (DESIGN.md "Trigger tokens")
                prev = out[-1].budget
                trigger_tokens, trigger_source = calibration.reading(
                    k - 1, prev.needed_tokens if prev.needed_tokens is not None else prev.prompt_tokens,
                    sent_count(out[-1].stats["block_counts"]),
                    recorded_history=k - 1 < len(calibration) and len(chain) == calibration.segments[k - 1])
            elif recorded_trigger and requests[k - 1].prompt_tokens is not None:
                trigger_tokens, trigger_source = requests[k - 1].prompt_tokens, "recorded"
            else:
                prev = out[-1].budget
                trigger_tokens = prev.needed_tokens if prev.needed_tokens is not None else prev.prompt_tokens
                trigger_source = "estimated"
            over = trigger_tokens is not None and trigger_tokens >= compact_at
            # eligible span: unsummarized turn messages of turns <= cur - N - 1
            lo = max(covered_upto + 1, first_turn_index)
            if cur is not None and cur - n_protect - 1 >= 1:
                hi = min(end, turn_start[cur - n_protect] - 1)
            else:
                hi = lo - 1
            guard_count = talk[hi + 1] - talk[lo] if hi >= lo else 0
            new_summary: Summary | None = None
            trigger: str | None = None
            if follow_recorded:
                recorded = recorded_by_request.get(req.id)
                if recorded is not None and recorded.last_message_id in index:
                    new_summary = recorded
                    trigger = "token_threshold" if over else "message_count" if guard_count >= guard else "recorded"
            elif hi >= lo:
                trigger = "token_threshold" if over else "message_count" if guard_count >= guard else None
                if trigger:
                    span = (msgs[lo].id, msgs[hi].id)
                    new_summary = recorded_by_span.get(span) or summarize_span(
                        self.ctx, msgs, list(range(lo, hi + 1)), chain, req)
            compaction = None
            if new_summary is not None and trigger is not None:
                chain.append(new_summary)
                covered_upto = max(covered_upto, index[new_summary.last_message_id])
                compaction = CompactionAudit(trigger, new_summary.id, new_summary.first_message_id,
                                             new_summary.last_message_id)
            chain_len = len(chain)
            injected_from = max(0, chain_len - max_injected) if max_injected > 0 else chain_len
            if (injected_from, chain_len) != injected_key:
                injected_key = (injected_from, chain_len)
                for s in chain[injected_from:]:
                    if s.id not in summary_cost:
                        summary_cost[s.id] = text_cost(self.ctx.counter, s.injected_text(), OVERHEAD)
                injected = tuple(s.id for s in chain[injected_from:])
                summary_tokens = sum(summary_cost[s] for s in injected)
            system_tokens = base_system + pre[end + 1]
            # TokenBudget(...).available, inlined
            available = budget_tokens - system_tokens - tool_tokens - summary_tokens - reserve
            history_lo = max(covered_upto + 1, first_turn_index)
            for protect in attempts:
                ok, loaded_lo, shield_lo, history_tokens, needed = fit(cur, history_lo, end, protect, available)
                if ok:
                    break
            state = _RequestState(end, cur, covered_upto, chain_len, injected_from, protect, not ok, history_lo,
                                  loaded_lo, shield_lo, system_tokens, summary_tokens, history_tokens if ok else 0)
            states.append(state)
            out.append(self._aggregate(k, req, state, available, trigger_tokens, trigger_source, compaction,
                                       needed, guard_count, injected, budget_tokens, threshold_tokens))
            if compaction is not None and counterfactual:
                prompt_after = out[-1].budget.prompt_tokens or out[-1].budget.needed_tokens or 0
                after = calibration.calibrated(k, prompt_after, sent_count(out[-1].stats["block_counts"]))
                if after >= compact_at:
                    out[-1] = replace(out[-1], diagnostics=(
                        f"the kept tail alone ({after:,} calibrated tokens, the protected turns and the agent's "
                        f"own part) is over the threshold {threshold_tokens:,}: the next request compacts again "
                        "if it has anything to summarize",))
        self._timeline = out
        return out

    def _counts(self, st: _RequestState) -> dict[str, int]:
        """Message blocks per status, from the prefix counts of tool messages."""
        end1, first, tools = st.end + 1, self.first_turn_index, self.tools
        kept = min(end1, first)  # pre-turn system blocks
        summarized = max(0, min(st.covered_upto + 1, end1) - first)
        history_n = end1 - st.history_lo if st.history_lo < end1 else 0
        if st.failed:
            pruned = tools[min(st.shield_lo, end1)] - tools[st.history_lo] if history_n else 0
            excluded = history_n - pruned
        else:
            loaded_lo = st.loaded_lo
            loaded_n = end1 - loaded_lo
            pruned = tools[max(loaded_lo, min(st.shield_lo, end1))] - tools[loaded_lo] if loaded_n > 0 else 0
            kept += loaded_n - pruned
            excluded = history_n - loaded_n
        counts = {"kept": kept} if kept else {}
        if summarized:
            counts["summarized"] = summarized
        if pruned:
            counts["pruned"] = pruned
        if excluded:
            counts["excluded"] = excluded
        return counts

    def _aggregate(self, k, req, st: _RequestState, available, trigger_tokens, trigger_source, compaction,
                   needed, guard_count, injected, budget_tokens, threshold_tokens) -> RequestAudit:
        window, ratio, reserve = self._budget_keys
        failed = st.failed
        savings = 0
        if failed:
            prompt = 0
            needed_tokens = st.system_tokens + self.tool_tokens + st.summary_tokens + reserve + needed
            error = RequestError(
                code="TOKEN_BUDGET_EXCEEDED",
                message=(f"protected context needs {needed_tokens} tokens with every tool output pruned; "
                         f"the budget is {budget_tokens} ({window} x {ratio})"),
            )
        else:
            prompt = st.system_tokens + self.tool_tokens + st.summary_tokens + st.history_tokens
            needed_tokens = error = None
            lo = st.loaded_lo
            mid = max(lo, min(st.shield_lo, st.end + 1))
            if mid > lo:  # what pruning saved: full minus placeholder costs of the pruned span
                savings = (self.full[mid] - self.full[lo]) - (self.pruned[mid] - self.pruned[lo])
        # Positional arguments: the field order of BudgetAudit and RequestAudit (audit.py).
        estimate = needed_tokens if failed else prompt
        calibration = self.ctx.calibration
        counts = self._counts(st)
        calibrated = None if calibration is None else calibration.calibrated(k, estimate, sent_count(counts))
        budget = BudgetAudit(window, st.system_tokens, self.tool_tokens, st.summary_tokens, reserve, available,
                             st.history_tokens, prompt, req.prompt_tokens, trigger_source, trigger_tokens, savings,
                             needed_tokens, calibrated, None if calibrated is None else calibrated - estimate)
        stats = {
            "compaction_threshold_tokens": threshold_tokens,
            "budget_tokens": budget_tokens,
            "unsummarized_guard_count": guard_count,
            "block_counts": counts,
        }
        return RequestAudit(k, req.id, req.after_message_id, st.cur, "failed" if failed else "completed", error,
                            budget, compaction, injected, st.protect, (), (), stats)

    def statuses(self, k: int, indices) -> dict[int, BlockStatus]:
        """The status `audit(k)` gives each message index of `indices` up to the request's last
        message, without building the request's blocks (what a probe reads)."""
        self.timeline()
        st = self.states[k]
        out: dict[int, BlockStatus] = {}
        for i in indices:
            if i > st.end:
                continue
            if self.turn_of[i] is None:
                out[i] = BlockStatus.KEPT
            elif i <= st.covered_upto:
                out[i] = BlockStatus.SUMMARIZED
            elif self.is_tool[i] and i < st.shield_lo and (st.failed or i >= st.loaded_lo):
                out[i] = BlockStatus.PRUNED
            elif not st.failed and i >= st.loaded_lo:
                out[i] = BlockStatus.KEPT
            else:
                out[i] = BlockStatus.EXCLUDED
        return out

    def summary_spans(self) -> dict[str, tuple[str, ...]]:
        """Summary id -> ids of the messages its compaction replaced (what `audit(k)` marks summarized
        by it), without building any request's blocks."""
        self.timeline()
        # `covering_summaries` gives each summary the indices from the end of the ones before it to its
        # last message: contiguous ranges in chain order, each sliced here in one C-level pass.
        mids = label_columns(self.ctx.counter, self.labels)[0]
        in_turn = [turn is not None for turn in self.turn_of]
        index = self.index
        out: dict[str, tuple[str, ...]] = {}
        start = 0
        for s in self.chain:
            last = index.get(s.last_message_id, -1)
            if last >= start:
                ids = tuple(compress(mids[start:last + 1], in_turn[start:last + 1]))
                if ids:
                    out[s.id] = out.get(s.id, ()) + ids
                start = last + 1
        return out

    def audit(self, k: int) -> RequestAudit:
        """Request `k` with every block (builds blocks for that request only)."""
        agg = self.timeline()[k]
        st = self.states[k]
        turn_of, costs, pcosts = self.turn_of, self.costs, self.pruned_costs
        chain = self.chain[: st.chain_len]
        covering = covering_summaries(chain, self.index) if st.covered_upto >= 0 else {}
        shield_turns = protected_turns(st.cur, st.protect)
        blocks: list[BlockAudit] = []
        position = 0
        failed = st.failed
        injected_ids = set(agg.summaries_injected)
        # Sent blocks in prompt order: the pre-turn system blocks, the injected summaries, then the history.
        history_position = 0 if failed else (min(st.end + 1, self.first_turn_index)
                                              + sum(1 for s in chain if s.id in injected_ids))
        labels, is_tool, covered_upto, loaded_lo, shield_lo, cur = (
            self.labels, self.is_tool, st.covered_upto, st.loaded_lo, st.shield_lo, st.cur)
        kept, pruned, excluded, summarized = (
            BlockStatus.KEPT, BlockStatus.PRUNED, BlockStatus.EXCLUDED, BlockStatus.SUMMARIZED)
        # Positional BlockAudit(message_id, role, kind, turn, status, protected, reason, tokens, tokens_sent,
        # position, summary_id): one per message, so the loop keeps to locals. The summarized blocks
        # (messages first_turn_index..covered_upto: the turn messages before them have no turn) are
        # made in one C-level map: the last request of a long thread summarizes thousands.
        summarized_lo = self.first_turn_index
        summarized_hi = min(covered_upto, st.end) + 1
        mids, roles, kinds = label_columns(self.ctx.counter, labels)
        i = 0
        while i <= st.end:
            if i == summarized_lo and i < summarized_hi:
                a, b = i, summarized_hi
                n = b - a
                blocks.extend(map(BlockAudit, mids[a:b], roles[a:b], kinds[a:b], turn_of[a:b], repeat(summarized, n),
                                  repeat(False, n), repeat(Reason.SUMMARIZED, n), costs[a:b], repeat(0, n),
                                  repeat(None, n), map(covering.get, range(a, b))))
                i = b
                continue
            mid, role, kind = labels[i]
            t = turn_of[i]
            if t is None:
                blocks.append(BlockAudit(mid, role, kind, t, kept, True, Reason.SYSTEM,
                                         costs[i], 0 if failed else costs[i], None if failed else position))
                position += 0 if failed else 1
            elif i <= covered_upto:
                blocks.append(BlockAudit(mid, role, kind, t, summarized, False, Reason.SUMMARIZED, costs[i], 0, None,
                                         covering.get(i)))
            elif not failed and i >= loaded_lo:
                is_protected = t in shield_turns
                if is_tool[i] and i < shield_lo:
                    status, reason, sent = pruned, Reason.TOOL_OUTPUT_CLEARED, pcosts[i]
                else:
                    status, sent = kept, costs[i]
                    reason = Reason.CURRENT_TURN if t == cur else (
                        Reason.PROTECTED_TURN if is_protected else Reason.WITHIN_BUDGET)
                blocks.append(BlockAudit(mid, role, kind, t, status, is_protected, reason, costs[i], sent,
                                         history_position))
                history_position += 1
            else:
                is_protected = t in shield_turns
                if failed:
                    status = pruned if is_tool[i] and i < shield_lo else excluded
                    reason = Reason.TOKEN_BUDGET_EXCEEDED
                else:
                    status, reason = excluded, Reason.BUDGET_EXHAUSTED
                blocks.append(BlockAudit(mid, role, kind, t, status, is_protected, reason, costs[i], 0, None))
            i += 1
        for s in chain:
            is_injected = s.id in injected_ids
            sent = is_injected and not failed
            blocks.append(BlockAudit(
                None, "system", "summary", None, BlockStatus.KEPT if sent else BlockStatus.EXCLUDED, is_injected,
                Reason.SUMMARY_INJECTED if is_injected else Reason.SUMMARY_NOT_INJECTED,
                self.summary_cost.get(s.id) or text_cost(self.ctx.counter, s.injected_text(), OVERHEAD),
                self.summary_cost.get(s.id, 0) if sent else 0, position if sent else None, summary_id=s.id,
            ))
            position += 1 if sent else 0
        stats = dict(agg.stats)
        stats.pop("block_counts", None)
        return replace(agg, blocks=tuple(blocks), stats=stats)
