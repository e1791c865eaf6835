"""The context pipelines: replay a thread request by request under a config.

`replay` (and `simulate`, every request with its blocks) dispatches on the profile to its
replayer: `timeline()` gives every request's aggregates, `audit(k)` one request's blocks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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

    @property
    def tokenizer_name(self) -> str:
        return self.counter.name


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


class Replay:
    """A replay that answers the timeline at once and builds block lists on demand.

    Each profile's replayer (`IrisReplayer`, `HarnessReplayer`, `ShiftingReplayer`) gives
    the timeline at once, in about linear time, and one request's blocks on `audit(k)`.
    """

    def __init__(self, thread: Thread, config: Config, ctx: ReplayContext) -> None:
        self.thread = thread
        self.config = config
        self.ctx = ctx
        self.notices: list[str] = []  # e.g. a tokenizer fallback, said by the layer above
        self._audits: dict[int, RequestAudit] = {}
        if config.profile == "iris":
            from inspector.pipeline.iris import IrisReplayer as Replayer
        elif config.profile == "harness":
            from inspector.pipeline.harness_fast import HarnessReplayer as Replayer
        else:
            from inspector.pipeline.shifting_fast import ShiftingReplayer as Replayer
        self._fast = Replayer(thread, config, ctx)
        self.timeline: tuple[RequestAudit, ...] = tuple(self._fast.timeline())
        self.summaries: tuple[Summary, ...] = tuple(self._fast.chain)

    def __len__(self) -> int:
        return len(self.timeline)

    def audit(self, index: int) -> RequestAudit:
        """Request `index` with its full block list."""
        hit = self._audits.get(index)
        if hit is None:
            hit = self._fast.audit(index)
            if len(self._audits) > 64:
                self._audits.clear()
            self._audits[index] = hit
        return hit

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
) -> Replay:
    if counter is None:
        counter = TokenCounter(get_tokenizer(config["context.tokenizer"]))
    return Replay(thread, config, ReplayContext(counter, summarizer, follow_recorded))
