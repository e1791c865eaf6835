"""Replaying a thread under a config: the profile's replayer behind one interface.

`replay` gives a `Replay`: the timeline at once (every request's aggregates) and one
request's blocks on `audit(k)`; `simulate` is every request with its blocks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.model import Summary, Thread
from inspector.pipeline.audit import RequestAudit, Simulation
from inspector.pipeline.context import ReplayContext, Summarizer
from inspector.pipeline.profiles import REGISTRY
from inspector.tokens import TokenCounter, get_tokenizer

if TYPE_CHECKING:
    from inspector.config import Config

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

    The profile's replayer (`REGISTRY[profile].replayer`, e.g. `IrisReplayer`) gives the
    timeline at once, in about linear time, and one request's blocks on `audit(k)`.
    """

    def __init__(self, thread: Thread, config: Config, ctx: ReplayContext) -> None:
        self.thread = thread
        self.config = config
        self.ctx = ctx
        self.notices: list[str] = []  # e.g. a tokenizer fallback, said by the layer above
        self._audits: dict[int, RequestAudit] = {}
        self._fast = REGISTRY[config.profile].replayer(thread, config, ctx)
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
