"""The `opencode` profile: opencode's prune and compaction, by version (`opencode_versions`;
anomalyco/opencode `packages/opencode/src/session/overflow.ts`, `compaction.ts`).

- Prune (after each prompt loop, so before the first request of each new user turn; off by
  default from 1.14, `opencode.prune`): going back from before the last 2 user turns, tool outputs
  are protected until `PRUNE_PROTECT` = 40,000 tokens of them (rough count, characters / 4); the
  older ones are erased ("[Old tool result content cleared]") when that frees more than
  `PRUNE_MINIMUM` = 20,000; outputs of the `skill` tool are never erased; an earlier erasure or
  compaction stops the walk.
- Compaction when the last response's count reaches the usable window: `input_limit - reserved`
  where the model has an input limit (`opencode.input_limit`), else `window - max_output_tokens`
  (`opencode.max_output_tokens` 32,000 = OUTPUT_TOKEN_MAX; reserved = min(20,000, max_output)
  unless set). The count is opencode's `tokenCount`, the prompt's parts plus the output and the
  cache reads: where a provider reports cache reads past the prompt it billed
  (anomalyco/opencode#30649) the count runs ahead, and a compaction that alone triggers says so.
- What survives a compaction (`select`): of the last `tail_turns` (2) turns, the newest that fit
  `preserve_recent_tokens` (default min(15,000, max(2,000, usable / 4))), then the newest suffix
  of the next turn that fits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from inspector.pipeline.audit import Reason
from inspector.pipeline.profiles.agents import OVERHEAD, AgentReplayer, AgentRules, StepRules
from inspector.pipeline.profiles.base import KeySpec, Profile, ReasonDoc, SummarizationCall, non_negative
from inspector.pipeline.profiles.common import REASONS as SHARED
from inspector.pipeline.profiles.opencode_versions import (
    DEFAULT_TAIL_TURNS,
    OUTPUT_TOKEN_MAX,
    prunes,
    rules_for,
    token_count,
    usable,
)

if TYPE_CHECKING:
    from inspector.pipeline.profiles.base import Settings

NAME = "opencode"
PLACEHOLDER = "[Old tool result content cleared]"
CACHE_READ_NOTE = "triggered by the provider's cache reads past its prompt, which opencode counts (anomalyco/opencode#30649)"


def threshold(config: Settings) -> int | None:
    return usable(config["context.window"], config["opencode.max_output_tokens"], config["opencode.reserved"],
                  config["opencode.input_limit"])


def step_rules(replayer: AgentReplayer) -> StepRules:
    """The version's rules on every request, and what opencode's count adds to the previous
    request's billed prompt: that response's output (recorded, else its rough count) and the
    cache reads past the prompt (`token_count`)."""
    rules = rules_for(replayer.config["opencode.version"])
    limit = threshold(replayer.config)
    t, requests = replayer.t, replayer.requests
    added, extra = [0] * len(requests), [0] * len(requests)
    prev_end = -1
    for k, req in enumerate(requests):
        end = t.index[req.after_message_id]
        if k > 0:
            prev = requests[k - 1]
            output = prev.output_tokens if prev.output_tokens is not None else (
                t.approx_out[end + 1] - t.approx_out[prev_end + 1] if end > prev_end else 0)
            prompt = prev.prompt_tokens or 0
            extra[k] = token_count(prompt, output, prev.cache_read_tokens, prev.cache_write_tokens) - prompt - output
            added[k] = output + extra[k]
        prev_end = end
    n = len(requests)
    return StepRules(names=(rules.name,) * n, thresholds=(limit,) * n, added=tuple(added),
                     keeps_tail=(False,) * n, reattached=(None,) * n,
                     trigger_extra=tuple(extra) if any(extra) else None, extra_note=CACHE_READ_NOTE)


def prune_enabled(config: Settings) -> bool:
    return prunes(config["opencode.version"], config["opencode.prune"])


RULES = AgentRules(NAME, threshold, reads="previous", keep="recent_turns", prune="opencode",
                   summary_first=True, placeholder=PLACEHOLDER, per_request=step_rules, prune_enabled=prune_enabled)


def replayer(thread, config: Settings, ctx) -> AgentReplayer:
    return AgentReplayer(thread, config, ctx, RULES)


def _thread_values(thread) -> dict[str, Any]:
    """The opencode version an opencode session recorded (`meta["version"]`), whose rules apply."""
    meta = getattr(thread, "meta", None) or {}
    version = meta.get("version")
    if getattr(thread, "source", None) == "opencode" and isinstance(version, str) and version.strip():
        return {"opencode.version": version.strip()}
    return {}


PROFILE = Profile(
    name=NAME,
    reproduces="opencode's prune and compaction",
    summary="compaction when the last response's count (cache reads included) reaches `input_limit - reserved` "
            "or `window - max_output`, keeping the newest of the last 2 turns within `preserve_recent_tokens`; "
            "prune of old tool outputs past `PRUNE_PROTECT` (off by default from 1.14)",
    sources=("anomalyco/opencode `packages/opencode/src/session/overflow.ts` (08f74b9)", "`session/compaction.ts`"),
    reads=("context.window", "opencode.version", "opencode.prune", "opencode.prune_protect", "opencode.prune_minimum",
           "opencode.max_output_tokens", "opencode.input_limit", "opencode.reserved", "opencode.tail_turns",
           "opencode.preserve_recent_tokens", "context.tokenizer", "context.trigger_tokens", "summarization.summarizer",
           "summarization.model", "summarization.timeout"),
    defaults={"context.token_budget_ratio": 1.0},
    keys=(
        KeySpec("opencode.version", str, "", "the opencode version whose rules apply (set from an opencode session's own; \"\": the newest)"),
        KeySpec("opencode.prune", str, "auto", "`compaction.prune`: auto (the version's default: on up to 1.13, off from 1.14), on, off",
                choices=("auto", "on", "off")),
        KeySpec("opencode.prune_protect", int, 40_000, "`PRUNE_PROTECT`: recent tool-output tokens never erased",
                non_negative),
        KeySpec("opencode.prune_minimum", int, 20_000, "`PRUNE_MINIMUM`: erase only when that frees more than this",
                non_negative),
        KeySpec("opencode.max_output_tokens", int, OUTPUT_TOKEN_MAX, "the model's output limit held to `OUTPUT_TOKEN_MAX` (32,000)",
                non_negative),
        KeySpec("opencode.input_limit", int, 0, "the model's `limit.input` (0: none; the usable window is then `window - max_output_tokens`)",
                non_negative, unset=0),
        KeySpec("opencode.reserved", int, 0, "`compaction.reserved`, taken from an input limit (0: min(20000, max_output_tokens))", non_negative, unset=0),
        KeySpec("opencode.tail_turns", int, DEFAULT_TAIL_TURNS, "`compaction.tail_turns`: the recent user turns a compaction may keep (0: none)",
                non_negative),
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
        ReasonDoc(Reason.PRUNED_BY_AGENT, "pruned",
                  "recorded: a tool output opencode itself had erased before this request (`state.time.compacted`, "
                  "`meta[\"pruned_at\"]`), replayed so with compactions `recorded`"),
    ),
    message_overhead=OVERHEAD,
    replayer=replayer,
    agent=True,
    thread_values=_thread_values,
    summarization=SummarizationCall(
        "history", cached=False, model="thread",
        source="sst/opencode `session/compaction.ts` (`process`: the compaction agent, with no system prompt "
               "and no tools, sends the history again; it shares no prefix with the chat's cached prompt, "
               "anomalyco/opencode#25120)"),
)
