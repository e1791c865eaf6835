"""The `gemini-cli` profile: Gemini CLI's chat compression (google-gemini/gemini-cli
`packages/core/src/context/chatCompressionService.ts` at 5411f11, CLI 0.56.0-nightly; the service
lived in `packages/core/src/services/` before).

- Trigger (`ChatCompressionService.compress`, called before each model call by
  `GeminiClient.processTurn`): the last call's prompt token count (`getLastPromptTokenCount`)
  reaches `threshold * tokenLimit(model)`: `DEFAULT_COMPRESSION_TOKEN_THRESHOLD` = 0.5 unless
  `model.compressionThreshold` is set (`gemini_cli.compression_threshold`); `tokenLimit` is
  1,048,576 for the Gemini models (`core/tokenLimits.ts`), the profile's default window.
- Split (`findCompressSplitPoint(history, 1 - COMPRESSION_PRESERVE_THRESHOLD)`, 0.3): the
  history is compressed up to the first user message (not a function response) at or past 70%
  of its characters, so the newest ~30% stays verbatim; past no such message, all of it where it
  ends in a model response without a function call, else up to the last such message.
- The compressed part becomes a `<state_snapshot>` written by the model, then checked by a second
  "probe" call over the same history (the verification pass, priced as a second call); the new
  history is the snapshot (a user message), the model's "Got it." and the kept part.
- Not modelled: the function-response budget (`COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET` =
  50,000: older tool outputs truncated to their last lines before the split), tool-output masking,
  the context-manager path (`contextManagement.enabled`), and a compression that would inflate the
  count (Gemini CLI then keeps the history).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.pipeline.audit import Reason
from inspector.pipeline.profiles.agents import OVERHEAD, AgentReplayer, AgentRules, StepRules
from inspector.pipeline.profiles.base import KeySpec, Profile, ReasonDoc, SummarizationCall, ratio
from inspector.pipeline.profiles.common import REASONS as SHARED

if TYPE_CHECKING:
    from inspector.pipeline.profiles.base import Settings

NAME = "gemini-cli"
TOKEN_LIMIT = 1_048_576                  # core/tokenLimits.ts DEFAULT_TOKEN_LIMIT
COMPRESSION_TOKEN_THRESHOLD = 0.5        # DEFAULT_COMPRESSION_TOKEN_THRESHOLD
COMPRESSION_PRESERVE_THRESHOLD = 0.3     # the newest fraction of the history kept


def threshold(config: Settings) -> int | None:
    """`threshold * tokenLimit(model)`: compress when the last prompt reaches it (`<` skips)."""
    return int(config["gemini_cli.compression_threshold"] * config["context.window"])


def step_rules(replayer: AgentReplayer) -> StepRules:
    """The trigger reads the last call's prompt count alone: nothing added to it."""
    n = len(replayer.requests)
    limit = threshold(replayer.config)
    return StepRules(names=(NAME,) * n, thresholds=(limit,) * n, added=(0,) * n, keeps_tail=(False,) * n,
                     reattached=(None,) * n)


RULES = AgentRules(NAME, threshold, reads="prompt", keep="fraction", prune="none", summary_first=True,
                   keep_fraction=COMPRESSION_PRESERVE_THRESHOLD, per_request=step_rules)


def replayer(thread, config: Settings, ctx) -> AgentReplayer:
    return AgentReplayer(thread, config, ctx, RULES)


PROFILE = Profile(
    name=NAME,
    reproduces="Gemini CLI's chat compression",
    summary="the last prompt reaches 0.5 of the model's window; the oldest ~70% of the history becomes a "
            "`<state_snapshot>` (checked by a second pass), the newest ~30% stays",
    sources=("google-gemini/gemini-cli `packages/core/src/context/chatCompressionService.ts` (5411f11)",
             "`core/tokenLimits.ts`", "`core/client.ts`"),
    reads=("context.window", "gemini_cli.compression_threshold", "context.tokenizer", "context.trigger_tokens",
           "summarization.summarizer", "summarization.model", "summarization.timeout"),
    defaults={"context.token_budget_ratio": 1.0, "context.window": TOKEN_LIMIT},
    keys=(
        KeySpec("gemini_cli.compression_threshold", float, COMPRESSION_TOKEN_THRESHOLD,
                "`model.compressionThreshold`: the fraction of the window the last prompt reaches to compress", ratio),
    ),
    reasons=(
        SHARED[Reason.SYSTEM],
        SHARED[Reason.CURRENT_TURN],
        ReasonDoc(Reason.SINCE_COMPACTION, "kept", "sent: the newest ~30% of the history a compression kept, and "
                  "everything since"),
        SHARED[Reason.SUMMARIZED],
        SHARED[Reason.SUMMARY_INJECTED],
    ),
    message_overhead=OVERHEAD,
    replayer=replayer,
    agent=True,
    summarization=SummarizationCall(
        "span", cached=False, model="thread", verification=True,
        source="google-gemini/gemini-cli `chatCompressionService.ts` (`compress`: the compressed part and the "
               "instruction sent to the model's compression alias with the compression system prompt, then "
               "the probe: the same history and the snapshot, asking for a final `<state_snapshot>`)"),
)
