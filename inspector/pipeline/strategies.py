"""Shifting strategies, their registry, and the host guard every strategy runs behind.

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

`run_strategy` is the host guard: whatever a strategy (built-in or plugin) returns, the
host puts protected blocks back as they were, rejects a strategy that removed protected
context (falling back to truncate, with a diagnostic naming it), recounts with its own
counter, runs the interceptors after that, then recounts and shifts once more so nothing
added late goes over the limit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import count as counter_from

from inspector.model import Summary
from inspector.pipeline import Summarizer
from inspector.pipeline.audit import Reason
from inspector.pipeline.shifting import (
    SUMMARY_KIND,
    Block,
    CountTokens,
    ShiftResult,
    group_members,
    held_groups,
    shift_context,
    synthetic_block,
    unremovable_total,
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

NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")


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
Interceptor = Callable[[tuple[Block, ...]], Sequence[Block]]


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


# --- registry --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Registration:
    strategy: Strategy
    priority: int
    order: int


class StrategyRegistry:
    """Strategies by name. Several may share a name: the highest priority wins and, among
    equals, the earliest registered (so a plugin overrides a built-in only with a higher
    priority, as in NeoTavern). `register` returns a cleanup that removes exactly that
    registration, restoring whatever it shadowed."""

    def __init__(self, *, builtins: bool = True):
        self._by_name: dict[str, list[_Registration]] = {}
        self._order = counter_from()
        if builtins:
            for name, strategy in BUILTINS.items():
                self.register(name, strategy)

    def register(self, name: str, strategy: Strategy, *, priority: int = 0) -> Callable[[], None]:
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            raise ValueError(f"strategy name must match {NAME_PATTERN.pattern}: got {name!r}")
        if not callable(strategy):
            raise TypeError(f"strategy {name!r} must be callable")
        entry = _Registration(strategy, priority, next(self._order))
        versions = self._by_name.setdefault(name, [])
        versions.append(entry)
        versions.sort(key=lambda r: (-r.priority, r.order))

        def cleanup() -> None:
            current = self._by_name.get(name)
            if current is None or entry not in current:
                return
            current.remove(entry)
            if not current:
                del self._by_name[name]

        return cleanup

    def resolve(self, name: str) -> Strategy:
        versions = self._by_name.get(name)
        if not versions:
            raise UnknownStrategy(f"unknown context strategy {name!r} (known: {', '.join(self.names())})")
        return versions[0].strategy

    def names(self) -> list[str]:
        return sorted(self._by_name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name


DEFAULT_REGISTRY = StrategyRegistry()


# --- host guard ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GuardedShift:
    """The host's final word on one prompt.

    `kept` is the prompt as sent, in order; `excluded` every block that is not sent (input
    or added), `truncated` the sent blocks that were compressed, `added` the blocks that
    were not in the input (summary, plugin additions) as first seen. `reasons` holds the
    reason of every excluded or truncated block. `needed` is what the unremovable blocks
    cost; `fits` is False when that alone is over the budget (TOKEN_BUDGET_EXCEEDED).
    """

    kept: tuple[Block, ...]
    excluded: tuple[Block, ...]
    truncated: tuple[Block, ...]
    added: tuple[Block, ...]
    reasons: Mapping[str, Reason]
    covered: Mapping[str, str]
    summaries: tuple[Summary, ...]
    diagnostics: tuple[str, ...]
    strategy: str
    strategy_used: str
    total: int
    budget: int
    needed: int

    @property
    def fits(self) -> bool:
        return self.total <= self.budget


def _name_of(interceptor: object) -> str:
    return str(getattr(interceptor, "name", None) or getattr(interceptor, "__name__", None) or type(interceptor).__name__)


def _sanitize(candidate: Sequence[Block], host: Mapping[str, Block]) -> list[Block]:
    """Host blocks get back their host identity (protected ones whole, others their group,
    protection and message with the candidate's text); unknown blocks become optional
    synthetic blocks in their own group. Duplicate keys keep the first."""
    out: list[Block] = []
    seen: set[str] = set()
    for b in candidate:
        if not isinstance(b, Block) or b.key in seen:
            continue
        seen.add(b.key)
        original = host.get(b.key)
        if original is None:
            out.append(replace(b, protection=None, group=b.key, current_input=False, message=None))
        elif original.protected:
            out.append(original)
        else:
            out.append(replace(original, text=b.text))
    return out


def _restore_protected(candidate: list[Block], before: Sequence[Block]) -> list[Block]:
    """Put back every protected block of `before` missing from `candidate`, before the next
    block of `before` that is still there (NeoTavern's restoreProtectedMessages)."""
    out = list(candidate)
    present = {b.key for b in out}
    for i, b in enumerate(before):
        if not b.protected or b.key in present:
            continue
        following = next((n.key for n in before[i + 1 :] if n.key in present), None)
        at = next((j for j, x in enumerate(out) if x.key == following), len(out)) if following else len(out)
        out.insert(at, b)
        present.add(b.key)
    return out


def _drop_split_groups(candidate: list[Block], host: Mapping[str, Block]) -> tuple[list[Block], list[Block]]:
    """A group missing a member is removed whole (a tool call never goes without its results)."""
    members = group_members(host.values())
    present = {b.key for b in candidate}
    split = {g for g, ms in members.items() if len(ms) > 1 and any(m.key not in present for m in ms)}
    if not split:
        return candidate, []
    return [b for b in candidate if b.key not in host or host[b.key].group not in split], [
        b for b in candidate if b.key in host and host[b.key].group in split
    ]


def run_strategy(
    name: str,
    blocks: Sequence[Block],
    count_tokens: CountTokens,
    budget: int,
    *,
    registry: StrategyRegistry | None = None,
    summarizer: Summarizer | None = None,
    interceptors: Sequence[Interceptor] = (),
    request_id: str | None = None,
) -> GuardedShift:
    """Run strategy `name` on `blocks` behind the host guard (see the module docstring)."""
    registry = registry or DEFAULT_REGISTRY
    blocks = tuple(blocks)
    host = {b.key: b for b in blocks}
    request = StrategyRequest(blocks, count_tokens, budget, summarizer, request_id)
    diagnostics: list[str] = []
    reasons: dict[str, Reason] = {}
    added: dict[str, Block] = {}
    used = name

    # 1. the strategy, with truncate as the safe fallback
    try:
        result = registry.resolve(name)(request)
        if not isinstance(result, ShiftResult):
            raise TypeError(f"returned {type(result).__name__}, not ShiftResult")
    except SummarizerRequired:
        raise
    except Exception as exc:  # a broken plugin must not stop the request
        diagnostics.append(f'context strategy "{name}" failed ({type(exc).__name__}: {exc}); safe truncation used')
        result, used = truncate(request), "truncate"
    diagnostics.extend(result.diagnostics)
    returned = {b.key for b in result.kept if isinstance(b, Block)}
    removed_protected = [b.key for b in blocks if b.protected and b.key not in returned]
    if removed_protected:
        shown = ", ".join(removed_protected[:5]) + (" ..." if len(removed_protected) > 5 else "")
        diagnostics.append(
            f'context strategy "{name}" rejected: protected context was removed ({shown}); safe truncation used'
        )
        result, used = truncate(request), "truncate"
        returned = {b.key for b in result.kept}
    for key in host:
        if key not in returned:
            reasons[key] = result.reasons.get(key, Reason.STRATEGY_EXCLUDED)
    candidate = _sanitize(result.kept, host)
    candidate, split = _drop_split_groups(candidate, host)
    if split:
        diagnostics.append(f'context strategy "{used}" split {len(split)} tool group block(s); removed whole')
        reasons.update({b.key: Reason.TOOL_GROUP for b in split})
    for b in (*candidate, *result.excluded):  # a summary made but dropped is shown too
        if isinstance(b, Block) and b.key not in host:
            added.setdefault(b.key, b)

    # 2. the host recounts with its own counter and shifts
    checked = shift_context(candidate, count_tokens, budget)
    reasons.update(checked.reasons)
    diagnostics.append(f'context strategy "{used}" applied')
    working = list(checked.kept)

    # 3. interceptors, then a mandatory recount and final shift
    if checked.fits:
        for interceptor in interceptors:
            label = _name_of(interceptor)
            before = working
            try:
                out = list(interceptor(tuple(working)))
            except Exception as exc:
                diagnostics.append(f'interceptor "{label}" skipped ({type(exc).__name__}: {exc})')
                continue
            known = {**host, **{b.key: b for b in before}}
            out = _sanitize(out, known)
            out = _restore_protected(out, before)
            out, split = _drop_split_groups(out, host)
            before_text = {b.key: b.text for b in before}
            now = {b.key for b in out}
            split_keys = {b.key for b in split}
            for key in before_text:
                if key not in now:
                    reasons[key] = Reason.TOOL_GROUP if key in split_keys else Reason.INTERCEPTOR_REMOVED
            plus = sum(1 for b in out if b.key not in before_text)
            minus = sum(1 for key in before_text if key not in now)
            edited = sum(1 for b in out if b.key in before_text and before_text[b.key] != b.text)
            diagnostics.append(f'interceptor "{label}" applied (+{plus}/-{minus}/~{edited} blocks)')
            for b in out:
                if b.key not in host:
                    added.setdefault(b.key, b)
            working = out
        final = shift_context(working, count_tokens, budget)
        if final.excluded:
            diagnostics.append(f"final budget enforcement excluded {len(final.excluded)} block(s)")
        reasons.update(final.reasons)
    else:
        final = checked
        diagnostics.extend(checked.diagnostics)

    kept = final.kept
    kept_keys = {b.key for b in kept}
    truncated = tuple(b for b in kept if b.key in host and b.text != host[b.key].text and len(b.text) < len(host[b.key].text))
    truncated_keys = {b.key for b in truncated}
    for b in truncated:
        if reasons.get(b.key) is not Reason.TRUNCATED_TO_FIT:
            reasons[b.key] = result.reasons.get(b.key, Reason.TRUNCATED_TO_FIT)
    all_blocks = (*blocks, *added.values())
    excluded = tuple(b for b in all_blocks if b.key not in kept_keys)
    final_reasons = {
        b.key: reasons.get(b.key, Reason.SHIFTED_OLDEST) for b in excluded
    } | {key: reasons[key] for key in truncated_keys}
    summary_keys = {f"summary:{s.id}" for s in result.summaries}
    summaries = tuple(s for s in result.summaries if f"summary:{s.id}" in kept_keys)
    covered = {
        k: v for k, v in result.covered.items() if v in kept_keys and v in summary_keys and k not in kept_keys
    }
    return GuardedShift(
        kept=kept,
        excluded=excluded,
        truncated=truncated,
        added=tuple(added.values()),
        reasons=final_reasons,
        covered=covered,
        summaries=summaries,
        diagnostics=tuple(dict.fromkeys(diagnostics)),
        strategy=name,
        strategy_used=used,
        total=final.total,
        budget=budget,
        needed=unremovable_total(blocks, count_tokens),
    )
