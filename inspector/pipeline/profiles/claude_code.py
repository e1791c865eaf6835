"""The `claude-code` profile: Claude Code's auto-compaction, by the CLI version that wrote each request.

The rules come from Claude Code's own code, version by version (`claude_code_versions`); the
thread records the version of every request (`meta["version"]`, `meta["versions"]` where a
session was resumed by another CLI), and each request is replayed under its own version's rules
(`rules` in the simulate JSON, on the status line).

- Trigger: before each call Claude Code reads the last call's usage (its billed prompt plus its
  output tokens) and, from 2.1.2, a rough count (characters / 4) of the text and tool results
  appended since; it compacts when that reaches `window - output_reserve - 13,000` (155,000 on a
  200k window up to 2.1.20, 167,000 from 2.1.21; `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` lowers it,
  `CLAUDE_CODE_AUTO_COMPACT_WINDOW` lowers the window from 2.1.75). A compaction's `preTokens`
  is that reading. The replay reads the calibrated prompt of its own previous request plus those
  terms: the output as the CLI held it (the recorded count where it kept the first chunk's, else
  the response's size under the calibrated growth) and the rough count of what followed.
- Compaction replaces the whole history by the summary, plus what the CLI re-attaches
  (`claude_code_reattach`: recent files, todo list, plan, skills), which the calibrated level
  after a compaction models; from 2.1.146, in a thread whose compactions kept a tail verbatim
  (recorded `preservedMessages`), the last model call and its tool results stay.
- A manual `/compact` is the user's: replayed where it happened (`agents.AgentReplayer`).
- Microcompaction of old tool results is not replayed: it shows only in the recorded counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from inspector.model import Role
from inspector.pipeline.audit import Reason
from inspector.pipeline.profiles.agents import OVERHEAD, AgentReplayer, AgentRules, StepRules
from inspector.pipeline.profiles.base import KeySpec, Profile, ReasonDoc, SummarizationCall, non_negative
from inspector.pipeline.profiles.claude_code_reattach import Reattached, rough
from inspector.pipeline.profiles.claude_code_versions import (
    BUFFER,
    IMAGE_TOKENS,
    VersionRules,
    chars_per_token,
    model_max_output,
    rules_for,
)
from inspector.pipeline.profiles.common import REASONS as SHARED
from inspector.pipeline.profiles.versions import parse_version
from inspector.pipeline.thread_memo import remembered

if TYPE_CHECKING:
    from inspector.pipeline.profiles.base import Settings

NAME = "claude-code"
LONG_WINDOW = 1_000_000  # a recorded prompt over 200k tokens: the thread ran on a 1M-token window
AUTO_COMPACT_WINDOW_RANGE = (100_000, 1_000_000)  # the CLI holds CLAUDE_CODE_AUTO_COMPACT_WINDOW within it


def threshold(config: Settings, rules: VersionRules | None = None, model: str | None = None) -> int | None:
    """The compaction threshold in tokens under `config`, for a request of `rules` (None: the
    config's own reserve, no version)."""
    window = config["context.window"]
    auto_window = config["claude_code.auto_compact_window"]
    if auto_window and (rules is None or rules.auto_compact_window):
        lo, hi = AUTO_COMPACT_WINDOW_RANGE
        window = min(window, max(lo, min(hi, auto_window)))
    reserve = config["claude_code.output_reserve"]
    if rules is not None:
        reserve = min(reserve, model_max_output(model))
    effective = window - reserve
    auto = effective - config["claude_code.autocompact_buffer"]
    pct = config["claude_code.autocompact_pct_override"]
    if pct > 0:
        auto = min(effective * pct // 100, auto)
    return max(0, auto)


def thread_versions(thread) -> list[tuple[str | None, str | None]]:
    """(first request id, CLI version) of each version the thread's requests were written by."""
    meta = getattr(thread, "meta", None) or {}
    changes = meta.get("versions")
    if isinstance(changes, list) and changes:
        return [(str(c[0]), str(c[1])) for c in changes if isinstance(c, list | tuple) and len(c) == 2]
    version = meta.get("version")
    return [(None, version if isinstance(version, str) else None)]


def _request_rules(replayer: AgentReplayer) -> list[VersionRules]:
    changes = thread_versions(replayer.thread)
    starts = {rid: rules_for(version) for rid, version in changes if rid is not None}
    current = rules_for(changes[0][1])
    out = []
    for req in replayer.requests:
        current = starts.get(req.id, current)
        out.append(current)
    return out


def _raw_terms(replayer: AgentReplayer) -> tuple:
    """Per request, from the thread alone: its rules, the previous call's recorded output, the
    response's counted tokens and rough size, the rough count of what followed it, the response's
    later blocks (2.1.176+), and what a compaction before it re-attaches."""
    t, requests = replayer.t, replayer.requests
    rules = _request_rules(replayer)
    ends = [t.index[r.after_message_id] for r in requests]
    out_recorded, response_cost, response_rough, appended, tail = [], [], [], [], []
    for k, req in enumerate(requests):
        if k == 0:
            for column in (out_recorded, response_cost, response_rough, appended, tail):
                column.append(0)
            continue
        lo, hi = ends[k - 1] + 1, ends[k]
        cpt = chars_per_token(rules[k], req.model)
        cost = rough_size = added = later = 0
        for i in range(lo, hi + 1):
            m = t.msgs[i]
            if m.role is Role.ASSISTANT:
                thinking = m.meta.get("thinking") if isinstance(m.meta, Mapping) else None
                thought = sum(rough(x) for x in thinking if isinstance(x, str)) if isinstance(thinking, list) else 0
                cost += t.costs[i] + thought
                rough_size += t.approx[i] + thought
                calls = "".join(c.name + c.arguments_json() for c in m.tool_calls)
                later += int(len(calls) / cpt + 0.5) + (int(len(m.content) / cpt + 0.5) if thought else 0)
            else:
                added += int(len(m.content.encode("utf-16-le")) / (2 * cpt) + 0.5)
                images = m.meta.get("attachments") if isinstance(m.meta, Mapping) else None
                if isinstance(images, list):
                    added += IMAGE_TOKENS * sum(1 for a in images if isinstance(a, Mapping) and a.get("type") == "image")
        out_recorded.append(requests[k - 1].output_tokens)
        response_cost.append(cost)
        response_rough.append(rough_size)
        appended.append(added)
        tail.append(later)
    reattached = Reattached(t.msgs, ends, skills_capped=any(r.skills_capped for r in rules))
    return rules, out_recorded, response_cost, response_rough, appended, tail, reattached


def step_rules(replayer: AgentReplayer) -> StepRules:
    """The rules of each request: its threshold, what its trigger adds to the previous billed
    prompt, what a compaction before it re-attaches, and whether it keeps a tail."""
    rules, out_recorded, response_cost, response_rough, appended, tail, reattached = remembered(
        replayer.ctx.counter, "claude_code_terms", replayer.thread, lambda: _raw_terms(replayer))
    cfg, fit = replayer.config, replayer.calibration.fit
    step = fit.step_ratio if fit.source == "fitted" and fit.step_ratio is not None else None
    by_version = cfg["claude_code.output_reserve"] == _implied_reserve(replayer.thread)
    thresholds, added = [], []
    preserving = any(isinstance(s.meta, Mapping) and s.meta.get("preserved") for s in replayer.thread.summaries)
    known: dict[tuple, int | None] = {}  # (rules, model) -> threshold: a few per thread, computed once
    for k, (req, r) in enumerate(zip(replayer.requests, rules, strict=True)):
        key = (r.name, req.model)
        if key not in known:
            config = cfg.updated({"claude_code.output_reserve": r.output_reserve}) if by_version else cfg
            known[key] = threshold(config, r, req.model)
        thresholds.append(known[key])
        if k == 0:
            added.append(0)
            continue
        # the response as the CLI held it: its final output or the first chunk's count. A transcript line
        # carries one of the two (the first chunk's: a few tokens; the final one where the line was
        # written after the call ended); where the recorded count is under half the response's size
        # under the fitted growth, it is the first chunk's and the size is the estimate of the final one
        estimate = round(step * response_cost[k] + fit.per_block) if step is not None else response_rough[k]
        recorded = out_recorded[k]
        if rules[k - 1].final_output:
            output = recorded if recorded is not None and 2 * recorded >= estimate else estimate
        else:
            output = recorded if recorded is not None else estimate
        added.append(output + (appended[k] if r.counts_appended else 0) + (tail[k] if r.counts_response_tail else 0))
    ratio = _rough_to_reference(replayer)
    attached = [(round(a.tokens * ratio), a.blocks, round(a.uncertain * ratio))
                for a in (reattached.at(k) for k in range(len(rules)))]
    position = {r.id: k for k, r in enumerate(replayer.requests)}
    for summary in replayer.thread.summaries:  # CLI 2.1.105+: its own count of the summary and all it re-attached
        post = summary.meta.get("postTokens") if isinstance(summary.meta, Mapping) else None
        k = position.get(summary.before_request_id or "")
        if isinstance(post, int) and not isinstance(post, bool) and post > 0 and k is not None:
            attached[k] = (round(max(0, post - rough(summary.summary)) * ratio), attached[k][1], 0)
    return StepRules(
        names=tuple(r.name for r in rules),
        thresholds=tuple(thresholds),
        added=tuple(added),
        keeps_tail=tuple(preserving and r.may_preserve_tail for r in rules),
        reattached=tuple(attached),
        initial=(round(reattached.initial.tokens * ratio), reattached.initial.blocks),
    )


def _rough_to_reference(replayer: AgentReplayer) -> float:
    """Reference (configured-tokenizer) tokens per rough token, over the thread's messages."""
    approx = replayer.t.approx_full[-1]
    return sum(replayer.t.costs) / approx if approx else 1.0


def _implied_reserve(thread) -> int:
    return rules_for(thread_versions(thread)[0][1]).output_reserve


RULES_SPEC = AgentRules(NAME, threshold, reads="prompt", keep="none", prune="none", summary_first=True,
                        per_request=step_rules)


def replayer(thread, config: Settings, ctx) -> AgentReplayer:
    return AgentReplayer(thread, config, ctx, RULES_SPEC)


def output_reserve_for_version(version: str | None) -> int | None:
    """The summary-output reserve of a Claude Code CLI version (32,000 up to 2.1.20, 20,000 from
    2.1.21); None for an unknown version."""
    return None if parse_version(version) is None else rules_for(version).output_reserve


def _thread_values(thread) -> dict[str, Any]:
    """The output reserve of the thread's first CLI version, and the 1M window where a recorded
    prompt was over 200k tokens (the only way a call can bill more)."""
    values: dict[str, Any] = {}
    reserve = output_reserve_for_version(thread_versions(thread)[0][1])
    if reserve is not None:
        values["claude_code.output_reserve"] = reserve
    if not getattr(thread, "window", None) and any(
            (r.prompt_tokens or 0) > 200_000 for r in getattr(thread, "requests", ())):
        values["context.window"] = LONG_WINDOW
    return values


def _percent(v: int) -> str | None:
    return None if 0 <= v <= 100 else "must be in 0..100 (0: unset)"




PROFILE = Profile(
    name=NAME,
    reproduces="Claude Code's auto-compaction, by CLI version",
    summary="the last call's usage plus a rough count of what followed reaches `window - output_reserve - 13000`; "
            "the summary replaces the whole history",
    sources=("Claude Code's own code, by version (`@anthropic-ai/claude-code` on npm)",
             "the real transcripts' `compact_boundary` records"),
    reads=("context.window", "claude_code.autocompact_pct_override", "claude_code.output_reserve",
           "claude_code.autocompact_buffer", "claude_code.auto_compact_window", "context.tokenizer",
           "context.trigger_tokens", "summarization.summarizer", "summarization.model", "summarization.timeout"),
    # Claude's tokenizer is not public; o200k_base (tiktoken, offline) counts what Claude bills more
    # steadily than chars4: the calibrated model fitted on a session's first half is within 3% of
    # the billed count on 100% of the CLI 1.0 session's later half under it, 41% under chars4
    # (`python -m bench.bench_calibration`).
    defaults={"context.token_budget_ratio": 1.0, "context.tokenizer": "o200k_base"},
    keys=(
        KeySpec("claude_code.autocompact_pct_override", int, 0, "`CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`: compact at this percentage of `window - output_reserve` (0: unset; it only lowers the threshold)", _percent,
                unset=0, unset_behaves_as=100),
        KeySpec("claude_code.output_reserve", int, 20_000, "tokens Claude Code keeps for the summary's output: `32000` up to CLI 2.1.20 (set from the thread's version; left at it, each request takes its own version's)",
                non_negative),
        KeySpec("claude_code.autocompact_buffer", int, BUFFER, "the auto-compact buffer below `window - output_reserve`", non_negative),
        KeySpec("claude_code.auto_compact_window", int, 0, "`CLAUDE_CODE_AUTO_COMPACT_WINDOW`: the window the threshold is taken from, for requests of CLI 2.1.75+ (0: unset; the CLI holds it to 100,000-1,000,000)", non_negative,
                unset=0),
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
    thread_values=_thread_values,
    summarization=SummarizationCall(
        "history", cached=True, model="thread",
        source="Claude Code's compaction forks the conversation with its cache-safe parameters (system prompt, "
               "tools, model, messages) so the summarization call reads the conversation's cached prompt and "
               "writes none (`compact.ts`, as described in public write-ups of its prompt caching)"),
)
