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

from typing import TYPE_CHECKING

from inspector.pipeline.audit import Reason
from inspector.pipeline.profiles.agents import OVERHEAD, AgentReplayer, AgentRules
from inspector.pipeline.profiles.base import KeySpec, Profile, ReasonDoc, SummarizationCall, non_negative
from inspector.pipeline.profiles.common import REASONS as SHARED

if TYPE_CHECKING:
    from inspector.pipeline.profiles.base import Settings

NAME = "opencode"
PLACEHOLDER = "[Old tool result content cleared]"


def threshold(config: Settings) -> int | None:
    max_output = config["opencode.max_output_tokens"]
    reserved = config["opencode.reserved"] or min(20_000, max_output)
    return max(0, config["context.window"] - max_output - reserved)


RULES = AgentRules(NAME, threshold, reads="previous", keep="recent_turns", prune="opencode",
                   summary_first=True, placeholder=PLACEHOLDER)


def replayer(thread, config: Settings, ctx) -> AgentReplayer:
    return AgentReplayer(thread, config, ctx, RULES)


PROFILE = Profile(
    name=NAME,
    reproduces="opencode's prune and compaction",
    summary="prune of old tool outputs past `PRUNE_PROTECT`; compaction when the last response reaches "
            "`window - max_output - reserved`, keeping the newest turns within `preserve_recent_tokens`",
    sources=("sst/opencode `packages/opencode/src/session/compaction.ts`", "`session/overflow.ts`"),
    reads=("context.window", "opencode.prune_protect", "opencode.prune_minimum", "opencode.max_output_tokens",
           "opencode.reserved", "opencode.preserve_recent_tokens", "context.tokenizer", "context.trigger_tokens", "summarization.summarizer", "summarization.model", "summarization.timeout"),
    defaults={"context.token_budget_ratio": 1.0},
    keys=(
        KeySpec("opencode.prune_protect", int, 40_000, "`PRUNE_PROTECT`: recent tool-output tokens never erased",
                non_negative),
        KeySpec("opencode.prune_minimum", int, 20_000, "`PRUNE_MINIMUM`: erase only when that frees more than this",
                non_negative),
        KeySpec("opencode.max_output_tokens", int, 32_000, "output tokens opencode reserves (`OUTPUT_TOKEN_MAX`)",
                non_negative),
        KeySpec("opencode.reserved", int, 0, "`compaction.reserved` (0: min(20000, max_output_tokens))", non_negative, unset=0),
        KeySpec("opencode.preserve_recent_tokens", int, 0, "recent tokens a compaction keeps (0: min(15000, max(2000, usable / 4)))",
                non_negative, unset=0),
    ),
    reasons=(
        SHARED[Reason.SYSTEM],
        SHARED[Reason.CURRENT_TURN],
        ReasonDoc(Reason.SINCE_COMPACTION, "kept", "sent: the agent sends every message since its last compaction"),
        SHARED[Reason.SUMMARIZED],
        SHARED[Reason.SUMMARY_INJECTED],
        ReasonDoc(Reason.TOOL_OUTPUT_PRUNED, "pruned",
                  "an old tool output erased by `prune` (`[Old tool result content cleared]`)"),
    ),
    message_overhead=OVERHEAD,
    replayer=replayer,
    agent=True,
    summarization=SummarizationCall(
        "history", cached=False, model="thread",
        source="sst/opencode `session/compaction.ts` (`process`: the compaction agent, with no system prompt "
               "and no tools, sends the history again; it shares no prefix with the chat's cached prompt, "
               "anomalyco/opencode#25120)"),
)
