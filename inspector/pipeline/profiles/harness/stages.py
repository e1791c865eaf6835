"""The agent-harness pipeline (profile "harness"), after agent-harness-context-management.txt.

The pure stages of the policy (`context_stats`, `plan_removals`, the `[Context Summary]`
text, the trigger reading) used by the replayer, `inspector.pipeline.profiles.harness.replayer`. The
seed's own dict-message API (`ContextManager`, `prune_messages`, `compact`) and the literal
request-by-request replay are the oracles in `tests/reference/harness.py`.

Replay semantics (where the seed is silent):

- The thread's system prompt is message zero (`system_tokens`); role-system messages
  before the first user message are kept with it (Reason.SYSTEM). Neither is ever pruned
  nor compacted. The protected tail is the last `harness.keep_last` other messages, plus
  the tool-group partners of those (Reason.PROTECTED_GROUP): a tool group is kept or
  removed whole.
- The thresholds read the previous request's prompt tokens ("last update wins"): its
  recorded value when `context.trigger_tokens` is "recorded" and it has one, else its
  replayed value. The first request has no measurement and triggers nothing.
- Compaction replaces the not yet summarized middle with one `[Context Summary]` message
  (a new summary chained to the previous one) and persists for later requests; a middle
  that is already just that summary is a fixed point (no summarizer call). A recorded
  summary of the thread covering exactly the same span is reused instead of a new one.
- Pruning then elides old tool messages, then old assistant messages (oldest first, whole
  tool groups), until the middle is below window x compaction_threshold. Like compaction,
  elision persists: the harness replaces its history with the pruned copy. After a
  compaction the middle is only the summary (never removed), so pruning removes anything
  only when its threshold is below the compaction threshold.
- A prompt over the available budget fails (TOKEN_BUDGET_EXCEEDED): the harness never
  cuts its protected tail, so the provider would reject it. Nothing is sent.
- Sent order: head system messages, the `[Context Summary]`, then the other sent
  messages in thread order.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from inspector.model import Kind, Message, Role, Summary, Thread
from inspector.pipeline.audit import Reason

if TYPE_CHECKING:
    from inspector.pipeline.context import ReplayContext
    from inspector.pipeline.profiles.base import Settings

OVERHEAD = 10  # tokens the harness adds per message: the seed's ceil(chars / 4) + 10
CONTEXT_SUMMARY_MARKER = "[Context Summary]"
SUMMARY_KIND = "summary"
FIXED_POINT_NOTE = "compaction: the middle is already one [Context Summary] (fixed point)"
NOTHING_TO_COMPACT_NOTE = "compaction: nothing older than the protected tail to summarize"


class Policy(NamedTuple):
    """The config keys the harness reads, and the two figures derived from them."""

    window: int
    compaction_threshold: float
    pruning_threshold: float
    keep_last: int
    trigger_mode: str
    reserve: int
    available: int  # window x token_budget_ratio - reserve: what a prompt may use
    target: float  # window x compaction_threshold: pruning stops below it

    @classmethod
    def of(cls, config: Settings) -> Policy:
        window, reserve = config["context.window"], config["context.response_reserve"]
        compaction = config["context.compaction_threshold"]
        return cls(window, compaction, config["harness.pruning_threshold"], config["harness.keep_last"],
                   config["context.trigger_tokens"], reserve, int(window * config["context.token_budget_ratio"]) - reserve,
                   window * compaction)


# ---------------------------------------------------------------------------
# Estimation and stats
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContextStats:
    """How full the measured prompt is against the window and the two thresholds."""

    prompt_tokens: int
    window: int
    usage_percent: float
    needs_compaction: bool
    needs_pruning: bool

    def as_dict(self) -> dict[str, Any]:
        """The keys of the seed's get_context_stats()."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "window": self.window,
            "usage_percent": self.usage_percent,
            "needs_compaction": self.needs_compaction,
            "needs_pruning": self.needs_pruning,
        }


@lru_cache(maxsize=64)
def _as_written(threshold: float) -> tuple[int, int]:
    """The threshold as the decimal it is written as (0.8 is 4/5), numerator and denominator."""
    return Fraction(repr(float(threshold))).as_integer_ratio()


def _at_least(tokens: int, window: int, threshold: float) -> bool:
    # Exact comparison of tokens / window against the threshold as written (0.8 is 4/5):
    # float products such as 100 * 0.57 would move the boundary by one token. window > 0.
    numerator, denominator = _as_written(threshold)
    return tokens * denominator >= numerator * window


