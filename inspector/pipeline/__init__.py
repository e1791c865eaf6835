"""The context pipelines: replay a thread request by request under a config.

`replay` (and `simulate`, every request with its blocks) dispatches on the profile to its
replayer: `timeline()` gives every request's aggregates, `audit(k)` one request's blocks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from inspector.config import Config
from inspector.model import Message, Summary, Thread
from inspector.pipeline.audit import RequestAudit, Simulation
from inspector.tokens import TokenCounter, get_tokenizer


class Summarizer(Protocol):
    """Writes one summary of `messages` (a contiguous span), chained to `previous`."""

    name: str

    def summarize(
        self,
        messages: Sequence[Message],
        previous: Summary | None,
        *,
        summary_id: str,
        before_request_id: str | None = None,
    ) -> Summary: ...


@dataclass
class ReplayContext:
    counter: TokenCounter
    summarizer: Summarizer | None
    # Baseline replays follow the thread's recorded compactions; what-if replays decide
    # compactions from the config's triggers (DESIGN.md, "Summaries").
    follow_recorded: bool = False
    # The calibrated token model of the thread (inspector.pipeline.calibration); None: identity.
    calibration: object | None = None

    @property
    def compactions(self) -> str:
        """The compaction mode: "recorded" (follow the thread's) or "decide" (the profile decides)."""
        return "recorded" if self.follow_recorded else "decide"

    @property
    def tokenizer_name(self) -> str:
        return self.counter.name


def agent_replayer(profile: str):
    """The replayer factory of one of the real agents' profiles, else None."""
    if profile == "claude-code":
        from inspector.pipeline.profiles import claude_code as module
    elif profile == "codex":
        from inspector.pipeline.profiles import codex as module
    elif profile == "opencode":
        from inspector.pipeline.profiles import opencode as module
    elif profile == "anthropic-context-editing":
        from inspector.pipeline.profiles import anthropic_context_editing as module
    else:
        return None
    return module.replayer


def simulate(
    thread: Thread,
    config: Config,
    *,
    counter: TokenCounter | None = None,
    summarizer: Summarizer | None = None,
    follow_recorded: bool = False,
) -> Simulation:
    """Replay every request of `thread` under `config`; one audit per request."""
    if counter is None:
        counter = TokenCounter(get_tokenizer(config["context.tokenizer"]))
    ctx = ReplayContext(counter=counter, summarizer=summarizer, follow_recorded=follow_recorded)
    return Replay(thread, config, ctx).simulation(blocks=True)


def reference_calibration(thread: Thread, config: Config, counter: TokenCounter,
                          summarizer: Summarizer | None = None, *, compactions: str = "recorded"):
    """The thread's calibrated token model, fitted against the replay of its recorded history:
    `config` is the thread's baseline (its own profile and defaults) and `compactions` its
    default mode. Remembered per thread, tokenizer and config: every edit reuses it."""
    from inspector.pipeline.calibration import Calibration, segments_from_compactions

    memo = counter.__dict__.setdefault("_calibrations", {})
    key = id(thread.messages), id(thread.requests), tuple(config.as_dict().items()), compactions
    hit = memo.get(key)
    if hit is not None and hit[0] is thread.messages and hit[1] is thread.requests:
        return hit[2]
    ctx = ReplayContext(counter=counter, summarizer=summarizer, follow_recorded=compactions == "recorded")
    timeline = Replay(thread, config, ctx).timeline
    reference = [a.budget.needed_tokens if a.budget.needed_tokens is not None else a.budget.prompt_tokens
                 for a in timeline]
    recorded = [a.budget.recorded_prompt_tokens for a in timeline]
    segments = segments_from_compactions([a.compaction is not None for a in timeline])
    calibration = Calibration(reference, recorded, segments)
    if len(memo) >= 8:
        memo.clear()
    memo[key] = (thread.messages, thread.requests, calibration)
    return calibration


class Replay:
    """A replay that answers the timeline at once and builds block lists on demand.

    Each profile's replayer (`IrisReplayer`, `HarnessReplayer`, `ShiftingReplayer`) gives
    the timeline at once, in about linear time, and one request's blocks on `audit(k)`.
    """

    def __init__(self, thread: Thread, config: Config, ctx: ReplayContext) -> None:
        self.calibration = ctx.calibration
        self.thread = thread
        self.config = config
        self.ctx = ctx
        self.notices: list[str] = []  # e.g. a tokenizer fallback, said by the layer above
        self._audits: dict[int, RequestAudit] = {}
        agent = agent_replayer(config.profile)
        if agent is not None:
            Replayer = agent  # noqa: N806 - a factory, named like the classes beside it
        elif config.profile == "iris":
            from inspector.pipeline.iris import IrisReplayer as Replayer
        elif config.profile == "harness":
            from inspector.pipeline.harness_fast import HarnessReplayer as Replayer
        else:
            from inspector.pipeline.shifting_fast import ShiftingReplayer as Replayer
        self._fast = Replayer(thread, config, ctx)
        self._fill = agent is None and ctx.calibration is not None
        timeline = self._fast.timeline()
        self.timeline: tuple[RequestAudit, ...] = tuple(
            self._calibrated(a) for a in timeline) if self._fill else tuple(timeline)
        self.summaries: tuple[Summary, ...] = tuple(self._fast.chain)

    def __len__(self) -> int:
        return len(self.timeline)

    def audit(self, index: int) -> RequestAudit:
        """Request `index` with its full block list."""
        hit = self._audits.get(index)
        if hit is None:
            hit = self._fast.audit(index)
            if self._fill:
                hit = self._calibrated(hit)
            if len(self._audits) > 64:
                self._audits.clear()
            self._audits[index] = hit
        return hit

    def _calibrated(self, audit: RequestAudit) -> RequestAudit:
        """The seed profiles' audits with the calibrated prompt filled in (the agent profiles'
        replayers compute it themselves, their trigger reads it)."""
        b = audit.budget
        estimate = b.needed_tokens if b.needed_tokens is not None else b.prompt_tokens
        value = self.ctx.calibration.calibrated(audit.index, estimate)
        budget = replace(b, calibrated_prompt_tokens=value, unaccounted_tokens=value - estimate)
        return replace(audit, budget=budget)

    def simulation(self, *, blocks: bool = True) -> Simulation:
        requests = tuple(self.audit(k) for k in range(len(self))) if blocks else self.timeline
        return Simulation(
            thread_id=self.thread.id,
            profile=self.config.profile,
            config=self.config.as_dict(),
            tokenizer=self.ctx.counter.name,
            approximate=self.ctx.counter.approximate,
            requests=requests,
            summaries=self.summaries,
        )


def replay(
    thread: Thread,
    config: Config,
    *,
    counter: TokenCounter | None = None,
    summarizer: Summarizer | None = None,
    follow_recorded: bool = False,
    calibration=None,
) -> Replay:
    """`calibration`: the thread's calibrated token model (`reference_calibration`); None:
    the identity (calibrated = replayed, the trigger reads recorded counts where present)."""
    if counter is None:
        counter = TokenCounter(get_tokenizer(config["context.tokenizer"]))
    return Replay(thread, config, ReplayContext(counter, summarizer, follow_recorded, calibration))
