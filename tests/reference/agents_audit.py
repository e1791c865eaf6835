"""`AgentReplayer.audit` as first written, block by block: the oracle of
`tests/engine/test_agent_audit_reference.py` (the replayer now makes runs of summarized blocks at once)."""

from __future__ import annotations

from bisect import bisect_left

from msgspec.structs import replace  # the audits are msgspec Structs

from inspector.pipeline.audit import BlockAudit, BlockStatus, Reason, RequestAudit
from inspector.pipeline.profiles.agents import (
    KEPT_AFTER_COMPACTION,
    SINCE_COMPACTION,
    TOOL_OUTPUT_PRUNED,
    TOOL_RESULT_CLEARED,
)


def audit(self, k: int) -> RequestAudit:  # self: an AgentReplayer
    """Request `k` with every block, in thread order, positions in prompt order."""
    agg = self.timeline()[k]
    st = self.states[k]
    t, rules = self.t, self.rules
    failed = st.failed
    summary = self.chain[st.chain_len - 1] if st.chain_len else None
    kept = self._kept_map(st.kept)
    chain = self.chain[: st.chain_len]
    ends: list[int] = []  # last covered index of each summary, non-decreasing along the chain
    for link in chain:
        ends.append(max(ends[-1] if ends else -1, t.index.get(link.last_message_id, -1)))
    # prompt order: pre-turn system blocks, then summary and kept messages, then the history
    position = t.npre[st.end + 1]
    order: list[str] = ["summary", "kept"] if rules.summary_first else ["kept", "summary"]
    summary_pos = kept_pos = 0
    for part in order:
        if part == "summary" and summary is not None:
            summary_pos, position = position, position + 1
        elif part == "kept":
            kept_pos, position = position, position + len(kept)
    history_pos = position
    blocks: list[BlockAudit] = []
    pre_pos = 0
    kept_seen = 0
    placeholder_sent = self.placeholder_cost
    for i in range(st.end + 1):
        mid, role, kind = t.labels[i]
        turn = t.turn_of[i]
        cost = t.costs[i]
        if turn is None:
            blocks.append(BlockAudit(mid, role, kind, turn, BlockStatus.KEPT, True, Reason.SYSTEM, cost,
                                     0 if failed else cost, None if failed else pre_pos))
            pre_pos += 1
        elif i <= st.covered_upto:
            sent = kept.get(i)
            if sent is None:
                # the summary of the compaction that replaced it (the first one covering it)
                covering = chain[bisect_left(ends, i)].id if ends and i <= ends[-1] else (
                    summary.id if summary else None)
                blocks.append(BlockAudit(mid, role, kind, turn, BlockStatus.SUMMARIZED, False, Reason.SUMMARIZED,
                                         cost, 0, None, covering))
            else:
                status = BlockStatus.KEPT if sent >= cost else BlockStatus.TRUNCATED
                why = Reason.SYSTEM if i in self.session_prefix else KEPT_AFTER_COMPACTION
                blocks.append(BlockAudit(mid, role, kind, turn, status, True, why, cost,
                                         0 if failed else sent, None if failed else kept_pos + kept_seen))
                kept_seen += 1
        else:
            if self.prunable[i] and i < st.cleared_upto:
                reason = TOOL_RESULT_CLEARED if rules.prune == "clear_tool_uses" else TOOL_OUTPUT_PRUNED
                status, sent = BlockStatus.PRUNED, placeholder_sent
            else:
                status, sent = BlockStatus.KEPT, cost
                reason = Reason.CURRENT_TURN if turn == st.cur else SINCE_COMPACTION
            blocks.append(BlockAudit(mid, role, kind, turn, status, turn == st.cur, reason, cost,
                                     0 if failed else sent, None if failed else history_pos))
            history_pos += 1
    if summary is not None:
        cost = self.summary_cost.get(summary.id, 0)
        blocks.append(BlockAudit(None, "user" if rules.summary_first else "system", "summary", None,
                                 BlockStatus.KEPT, True, Reason.SUMMARY_INJECTED, cost,
                                 0 if failed else cost, None if failed else summary_pos, summary_id=summary.id))
    stats = dict(agg.stats)
    stats.pop("block_counts", None)
    return replace(agg, blocks=tuple(blocks), stats=stats)
