"""The shifting profile's built-in strategies (the registry and host guard are in `guard`).

Built-ins (seeds/context-shifting.txt, behaviour ported from NeoTavern's contextShift.ts):
- `truncate`: remove the oldest unpinned groups.
- `summarize`: truncate, then keep an extractive summary of what was excluded just before
  the current input (capped at min(128, 35% of the budget) tokens, at least 8), and shift
  again with the summary removed last.
- `vector-recall`: drop lorebook/memory blocks that are not required, lowest relevance
  first; then shorten old history (oldest first, each message cut to an excerpt) until it
  fits; if even that is not enough, drop the oldest groups, and give the room that frees
  back to the newest shortened blocks (whole again, newest first, while they fit). The
  prompt is then: dropped oldest, shortened middle, verbatim recent.
- `manual`: first exclude the blocks flagged `meta.manualExcluded` with their tool
  partners, even when everything fits; then the normal reduction.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from inspector.pipeline.audit import Reason
from inspector.pipeline.context import Summarizer
from inspector.pipeline.profiles.shifting.blocks import (
    SUMMARY_KIND,
    Block,
    CountTokens,
    ShiftResult,
    group_members,
    held_groups,
    shift_context,
    synthetic_block,
)

# summarize: NeoTavern's defaults for the summary it keeps.
SUMMARY_PREFIX = "[Summary of earlier context]\n"
SUMMARY_MAX_TOKENS = 128
SUMMARY_MIN_TOKENS = 8
SUMMARY_BUDGET_SHARE = 0.35
SUMMARY_SHRINK = 0.72  # each pass keeps this share of the body
SUMMARY_MIN_BODY = 24  # characters

# vector-recall: how an old message is shortened (NeoTavern's excerpt).
EXCERPT_LIMIT = 160
EXCERPT_HEAD = 104
EXCERPT_TAIL = 40

class SummarizerRequired(ValueError):
    """The summarize strategy had history to summarize but no summarizer was given."""


class UnknownStrategy(KeyError):
    """No strategy is registered under that name."""


@dataclass(frozen=True, slots=True)
class StrategyRequest:
    """What a strategy gets: the prompt's blocks in order, the counter and the budget."""

    blocks: tuple[Block, ...]
    count_tokens: CountTokens
    budget: int
    summarizer: Summarizer | None = None
    request_id: str | None = None


Strategy = Callable[[StrategyRequest], ShiftResult]


# --- built-in strategies ---------------------------------------------------------------


def truncate(request: StrategyRequest) -> ShiftResult:
    return replace(shift_context(request.blocks, request.count_tokens, request.budget), strategy="truncate")


def summarize(request: StrategyRequest) -> ShiftResult:
    """Truncate, then summarize everything excluded and keep the summary before the current input.

    NeoTavern summarizes only what the first truncation excluded; blocks removed to make room
    for the summary would then be lost without a trace. Here the summary is rebuilt over
    every excluded block until a shift excludes nothing new (each round only adds
    exclusions, so this ends), so every excluded message is covered by the summary sent.
    """
    count, budget = request.count_tokens, request.budget
    first = shift_context(request.blocks, count, budget)
    if not first.fits or not any(b.message is not None for b in first.excluded):
        return replace(first, strategy="summarize")
    if request.summarizer is None:
        raise SummarizerRequired(
            "context.strategy 'summarize' needs a summarizer (summarization.summarizer): none was given"
        )
    target = max(SUMMARY_MIN_TOKENS, min(SUMMARY_MAX_TOKENS, math.floor(budget * SUMMARY_BUDGET_SHARE)))
    summary_id = f"shift-{request.request_id or 'request'}"
    excluded = list(first.excluded)
    reasons = dict(first.reasons)
    diagnostics = list(first.diagnostics)
    rounds = 0
    while True:
        rounds += 1
        gone = {b.key for b in excluded}
        covered = [b for b in request.blocks if b.key in gone and b.message is not None]
        summary = request.summarizer.summarize(
            [b.message for b in covered if b.message is not None],
            None,
            summary_id=summary_id,
            before_request_id=request.request_id,
        )
        block = _capped_summary_block(f"summary:{summary.id}", summary.injected_text(), count, target)
        kept = [b for b in request.blocks if b.key not in gone]
        at = next((i for i, b in enumerate(kept) if b.current_input), len(kept))
        kept.insert(at, block)
        fitted = shift_context(
            kept, count, budget, removal_order=lambda b, i, key=block.key: math.inf if b.key == key else i
        )
        fresh = [b for b in fitted.excluded if b.key != block.key]
        summary_kept = len(fresh) == len(fitted.excluded)
        if not fresh or not summary_kept:
            break
        excluded.extend(fresh)
        reasons.update(fitted.reasons)
    reasons.update(fitted.reasons)
    if summary_kept:
        diagnostics.append(f"context summary created over {len(covered)} block(s)")
    else:
        excluded.extend(fresh)
        diagnostics.append("context summary did not fit and was dropped")
    return ShiftResult(
        kept=fitted.kept,
        excluded=(*excluded, *([] if summary_kept else [block])),
        diagnostics=(*diagnostics, *fitted.diagnostics),
        reasons=reasons,
        total=fitted.total,
        budget=budget,
        covered={b.key: block.key for b in covered} if summary_kept else {},
        summaries=(summary,) if summary_kept else (),
        strategy="summarize",
    )


