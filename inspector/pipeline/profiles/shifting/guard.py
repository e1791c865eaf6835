"""The strategy registry and the host guard every strategy runs behind.

`run_strategy` is the host guard: whatever a strategy (built-in or plugin) returns, the
host puts protected blocks back as they were, rejects a strategy that removed protected
context (falling back to truncate, with a diagnostic naming it), recounts with its own
counter, runs the interceptors after that, then recounts and shifts once more so nothing
added late goes over the limit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import count as counter_from

from inspector.model import Summary
from inspector.pipeline.audit import Reason
from inspector.pipeline.context import Summarizer
from inspector.pipeline.profiles.shifting.blocks import (
    Block,
    CountTokens,
    ShiftResult,
    group_members,
    shift_context,
    unremovable_total,
)
from inspector.pipeline.profiles.shifting.strategies import (
    BUILTINS,
    Strategy,
    StrategyRequest,
    SummarizerRequired,
    UnknownStrategy,
    truncate,
)

NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")

Interceptor = Callable[[tuple[Block, ...]], Sequence[Block]]


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
