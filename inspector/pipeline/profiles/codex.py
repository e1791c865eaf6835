"""The `codex` profile: Codex CLI's auto-compaction (openai/codex, `codex-rs/core`), by the CLI
version and model provider the rollout recorded (`codex_versions`; `rules` in the simulate JSON
and on the status line).

- Trigger: after a sampling request, the response's total token usage (its prompt plus its
  output, as the rollout's `token_count` records them) reaches the auto-compact limit: 90% of the
  context window, or `model_auto_compact_token_limit` where set (`codex.auto_compact_token_limit`,
  0 = unset), held to that 90% on the local path (and on the remote one up to 0.132).
- Compaction: the new history is the initial context, then the most recent user messages, newest
  first, up to a budget by Codex's rough count (bytes / 4), the one that overflows truncated to
  what is left (`codex.compact_user_tokens`): 20,000 tokens on the local path (`compact.rs`,
  `build_compacted_history`, then the summary), 64,000 on the remote one, the OpenAI provider's
  from 0.63 (`compact_remote.rs`, `compact_remote_v2.rs`, `RETAINED_MESSAGE_TOKEN_BUDGET`, then the provider's opaque
  compaction item). Session-prefix user messages (AGENTS.md, environment context) and earlier
  summaries are not kept.
- A manual `/compact` is the user's: replayed where it happened (`agents.AgentReplayer`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from inspector.pipeline.audit import Reason
from inspector.pipeline.profiles.agents import OVERHEAD, AgentReplayer, AgentRules, StepRules
from inspector.pipeline.profiles.base import KeySpec, Profile, ReasonDoc, SummarizationCall, non_negative
from inspector.pipeline.profiles.codex_versions import (
    LOCAL_KEPT_TOKENS,
    CodexRules,
    auto_compact_limit,
    rules_for,
    thread_rules,
)
from inspector.pipeline.profiles.common import REASONS as SHARED

if TYPE_CHECKING:
    from inspector.pipeline.profiles.base import Settings

NAME = "codex"


def threshold(config: Settings, rules: CodexRules | None = None) -> int | None:
    """The auto-compact limit under `config` for `rules` (None: the newest OpenAI rules)."""
    return auto_compact_limit(config["context.window"], config["codex.auto_compact_token_limit"],
                              rules or rules_for(None))


def step_rules(replayer: AgentReplayer) -> StepRules:
    """The thread's rules on every request, and what the trigger adds to the previous request's
    billed prompt: that response's output tokens as recorded (its rough count where none is)."""
    rules = thread_rules(replayer.thread)
    limit = threshold(replayer.config, rules)
    t, requests = replayer.t, replayer.requests
    added = [0] * len(requests)
    prev_end = -1
    for k, req in enumerate(requests):
        end = t.index[req.after_message_id]
        if k > 0:
            recorded = requests[k - 1].output_tokens
            added[k] = recorded if recorded is not None else (
                t.approx_out[end + 1] - t.approx_out[prev_end + 1] if end > prev_end else 0)
        prev_end = end
    n = len(requests)
    return StepRules(names=(rules.name,) * n, thresholds=(limit,) * n, added=tuple(added),
                     keeps_tail=(False,) * n, reattached=(None,) * n)


RULES = AgentRules(NAME, threshold, reads="previous", keep="user_messages", prune="none", summary_first=False,
                   per_request=step_rules)


def replayer(thread, config: Settings, ctx) -> AgentReplayer:
    return AgentReplayer(thread, config, ctx, RULES)


def _thread_values(thread) -> dict[str, Any]:
    """What a compaction keeps under the rollout's CLI version and provider (64,000 remote, 20,000 local)."""
    return {"codex.compact_user_tokens": thread_rules(thread).kept_tokens}


PROFILE = Profile(
    name=NAME,
    reproduces="Codex CLI's auto-compaction",
    summary="the last response's usage reaches 90% of the window (or `model_auto_compact_token_limit`); keeps "
            "the newest user messages up to 20,000 tokens (local) or 64,000 (remote: OpenAI, Azure), then the summary",
    sources=("openai/codex `codex-rs/core/src/compact.rs`", "`compact_remote_v2.rs`", "`session/context_window.rs`"),
    reads=("context.window", "codex.auto_compact_token_limit", "codex.compact_user_tokens", "context.tokenizer", "context.trigger_tokens", "summarization.summarizer", "summarization.model", "summarization.timeout"),
    # Codex runs OpenAI models: o200k_base is their tokenizer (exact, offline).
    defaults={"context.token_budget_ratio": 1.0, "context.tokenizer": "o200k_base"},
    keys=(
        KeySpec("codex.auto_compact_token_limit", int, 0, "`model_auto_compact_token_limit` (0: unset); held to 90% of the window on the local path (remote: from CLI 0.133 as set)",
                non_negative, unset=0),
        KeySpec("codex.compact_user_tokens", int, LOCAL_KEPT_TOKENS, "recent user-message tokens a compaction keeps: 20,000 local (`COMPACT_USER_MESSAGE_MAX_TOKENS`), 64,000 remote (`RETAINED_MESSAGE_TOKEN_BUDGET`); set from the rollout's CLI version and provider",
                non_negative),
    ),
    reasons=(
        SHARED[Reason.SYSTEM],
        SHARED[Reason.CURRENT_TURN],
        ReasonDoc(Reason.SINCE_COMPACTION, "kept", "sent: the agent sends every message since its last compaction"),
        SHARED[Reason.SUMMARIZED],
        SHARED[Reason.SUMMARY_INJECTED],
        ReasonDoc(Reason.KEPT_AFTER_COMPACTION, "kept / truncated",
                  "in a summarized span but kept verbatim: a recent user message (the one that overflows the budget, "
                  "truncated)"),
    ),
    message_overhead=OVERHEAD,
    replayer=replayer,
    agent=True,
    thread_values=_thread_values,
    summarization=SummarizationCall(
        "history", cached=True, model="thread",
        source="openai/codex `codex-rs/core/src/compact.rs` (`run_compact_task`: the history and the "
               "summarization prompt sent as a turn of the same model, on OpenAI's automatic prefix cache)"),
)