def _capped_summary_block(key: str, text: str, count_tokens: CountTokens, target: int) -> Block:
    body = text
    block = synthetic_block(key, SUMMARY_PREFIX + body, kind=SUMMARY_KIND)
    while count_tokens(block) > target and len(body) > SUMMARY_MIN_BODY:
        shorter = body[: max(SUMMARY_MIN_BODY, math.floor(len(body) * SUMMARY_SHRINK))].rstrip() + "…"
        if len(shorter) >= len(body):  # at the floor: the summary cannot get any shorter
            break
        body = shorter
        block = replace(block, text=SUMMARY_PREFIX + body)
    return block


def relevance_rank(block: Block) -> float:
    """Relevance clamped to [0, 1]; missing or not a number counts as 0."""
    r = block.relevance
    if r is None or not math.isfinite(r):
        return 0.0
    return min(1.0, max(0.0, r))


def excerpt(text: str) -> str:
    """Whitespace collapsed; past EXCERPT_LIMIT characters, the head, an ellipsis and the tail."""
    normalized = " ".join(text.split())
    if len(normalized) <= EXCERPT_LIMIT:
        return normalized
    return f"{normalized[:EXCERPT_HEAD]} … {normalized[-EXCERPT_TAIL:]}"


def shortened(block: Block) -> Block | None:
    """The block with its content cut to an excerpt (tool calls kept whole), or None if no shorter."""
    m = block.message
    if m is not None and m.tool_calls:
        text = replace(m, content=excerpt(m.content)).text_for_count()
    else:
        text = excerpt(block.text)
    return None if len(text) >= len(block.text) else replace(block, text=text)


def vector_recall(request: StrategyRequest) -> ShiftResult:
    """Running totals throughout: each block's cost is its own, so a step adds or subtracts
    what it changes (the same result as recounting the whole prompt after every step)."""
    count, budget = request.count_tokens, request.budget
    current = list(request.blocks)
    members = group_members(current)
    held = held_groups(current)
    reasons: dict[str, Reason] = {}
    excluded: list[Block] = []
    key_cost: dict[str, int] = {}
    running = 0
    for b in current:
        c = count(b)
        key_cost[b.key] = key_cost.get(b.key, 0) + c
        running += c

    # 1. lorebook and memory, lowest relevance first
    ranked = sorted(
        (i for i, b in enumerate(current) if b.retrieved and not b.protected),
        key=lambda i: (relevance_rank(current[i]), i),
    )
    gone: set[str] = set()
    for block in (current[i] for i in ranked):
        if running <= budget:
            break
        if block.group in held or block.key in reasons:
            continue
        for m in members[block.group]:
            reasons[m.key] = Reason.LOW_RELEVANCE if m is block else Reason.TOOL_GROUP
            excluded.append(m)
            if m.key not in gone:
                gone.add(m.key)
                running -= key_cost[m.key]
    if gone:
        current = [b for b in current if b.key not in gone]
    # 2. shorten old history, oldest first
    shortened_keys: set[str] = set()
    for i, block in enumerate(current):
        if running <= budget:
            break
        if block.protected or block.retrieved or block.message is None:
            continue
        short = shortened(block)
        if short is None:
            continue
        before, after = count(block), count(short)
        if after >= before:
            continue
        current[i] = short
        shortened_keys.add(block.key)
        running += after - before
    # 3. drop the oldest groups; the room that frees gives the newest shortened blocks back whole
    last = shift_context(current, count, budget)
    reasons.update(last.reasons)
    kept = list(last.kept)
    total = last.total
    if last.excluded and last.fits:
        original = {b.key: b for b in request.blocks}
        for i in range(len(kept) - 1, -1, -1):
            if kept[i].key not in shortened_keys:
                continue
            whole = original[kept[i].key]
            grown = total - count(kept[i]) + count(whole)
            if grown > budget:
                break
            kept[i] = whole
            shortened_keys.discard(whole.key)
            total = grown
    truncated = tuple(b for b in kept if b.key in shortened_keys)
    reasons.update({b.key: Reason.TRUNCATED_TO_FIT for b in truncated})
    return ShiftResult(
        kept=tuple(kept),
        excluded=(*excluded, *last.excluded),
        truncated=truncated,
        diagnostics=last.diagnostics,
        reasons=reasons,
        total=total,
        budget=budget,
        strategy="vector-recall",
    )


def manual(request: StrategyRequest) -> ShiftResult:
    blocks = request.blocks
    members = group_members(blocks)
    held = held_groups(blocks)
    reasons: dict[str, Reason] = {}
    excluded: list[Block] = []
    diagnostics: list[str] = []
    for block in blocks:
        if not block.manual_excluded or block.key in reasons:
            continue
        if block.protected:
            diagnostics.append(f"manually excluded block {block.key!r} is protected ({block.protection}); kept")
            continue
        if block.group in held:
            diagnostics.append(f"manually excluded block {block.key!r} is in a protected tool group; kept")
            continue
        for m in members[block.group]:
            if m.key not in reasons:
                reasons[m.key] = Reason.MANUAL_EXCLUDED if m.manual_excluded else Reason.TOOL_GROUP
                excluded.append(m)
    remaining = [b for b in blocks if b.key not in reasons]
    fitted = shift_context(remaining, request.count_tokens, request.budget)
    if fitted.excluded:
        diagnostics.append("manual exclusions were insufficient; safe truncation continued")
    return ShiftResult(
        kept=fitted.kept,
        excluded=(*excluded, *fitted.excluded),
        diagnostics=(*diagnostics, *fitted.diagnostics),
        reasons={**reasons, **fitted.reasons},
        total=fitted.total,
        budget=request.budget,
        strategy="manual",
    )


BUILTINS: dict[str, Strategy] = {
    "truncate": truncate,
    "summarize": summarize,
    "vector-recall": vector_recall,
    "manual": manual,
}
