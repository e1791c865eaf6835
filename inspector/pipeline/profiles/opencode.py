"""The `opencode` profile: opencode's prune and compaction (sst/opencode, anomalyco/opencode:
`packages/opencode/src/session/compaction.ts`, `overflow.ts`).

- Prune (after each prompt loop, so before the first request of each new user turn): going
  back from before the last 2 user turns, tool outputs are protected until `PRUNE_PROTECT`
  = 40,000 tokens of them (rough count, characters / 4); the older ones are erased ("[Old tool
  result content cleared]") when that frees more than `PRUNE_MINIMUM` = 20,000; outputs of the
  `skill` tool are never erased; an earlier erasure or compaction stops the walk.
- Compaction when the last response's tokens (prompt + output) reach the usable window:
  `window - max_output_tokens - reserved`, reserved = min(20,000, max_output_tokens) unless set
  (`opencode.max_output_tokens` 32,000 = OUTPUT_TOKEN_MAX, `opencode.reserved`).
- What survives a compaction (`select`): the newest turns that fit `preserve_recent_tokens`
  (default min(15,000, max(2,000, usable / 4))), then the newest suffix of the next turn that fits.
"""

from __future__ import annotations

from inspector.config import Config
from inspector.pipeline.agents import AgentReplayer, AgentRules

NAME = "opencode"
PLACEHOLDER = "[Old tool result content cleared]"


def threshold(config: Config) -> int | None:
    max_output = config["opencode.max_output_tokens"]
    reserved = config["opencode.reserved"] or min(20_000, max_output)
    return max(0, config["context.window"] - max_output - reserved)


RULES = AgentRules(NAME, threshold, reads="previous", keep="recent_turns", prune="opencode",
                   summary_first=True, placeholder=PLACEHOLDER)


def replayer(thread, config: Config, ctx) -> AgentReplayer:
    return AgentReplayer(thread, config, ctx, RULES)
