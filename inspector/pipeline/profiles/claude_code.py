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

from inspector.config import Config, output_reserve_for_version  # noqa: F401 - re-exported
from inspector.pipeline.agents import AgentReplayer, AgentRules

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
