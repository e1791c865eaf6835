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

from typing import TYPE_CHECKING

from inspector.pipeline.audit import Reason
from inspector.pipeline.profiles.agents import OVERHEAD, AgentReplayer, AgentRules
from inspector.pipeline.profiles.base import KeySpec, Profile, ReasonDoc, SummarizationCall, non_negative
from inspector.pipeline.profiles.common import REASONS as SHARED

if TYPE_CHECKING:
    from inspector.pipeline.profiles.base import Settings

NAME = "codex"


def threshold(config: Settings) -> int | None:
    limit = config["context.window"] * 9 // 10
    configured = config["codex.auto_compact_token_limit"]
    return min(limit, configured) if configured > 0 else limit


RULES = AgentRules(NAME, threshold, reads="previous", keep="user_messages", prune="none", summary_first=False)


def replayer(thread, config: Settings, ctx) -> AgentReplayer:
    return AgentReplayer(thread, config, ctx, RULES)


PROFILE = Profile(
    name=NAME,
    reproduces="Codex CLI's auto-compaction",
    summary="the last response's usage reaches min(`model_auto_compact_token_limit`, 90% of the window); keeps "
            "the newest user messages up to 20,000 tokens, then the summary",
    sources=("openai/codex `codex-rs/core/src/compact.rs`", "`codex-rs/protocol/src/openai_models.rs`"),
    reads=("context.window", "codex.auto_compact_token_limit", "codex.compact_user_tokens", "context.tokenizer", "context.trigger_tokens", "summarization.summarizer", "summarization.model", "summarization.timeout"),
    # Codex runs OpenAI models: o200k_base is their tokenizer (exact, offline).
    defaults={"context.token_budget_ratio": 1.0, "context.tokenizer": "o200k_base"},
    keys=(
        KeySpec("codex.auto_compact_token_limit", int, 0, "`model_auto_compact_token_limit` (0: unset); never above 90% of the window",
                non_negative, unset=0),
        KeySpec("codex.compact_user_tokens", int, 20_000, "recent user-message tokens a compaction keeps (`COMPACT_USER_MESSAGE_MAX_TOKENS`)",
                non_negative),
    ),
    reasons=(
        SHARED[Reason.SYSTEM],
        SHARED[Reason.CURRENT_TURN],
        ReasonDoc(Reason.SINCE_COMPACTION, "kept", "sent: the agent sends every message since its last compaction"),
        SHARED[Reason.SUMMARIZED],
        SHARED[Reason.SUMMARY_INJECTED],
        ReasonDoc(Reason.KEPT_AFTER_COMPACTION, "kept / truncated",
                  "in a summarized span but kept verbatim: a recent user message (the one that overflows the 20k, "
                  "truncated)"),
    ),
    message_overhead=OVERHEAD,
    replayer=replayer,
    agent=True,
    summarization=SummarizationCall(
        "history", cached=True, model="thread",
        source="openai/codex `codex-rs/core/src/compact.rs` (`run_compact_task`: the history and the "
               "summarization prompt sent as a turn of the same model, on OpenAI's automatic prefix cache)"),
)
