"""The `claude-code` profile: Claude Code's auto-compaction, as measured in its transcripts.

- Trigger: the prompt Claude Code is about to send (the last call's billed prompt plus what
  was appended since; a `compact_boundary`'s `preTokens` is exactly that: in the real files it
  equals the previous call's input + cache + output tokens plus the rough size of the tool
  results that followed, within 1-2,000 tokens) reaches `window - output_reserve - buffer`:
  155,000 on a 200k window up to CLI 2.1.20 (32,000 reserved for the summary's output), 167,000
  from 2.1.2x (20,000 reserved); the buffer is 13,000. `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`
  (`claude_code.autocompact_pct_override`, 0 = unset) lowers it to that percentage of
  `window - output_reserve`.
- Compaction replaces the whole history by the summary (the next request sees only the summary
  and what follows; Claude Code's re-attached files are part of the calibrated unaccounted tokens).
- Microcompaction of old tool results is not replayed: it shows only in the recorded counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.pipeline.agents import AGENT_OVERHEAD, AgentReplayer, AgentRules
from inspector.pipeline.audit import Reason
from inspector.pipeline.profiles.base import KeySpec, Profile, ReasonDoc, non_negative, percent
from inspector.pipeline.profiles.common import REASONS as SHARED

if TYPE_CHECKING:
    from inspector.config import Config

NAME = "claude-code"


def output_reserve_for_version(version: str | None) -> int | None:
    """The summary-output reserve of a Claude Code CLI version: 32,000 up to 2.1.20, 20,000
    after (compactions at 155k and 167k on a 200k window); None for an unknown version."""
    if not version:
        return None
    try:
        parts = tuple(int(p) for p in version.split(".")[:3])
    except ValueError:
        return None
    return 32_000 if parts <= (2, 1, 20) else 20_000


def threshold(config: Config) -> int | None:
    effective = config["context.window"] - config["claude_code.output_reserve"]
    auto = effective - config["claude_code.autocompact_buffer"]
    pct = config["claude_code.autocompact_pct_override"]
    if pct > 0:
        auto = min(effective * pct // 100, auto)
    return max(0, auto)


RULES = AgentRules(NAME, threshold, reads="prompt", keep="none", prune="none", summary_first=True)


def replayer(thread, config: Config, ctx) -> AgentReplayer:
    return AgentReplayer(thread, config, ctx, RULES)


PROFILE = Profile(
    name=NAME,
    reproduces="Claude Code's auto-compaction (measured in its transcripts)",
    summary="compaction when the prompt about to be sent reaches window - output reserve - buffer (155k on 200k up to "
            "CLI 2.1.20, 167k after), `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` as a key; the summary replaces the whole history",
    sources=("Claude Code transcripts (compact_boundary preTokens, CLI 2.0-2.1.37)", "anthropics/claude-code docs"),
    reads=(
        "context.window", "claude_code.autocompact_pct_override", "claude_code.output_reserve",
        "claude_code.autocompact_buffer", "context.tokenizer", "context.trigger_tokens", "summarization.summarizer", "summarization.model",
        "summarization.timeout",
    ),
    keys=(
        KeySpec("claude_code.autocompact_pct_override", int, 0, "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (0: unset)", percent),
        KeySpec("claude_code.output_reserve", int, 20_000, "Tokens Claude Code reserves for the summary's output",
                non_negative),
        KeySpec("claude_code.autocompact_buffer", int, 13_000,
                "Claude Code's auto-compact buffer below the effective window", non_negative),
    ),
    defaults={"context.token_budget_ratio": 1.0},
    reasons=(
    ReasonDoc(Reason.SYSTEM, "kept", "the system prompt and the session's opening blocks; always sent"),
    ReasonDoc(Reason.CURRENT_TURN, "kept", "in the request's current turn"),
    ReasonDoc(Reason.SINCE_COMPACTION, "kept", "sent: the agent sends every message since its last compaction"),
    SHARED[Reason.SUMMARIZED],
    ReasonDoc(Reason.SUMMARY_INJECTED, "kept", "synthetic: the compaction summary the agent sends in place of the history"),
    ),
    message_overhead=AGENT_OVERHEAD,
    replayer=replayer,
    agent=True,
)
