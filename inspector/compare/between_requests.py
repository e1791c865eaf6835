"""What changed from one request to the next of a replay: blocks that came in, blocks that went out
(excluded, pruned, summarized), blocks that came back, and the token deltas.

Pure: takes two `RequestAudit`s with their blocks and returns a frozen dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.pipeline.audit import BlockAudit, RequestAudit

# How much of a block a status sends: itself (kept, truncated), a placeholder (pruned), nothing.
SENT_LEVEL = {"kept": 2, "truncated": 2, "pruned": 1, "excluded": 0, "summarized": 0}


@dataclass(frozen=True, slots=True)
class StepBlock:
    """One block of the later request, with its status in the earlier one (None: it is new)."""

    block: BlockAudit
    before: str | None
    tokens_before: int  # what it cost the earlier request as sent

    @property
    def after(self) -> str:
        return str(self.block.status)


@dataclass(frozen=True, slots=True)
class RequestStep:
    """Request `index` against request `index - 1` of the same replay."""

    index: int
    came_in: tuple[StepBlock, ...]  # blocks new in this request (messages since the previous request, new summaries)
    went_out: tuple[StepBlock, ...]  # send less than before: now pruned, excluded or summarized
    came_back: tuple[StepBlock, ...]  # send more than before (a fallback, another policy)
    gone: tuple[BlockAudit, ...]  # synthetic blocks of the earlier request that this one does not have
    prompt_delta: int
    history_delta: int
    summary_delta: int
    system_delta: int  # system prompt and tool definitions
    billed_delta: int | None = None  # the calibrated prompt (what the provider bills); None: not calibrated

    @property
    def sent_in(self) -> int:
        """Tokens sent by the blocks that came in."""
        return sum(s.block.tokens_sent for s in self.came_in)

    @property
    def sent_out(self) -> int:
        """Tokens the blocks that went out no longer send (earlier cost minus what they send now)."""
        return sum(s.tokens_before - s.block.tokens_sent for s in self.went_out)


def _key(block: BlockAudit) -> tuple[str | None, str, str | None]:
    return (block.message_id, block.kind, block.summary_id if block.message_id is None else None)


def request_step(previous: RequestAudit, current: RequestAudit) -> RequestStep:
    """`current` against `previous` (the request before it); blocks are matched by message (or by summary
    for synthetic blocks)."""
    before = {_key(b): b for b in previous.blocks}
    came_in: list[StepBlock] = []
    went_out: list[StepBlock] = []
    came_back: list[StepBlock] = []
    seen: set[tuple] = set()
    for block in current.blocks:
        key = _key(block)
        seen.add(key)
        old = before.get(key)
        if old is None:
            came_in.append(StepBlock(block, None, 0))
            continue
        was, now = SENT_LEVEL.get(str(old.status), 0), SENT_LEVEL.get(str(block.status), 0)
        if now < was:
            went_out.append(StepBlock(block, str(old.status), old.tokens_sent))
        elif now > was:
            came_back.append(StepBlock(block, str(old.status), old.tokens_sent))
    gone = tuple(b for k, b in before.items() if k not in seen)
    pb, cb = previous.budget, current.budget
    return RequestStep(
        index=current.index,
        came_in=tuple(came_in),
        went_out=tuple(went_out),
        came_back=tuple(came_back),
        gone=gone,
        prompt_delta=cb.prompt_tokens - pb.prompt_tokens,
        history_delta=cb.history_tokens - pb.history_tokens,
        summary_delta=cb.summary_tokens - pb.summary_tokens,
        system_delta=(cb.system_tokens + cb.tool_tokens) - (pb.system_tokens + pb.tool_tokens),
        billed_delta=_billed(cb) - _billed(pb) if _billed(cb) is not None and _billed(pb) is not None else None,
    )


def _billed(budget) -> int | None:
    """A request's calibrated prompt: what the provider bills (0 for a request that sent nothing)."""
    value = budget.calibrated_prompt_tokens
    return value if isinstance(value, int) else None
