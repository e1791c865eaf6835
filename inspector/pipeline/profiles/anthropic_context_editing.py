"""The `anthropic-context-editing` profile: the Messages API's server-side context management
(Anthropic docs, "Context editing" and "Compaction"), for any thread: "would context editing
have avoided this compaction?".

- `clear_tool_uses_20250919`, applied by the API to each request on its own (the client keeps
  the full history): when the request's input tokens reach `trigger` (default 100,000), every
  tool result but the last `keep` (default 3) is replaced by a placeholder, oldest first;
  results of `exclude_tools` are never cleared; `clear_tool_inputs` also clears the cleared
  calls' inputs; nothing is cleared unless at least `clear_at_least` tokens would be.
  Keys `context_editing.*`.
- `clear_thinking_20251015`: the thinking blocks of the last `keep` assistant turns are sent,
  the older ones cleared (`context_editing.thinking_turns`, 0 = `"all"`); without the strategy the
  API keeps only the last assistant turn's (as `keep: {type: "thinking_turns", value: 1}`), the
  default here. Thinking is counted where the thread recorded it (`meta["thinking"]`).
- `compact_20260112`: when the input (after clearing) reaches `context_editing.compact_trigger`
  (default 150,000, at least 50,000; 0 turns it off), the API summarizes and the compaction block
  replaces everything before it.
- Compaction on demand (beta `compact-2026-09-04`): the client asks for it and the response is one
  `compaction` block with `stop_reason: "compaction"`; the client's choice, not the API's: a thread
  that records one (`trigger: "manual"`) has it replayed where it happened, in both modes.
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


COMPACT_TRIGGER_MINIMUM = 50_000  # "Compaction": the API refuses a lower trigger (a lower one here is a what-if)


def threshold(config: Settings) -> int | None:
    value = config["context_editing.compact_trigger"]
    return value if value > 0 else None


RULES = AgentRules(NAME, threshold, reads="prompt", keep="none", prune="clear_tool_uses",
                   summary_first=True, placeholder=PLACEHOLDER, keeps_thinking=True)


def replayer(thread, config: Settings, ctx) -> AgentReplayer:
    return AgentReplayer(thread, config, ctx, RULES)


PROFILE = Profile(
    name=NAME,
    reproduces="the Messages API's server-side context editing and compaction",
    summary="`clear_tool_uses_20250919` over `trigger` input tokens clears all tool results but the last `keep`; "
            "`clear_thinking_20251015` sends the last `keep` turns' thinking (1 without it); `compact_20260112` at "
            "`compact_trigger` replaces what came before; an on-demand compaction is replayed where it happened",
    sources=('Anthropic docs, "Context editing", "Compaction" and "Compaction on demand"',),
    reads=("context.window", "context_editing.trigger", "context_editing.keep", "context_editing.clear_at_least",
           "context_editing.exclude_tools", "context_editing.clear_tool_inputs", "context_editing.thinking_turns",
           "context_editing.compact_trigger",
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
        KeySpec("context_editing.thinking_turns", int, 1, "`clear_thinking_20251015` `keep`: assistant turns whose thinking is sent (0: all; 1 is the API's default without the strategy)",
                non_negative),
        KeySpec("context_editing.compact_trigger", int, 150_000, "`compact_20260112` trigger, input tokens (0: off; the API refuses one under 50,000)",
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
