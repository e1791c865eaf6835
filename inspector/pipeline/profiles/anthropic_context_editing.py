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

from inspector.config import Config
from inspector.pipeline.agents import AgentReplayer, AgentRules

NAME = "anthropic-context-editing"
PLACEHOLDER = "[tool result cleared]"


def threshold(config: Config) -> int | None:
    value = config["context_editing.compact_trigger"]
    return value if value > 0 else None


RULES = AgentRules(NAME, threshold, reads="prompt", keep="none", prune="clear_tool_uses",
                   summary_first=True, placeholder=PLACEHOLDER)


def replayer(thread, config: Config, ctx) -> AgentReplayer:
    return AgentReplayer(thread, config, ctx, RULES)
