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

from typing import TYPE_CHECKING, Any

from inspector.pipeline.audit import Reason
from inspector.pipeline.profiles.agents import OVERHEAD, AgentReplayer, AgentRules
from inspector.pipeline.profiles.base import KeySpec, Profile, ReasonDoc, SummarizationCall, non_negative
from inspector.pipeline.profiles.common import REASONS as SHARED

if TYPE_CHECKING:
    from inspector.config import Config

NAME = "claude-code"


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


def _thread_values(thread) -> dict[str, Any]:
    """Claude Code's output reserve of the thread's CLI version (measured in the transcripts)."""
    reserve = output_reserve_for_version(str((getattr(thread, "meta", None) or {}).get("version") or ""))
    return {} if reserve is None else {"claude_code.output_reserve": reserve}


def _percent(v: int) -> str | None:
    return None if 0 <= v <= 100 else "must be in 0..100 (0: unset)"


PROFILE = Profile(
    name=NAME,
    reproduces="Claude Code's auto-compaction",
    summary="the prompt about to be sent reaches `window - output_reserve - 13000`; the summary replaces the "
            "whole history",
    sources=("the real transcripts' `compact_boundary` records", "public write-ups of Claude Code's auto-compact"),
    reads=("context.window", "claude_code.autocompact_pct_override", "claude_code.output_reserve",
           "claude_code.autocompact_buffer", "context.tokenizer", "context.trigger_tokens", "summarization.summarizer", "summarization.model", "summarization.timeout"),
    # Claude's tokenizer is not public; o200k_base (tiktoken, offline) counts what Claude bills more
    # steadily than chars4: the calibrated model fitted on a session's first half is within 3% of
    # the billed count on 100% of the CLI 1.0 session's later half under it, 41% under chars4
    # (`python -m bench.bench_calibration`).
    defaults={"context.token_budget_ratio": 1.0, "context.tokenizer": "o200k_base"},
    keys=(
        KeySpec("claude_code.autocompact_pct_override", int, 0, "`CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`: compact at this percentage of `window - output_reserve` (0: unset; it only lowers the threshold)", _percent,
                unset=0, unset_behaves_as=100),
        KeySpec("claude_code.output_reserve", int, 20_000, "tokens Claude Code keeps for the summary's output: `32000` for threads of CLI 2.1.20 and older (set from the thread's version)",
                non_negative),
        KeySpec("claude_code.autocompact_buffer", int, 13_000, "the auto-compact buffer below `window - output_reserve`", non_negative),
    ),
    reasons=(
        SHARED[Reason.SYSTEM],
        SHARED[Reason.CURRENT_TURN],
        ReasonDoc(Reason.SINCE_COMPACTION, "kept", "sent: the agent sends every message since its last compaction"),
        SHARED[Reason.SUMMARIZED],
        SHARED[Reason.SUMMARY_INJECTED],
    ),
    message_overhead=OVERHEAD,
    replayer=replayer,
    agent=True,
    default_for=("claude-code",),
    thread_values=_thread_values,
    summarization=SummarizationCall(
        "history", cached=True, model="thread",
        source="Claude Code's compaction forks the conversation with its cache-safe parameters (system prompt, "
               "tools, model, messages) so the summarization call reads the conversation's cached prompt and "
               "writes none (`compact.ts`, as described in public write-ups of its prompt caching)"),
)
