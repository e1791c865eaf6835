"""The `codex` profile: Codex CLI's auto-compaction (openai/codex, `codex-rs/core`).

- Trigger: after a sampling request, the response's total token usage (its prompt plus its
  output) reaches the auto-compact limit: `model_auto_compact_token_limit` where set
  (`codex.auto_compact_token_limit`, 0 = unset), never above 90% of the context window
  (`ModelInfo::auto_compact_token_limit`: `context_window * 9 / 10`).
- Compaction (`compact.rs`, `build_compacted_history`): the new history is the initial context,
  then the most recent user messages, newest first, up to `COMPACT_USER_MESSAGE_MAX_TOKENS`
  = 20,000 tokens by Codex's rough count (bytes / 4), the one that overflows truncated to what
  is left (`codex.compact_user_tokens`), then the summary. Session-prefix user messages
  (AGENTS.md, environment context) and earlier summaries are not kept.
"""

from __future__ import annotations

from inspector.config import Config
from inspector.pipeline.agents import AgentReplayer, AgentRules

NAME = "codex"


def threshold(config: Config) -> int | None:
    limit = config["context.window"] * 9 // 10
    configured = config["codex.auto_compact_token_limit"]
    return min(limit, configured) if configured > 0 else limit


RULES = AgentRules(NAME, threshold, reads="previous", keep="user_messages", prune="none", summary_first=False)


def replayer(thread, config: Config, ctx) -> AgentReplayer:
    return AgentReplayer(thread, config, ctx, RULES)
