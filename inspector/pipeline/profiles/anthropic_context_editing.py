"""The `anthropic-context-editing` profile: the Messages API's server-side context management
(Anthropic docs, "Context editing" and "Compaction"), for any thread: "would context editing
have avoided this compaction?".

- `clear_tool_uses_20250919`, applied by the API to each request on its own (the client keeps
  the full history): when the request's input tokens reach `trigger` (default 100,000), every
  tool result but the last `keep` (default 3) is replaced by a placeholder, oldest first;
  results of `exclude_tools` are never cleared; `clear_tool_inputs` also clears the cleared
  calls' inputs; nothing is cleared unless at least `clear_at_least` tokens would be.
  Keys `context_editing.*`.
- `compact_20260112`: when the input (after clearing) reaches `context_editing.compact_trigger`
  (default 150,000; 0 turns it off), the API summarizes and the compaction block replaces
  everything before it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.pipeline.audit import Reason
from inspector.pipeline.profiles.agents import OVERHEAD, AgentReplayer, AgentRules
from inspector.pipeline.profiles.base import KeySpec, Profile, ReasonDoc, SummarizationCall, non_negative, positive
from inspector.pipeline.profiles.common import REASONS as SHARED

if TYPE_CHECKING:
    from inspector.pipeline.profiles.base import Settings

NAME = "anthropic-context-editing"
PLACEHOLDER = "[tool result cleared]"


def threshold(config: Settings) -> int | None:
    value = config["context_editing.compact_trigger"]
    return value if value > 0 else None


RULES = AgentRules(NAME, threshold, reads="prompt", keep="none", prune="clear_tool_uses",
                   summary_first=True, placeholder=PLACEHOLDER)


def replayer(thread, config: Settings, ctx) -> AgentReplayer:
    return AgentReplayer(thread, config, ctx, RULES)


PROFILE = Profile(
    name=NAME,
    reproduces="the Messages API's server-side context editing and compaction",
    summary="`clear_tool_uses_20250919` over `trigger` input tokens clears all tool results but the last `keep`; "
            "`compact_20260112` at `compact_trigger` replaces what came before",
    sources=('Anthropic docs, "Context editing" and "Compaction"',),
    reads=("context.window", "context_editing.trigger", "context_editing.keep", "context_editing.clear_at_least",
           "context_editing.exclude_tools", "context_editing.clear_tool_inputs", "context_editing.compact_trigger",
           "context.tokenizer", "context.trigger_tokens", "summarization.summarizer", "summarization.model", "summarization.timeout"),
    defaults={"context.token_budget_ratio": 1.0},
    keys=(
        KeySpec("context_editing.trigger", int, 100_000, "`clear_tool_uses_20250919` trigger, input tokens", positive),
        KeySpec("context_editing.keep", int, 3, "tool uses kept", non_negative),
        KeySpec("context_editing.clear_at_least", int, 0, "clear only when at least this many tokens go",
                non_negative),
        KeySpec("context_editing.exclude_tools", str, "", "tools whose results are never cleared (comma-separated)"),
        KeySpec("context_editing.clear_tool_inputs", str, "false", "also clear the cleared calls' inputs",
                choices=("false", "true")),
        KeySpec("context_editing.compact_trigger", int, 150_000, "`compact_20260112` trigger, input tokens (0: off)",
                non_negative, unset=0),
    ),
    reasons=(
        SHARED[Reason.SYSTEM],
        SHARED[Reason.CURRENT_TURN],
        ReasonDoc(Reason.SINCE_COMPACTION, "kept", "sent: the agent sends every message since its last compaction"),
        SHARED[Reason.SUMMARIZED],
        SHARED[Reason.SUMMARY_INJECTED],
        ReasonDoc(Reason.TOOL_RESULT_CLEARED, "pruned", "a tool result cleared by `clear_tool_uses_20250919`"),
    ),
    message_overhead=OVERHEAD,
    replayer=replayer,
    agent=True,
    summarization=SummarizationCall(
        "history", cached=True, model="thread",
        source="Anthropic docs, \"Compaction\": the summary is an extra sampling step of the same model over "
               "the request's input, billed in `usage.iterations` (with its own cache reads)"),
)
