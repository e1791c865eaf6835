"""What a replay is given besides the thread and the config: the token counter, the
summarizer that writes new summaries, whether to follow the thread's recorded compactions, and
the thread's calibrated token model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from inspector.model import Message, Summary
from inspector.tokens import TokenCounter


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
    # Prices for the cost of each request (pricing.PriceTable); None: no cost.
    prices: object | None = None
    # The calibrated token model of the thread (inspector.pipeline.calibration); None: identity.
    calibration: object | None = None

    @property
    def compactions(self) -> str:
        """The compaction mode: "recorded" (follow the thread's) or "decide" (the profile decides)."""
        return "recorded" if self.follow_recorded else "decide"

    @property
    def tokenizer_name(self) -> str:
        return self.counter.name
