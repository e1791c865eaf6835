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

from inspector.pipeline.agents import AGENT_OVERHEAD, AgentReplayer, AgentRules
from inspector.pipeline.audit import Reason
from inspector.pipeline.profiles.base import KeySpec, Profile, ReasonDoc, non_negative, positive
from inspector.pipeline.profiles.common import REASONS as SHARED

if TYPE_CHECKING:
    from inspector.config import Config

NAME = "anthropic-context-editing"
PLACEHOLDER = "[tool result cleared]"


def threshold(config: Config) -> int | None:
    value = config["context_editing.compact_trigger"]
    return value if value > 0 else None


RULES = AgentRules(NAME, threshold, reads="prompt", keep="none", prune="clear_tool_uses",
                   summary_first=True, placeholder=PLACEHOLDER)


def replayer(thread, config: Config, ctx) -> AgentReplayer:
    return AgentReplayer(thread, config, ctx, RULES)


PROFILE = Profile(
    name=NAME,
    reproduces="the Messages API's context editing (clear_tool_uses_20250919) and compaction (compact_20260112)",
    summary="tool results but the last `keep` cleared once the input reaches `trigger`; server-side compaction at "
            "`compact_trigger`: would context editing have avoided this compaction?",
    sources=("Anthropic docs: Context editing", "Anthropic docs: Compaction"),
    reads=(
        "context.window", "context_editing.trigger", "context_editing.keep", "context_editing.clear_at_least",
        "context_editing.exclude_tools", "context_editing.clear_tool_inputs", "context_editing.compact_trigger",
        "context.tokenizer", "context.trigger_tokens", "summarization.summarizer", "summarization.model",
        "summarization.timeout",
    ),
    keys=(
        KeySpec("context_editing.trigger", int, 100_000, "clear_tool_uses trigger (input tokens)", positive),
        KeySpec("context_editing.keep", int, 3, "Tool uses clear_tool_uses keeps", non_negative),
        KeySpec("context_editing.clear_at_least", int, 0, "Clear only when at least this many tokens go",
                non_negative),
        KeySpec("context_editing.exclude_tools", str, "", "Tools whose results are never cleared (comma-separated)"),
        KeySpec("context_editing.clear_tool_inputs", str, "false", "Also clear the cleared calls' inputs",
                choices=("false", "true")),
        KeySpec("context_editing.compact_trigger", int, 150_000, "compact_20260112 trigger (input tokens; 0: off)",
                non_negative),
    ),
    defaults={"context.token_budget_ratio": 1.0},
    reasons=(
    ReasonDoc(Reason.SYSTEM, "kept", "the system prompt and the session's opening blocks; always sent"),
    ReasonDoc(Reason.CURRENT_TURN, "kept", "in the request's current turn"),
    ReasonDoc(Reason.SINCE_COMPACTION, "kept", "sent: the agent sends every message since its last compaction"),
    SHARED[Reason.SUMMARIZED],
    ReasonDoc(Reason.SUMMARY_INJECTED, "kept", "synthetic: the compaction summary the agent sends in place of the history"),
        ReasonDoc(Reason.TOOL_RESULT_CLEARED, "pruned",
                  "context editing: a tool result cleared by the API, sent as `[tool result cleared]`"),
    ),
    message_overhead=AGENT_OVERHEAD,
    replayer=replayer,
    agent=True,
)
