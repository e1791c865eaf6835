"""The shifting profile's seed-literal reference (seeds/context-shifting.txt).

Oracles of `tests/engine/test_shifting_fast.py` and `bench/bench_shifting.py`, never imported by the
product:

- `shift_context_reference`: "Remove or compress the oldest unpinned blocks first. Remove
  tool-call and tool-result messages only as a pair. Recount tokens after every change." As
  written: while the recount is over the budget, the oldest removable block goes with its
  whole group, then everything is counted again (quadratic). `inspector.pipeline.profiles.shifting.blocks.
  shift_context` keeps a running total instead and must give the identical result.
- `replay_reference`: every request's blocks built from scratch and run through the host
  guard. `inspector.pipeline.profiles.shifting.replayer.ShiftingReplayer` must give identical audits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from inspector.config import Config
from inspector.model import Summary, Thread, effective_requests
from inspector.pipeline.audit import Reason, RequestAudit
from inspector.pipeline.profiles.shifting.audits import ReplaySetup, audit_summaries, guarded_request_audit
from inspector.pipeline.profiles.shifting.blocks import Block, CountTokens, RemovalOrder, ShiftResult, build_blocks


def shift_context_reference(blocks: Iterable[Block], count_tokens: CountTokens, budget: int, *,
                            removal_order: RemovalOrder | None = None,
                            reason_for: Callable[[Block], Reason] | None = None) -> ShiftResult:
    """The seed's loop: recount, and while over, remove the oldest removable group.

    `removal_order` changes which block counts as oldest (default: prompt order);
    `reason_for` names why the block that triggered a removal went (default
    `shifted_oldest`), its partners get `tool_group`. A block is protected, or removable
    only when no block of its group is protected. Removal is by key: every block sharing a
    removed block's key leaves the prompt.
    """
    prompt = tuple(blocks)
    pinned_groups = {b.group for b in prompt if b.protected}
    candidates = [i for i, b in enumerate(prompt) if not b.protected and b.group not in pinned_groups]
    if removal_order is not None:
        candidates.sort(key=lambda i: removal_order(prompt[i], i))
    gone: set[str] = set()
    removed_in_order: list[Block] = []
    why: dict[str, Reason] = {}

    def recount() -> int:
        return sum(count_tokens(b) for b in prompt if b.key not in gone)

    while recount() > budget:
        oldest = next((prompt[i] for i in candidates if prompt[i].key not in gone), None)
        if oldest is None:
            break  # only protected context is left
        trigger_reason = Reason.SHIFTED_OLDEST if reason_for is None else reason_for(oldest)
        for partner in [b for b in prompt if b.group == oldest.group]:
            if partner.key not in gone:
                gone.add(partner.key)
                removed_in_order.append(partner)
                why[partner.key] = trigger_reason if partner is oldest else Reason.TOOL_GROUP
    total = recount()
    notes: tuple[str, ...] = ()
    if total > budget:
        notes = (f"protected context alone ({total} tokens) exceeds the budget ({budget} tokens)",)
    return ShiftResult(kept=tuple(b for b in prompt if b.key not in gone), excluded=tuple(removed_in_order),
                       diagnostics=notes, reasons=why, total=total, budget=budget)


Interceptor = Callable[[tuple[Block, ...]], Sequence[Block]]


def replay_reference(thread: Thread, config: Config, ctx, *, registry=None,
                     interceptors: Sequence[Interceptor] | None = None) -> tuple[list[RequestAudit], list[Summary]]:
    """Every request rebuilt from scratch: its prompt's blocks, the host guard, the audit."""
    setup = ReplaySetup.of(thread, config, ctx, registry, interceptors)
    position = thread.message_index()
    audits: list[RequestAudit] = []
    sent: list[Summary] = []
    for k, request in enumerate(effective_requests(thread)):
        last = position[request.after_message_id]
        prompt = build_blocks(thread.messages[: last + 1])
        guarded = setup.shift(prompt, request.id)
        audits.append(guarded_request_audit(setup, k, request, setup.turns[last], prompt, guarded))
        sent.extend(audit_summaries(audits[-1], guarded))
    return audits, sent