def tokens_at(window: int, threshold: float) -> int:
    """The fewest prompt tokens that reach `threshold` of `window` (the `_at_least` boundary)."""
    numerator, denominator = _as_written(threshold)
    return -(-numerator * window // denominator)


def context_stats(
    prompt_tokens: int, window: int, compaction_threshold: float, pruning_threshold: float
) -> ContextStats:
    """Usage of the window by the last measured prompt; thresholds are inclusive (>=)."""
    if window <= 0:
        raise ValueError(f"window must be > 0: got {window}")
    return ContextStats(
        prompt_tokens=prompt_tokens,
        window=window,
        usage_percent=prompt_tokens / window * 100,
        needs_compaction=_at_least(prompt_tokens, window, compaction_threshold),
        needs_pruning=_at_least(prompt_tokens, window, pruning_threshold),
    )


# ---------------------------------------------------------------------------
# Pruning
# ---------------------------------------------------------------------------


def plan_removals(
    roles: Sequence[str],
    costs: Sequence[int],
    target: float,
    groups: Sequence[Hashable] | None = None,
) -> dict[int, Reason]:
    """Which middle items to elide, and why, so the middle's cost falls below `target`.

    Old tool messages go first (oldest first), then old assistant messages; user and
    system items are never removed. With `groups`, an item leaves with every member of its
    group (partners get Reason.TOOL_GROUP); a group holding a user or system item stays.
    Stops as soon as the remaining total is below the target, or when nothing is left to
    remove (then the middle stays over the target).
    """
    members: dict[Hashable, list[int]] = {}
    if groups is not None:
        for j, g in enumerate(groups):
            members.setdefault(g, []).append(j)
    total = sum(costs)
    removed: dict[int, Reason] = {}
    for phase_role, reason in ((Role.TOOL, Reason.TOOL_ELIDED), (Role.ASSISTANT, Reason.ASSISTANT_ELIDED)):
        for j, role in enumerate(roles):
            if total < target:
                return removed
            if role != phase_role or j in removed:
                continue
            group = [j] if groups is None else [m for m in members[groups[j]] if m not in removed]
            if any(roles[m] not in (Role.TOOL, Role.ASSISTANT) for m in group):
                continue
            for m in group:
                removed[m] = reason if m == j else Reason.TOOL_GROUP
                total -= costs[m]
    return removed


# ---------------------------------------------------------------------------
# Compaction
# ---------------------------------------------------------------------------


def context_summary_text(summary: str | Summary) -> str:
    """The content of the synthetic `[Context Summary]` user message."""
    text = summary.injected_text() if isinstance(summary, Summary) else summary
    return f"{CONTEXT_SUMMARY_MARKER}\n{text}"


# ---------------------------------------------------------------------------
# Replay
# ---------------------------------------------------------------------------


def head_indices(messages: Sequence[Message]) -> set[int]:
    """Role-system messages before the first user message: sent with the system prompt."""
    head: set[int] = set()
    for i, m in enumerate(messages):
        if m.role is Role.USER and m.kind is Kind.MESSAGE:
            break
        if m.role is Role.SYSTEM:
            head.add(i)
    return head


def trigger_reading(request_index: int, mode: str, previous_recorded: int | None,
                    previous_replayed: int | None, calibration=None,
                    previous_blocks: int | None = None) -> tuple[str | None, int | None]:
    """(source, tokens) the thresholds read: the previous request's recorded prompt size when
    `mode` is "recorded" and it has one, else its replayed size; nothing for the first request.

    With the thread's calibrated token model (`inspector.pipeline.calibration`) the reading is
    counterfactual: the recorded size only where the replayed history is still the recorded one,
    else the calibrated prompt of the replay's own previous request."""
    if request_index == 0:
        return None, None
    if (mode == "recorded" and calibration is not None and not calibration.identity_model
            and previous_replayed is not None):
        tokens, source = calibration.reading(request_index - 1, previous_replayed, previous_blocks)
        return source, tokens
    if mode == "recorded" and previous_recorded is not None:
        return "recorded", previous_recorded
    return "estimated", previous_replayed


def pruning_stopped_note(remaining: int, target: float) -> str:
    return (f"pruning stopped at {remaining} middle tokens (target {target:g}): "
            "only user messages and the protected tail are left")


def over_budget_note(prompt_tokens: int, available: int) -> str:
    return (f"the prompt needs {prompt_tokens} tokens, over the {available} available: "
            "the harness never cuts the protected tail")


def compaction_summary(thread: Thread, ctx: ReplayContext, span: list[Message], current: Summary | None,
                       request, recorded_by_span: Mapping[tuple[str, str], Summary]) -> Summary:
    """The summary that replaces `span` before `request`: the thread's recorded one for exactly
    that span, else a new one chained to `current`."""
    summary = recorded_by_span.get((span[0].id, span[-1].id))
    if summary is not None:
        return summary
    if ctx.summarizer is None:
        raise ValueError(
            f"harness replay of thread {thread.id!r} must compact before request {request.id!r} "
            "but no summarizer was given (pass one to simulate(summarizer=...))"
        )
    return ctx.summarizer.summarize(span, current, summary_id=f"harness-{request.id}", before_request_id=request.id)


