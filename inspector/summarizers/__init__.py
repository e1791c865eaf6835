"""Summarizers by name: who writes the new summaries of a what-if replay.

Each implements `inspector.pipeline.Summarizer`. The pipeline never imports this
package (layering); callers pass a summarizer to `simulate()`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.config import SUMMARIZERS, ConfigError
from inspector.summarizers.extractive import ExtractiveSummarizer

if TYPE_CHECKING:
    from inspector.config import Config
    from inspector.pipeline import Summarizer

__all__ = ["ExtractiveSummarizer", "get_summarizer"]


def get_summarizer(name: str, *, config: Config | None = None) -> Summarizer:
    """The summarizer configured as `summarization.summarizer`; ConfigError when unavailable."""
    if name == "extractive":
        return ExtractiveSummarizer()
    if name == "anthropic":
        from inspector.summarizers.anthropic import AnthropicSummarizer

        return AnthropicSummarizer(config)
    raise ConfigError(f"summarization.summarizer must be one of {', '.join(SUMMARIZERS)}: got {name!r}")
