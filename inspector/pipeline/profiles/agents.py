"""The replayer shared by the real agents' profiles (claude-code, codex, opencode,
anthropic-context-editing).

Those agents send the whole history since their last compaction (no token budget, no
newest-first loading); what differs is when they compact, what survives a compaction, and
which old tool outputs they clear. Each profile module supplies an `AgentRules` with those
three rules; this module replays them in time linear in the thread (prefix sums over the
message costs, one request's blocks built on demand by `audit(k)`).

The compaction trigger is counterfactual (DESIGN.md "Trigger tokens"): it reads the
calibrated prompt of this replay's own previous request (`inspector.pipeline.calibration`)
plus what was appended since by the agent's own rough count, bytes / 4 (the whole new span
where the agent counts the prompt it is about to send, as Claude Code's `preTokens` shows; the
assistant's output only where it counts the last response's usage, as Codex and opencode do). Where the replay's history is the recorded one that reading is the
recorded count, so a no-op edit moves nothing.

Longer than ~400 lines because the timeline pass, the per-request block builder and the
three rule kinds must agree on one state; splitting them would spread that contract.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import compress, repeat
from typing import TYPE_CHECKING, NamedTuple

from msgspec.structs import replace  # the audits are msgspec Structs

from inspector.model import Kind, Role, Summary, Thread, assign_turns, effective_requests, is_manual_summary
from inspector.pipeline.audit import (
    BlockAudit,
    BlockStatus,
    BudgetAudit,
    CompactionAudit,
    Reason,
    RequestAudit,
    RequestError,
)
from inspector.pipeline.calibration import Calibration, ReplayCalibration
from inspector.pipeline.profiles.base import ReplayerBase
from inspector.pipeline.thread_memo import label_columns, remembered
from inspector.tokens import TokenCounter, message_costs, text_cost, tools_cost

if TYPE_CHECKING:
    from inspector.pipeline.profiles.base import Settings

SUMMARIZED_RUNS = 4096  # runs of summarized blocks remembered per thread (`_summarized_run`)
OVERHEAD = 0  # tokens the agents' profiles add per message: their framing is in the calibrated ratio

SINCE_COMPACTION = Reason.SINCE_COMPACTION
KEPT_AFTER_COMPACTION = Reason.KEPT_AFTER_COMPACTION
TOOL_OUTPUT_PRUNED = Reason.TOOL_OUTPUT_PRUNED
PRUNED_BY_AGENT = Reason.PRUNED_BY_AGENT
TOOL_RESULT_CLEARED = Reason.TOOL_RESULT_CLEARED


def approx_tokens(text: str) -> int:
    """The agents' own rough estimate: UTF-8 bytes / 4, rounded up (Codex `approx_token_count`,
    opencode `Token.estimate` on characters; the difference is immaterial at these sizes)."""
    return (len(text.encode("utf-8", "surrogatepass")) + 3) // 4


def compress_split_point(roles: list[str], calls: list[bool], sizes: list[int], fraction: float) -> int:
    """gemini-cli `findCompressSplitPoint(contents, fraction)`: the index of the oldest item to keep
    (len: compress everything). The first user item (a tool result is no user item here) whose
    preceding items hold at least `fraction` of the sizes; past none, everything where the last item
    is a model response without tool calls, else the last user item (0: compress nothing)."""
    if not 0 < fraction < 1:
        raise ValueError("fraction must be between 0 and 1")
    target = sum(sizes) * fraction
    split = seen = 0
    for i, (role, size) in enumerate(zip(roles, sizes, strict=True)):
        if role == "user":
            if seen >= target:
                return i
            split = i
        seen += size
    if roles and roles[-1] == "assistant" and not calls[-1]:
        return len(roles)
    return split


class StepRules(NamedTuple):
    """An agent's rules request by request, where they depend on the agent version that wrote each
    (Claude Code): per request, the rules' name (the simulate JSON's `rules`), the compaction
    threshold, what the trigger adds to the previous request's billed prompt, whether a compaction
    before it keeps the last model call verbatim, and what such a compaction re-attaches
    ((reference tokens, message blocks, of the tokens those known only within a range), None where
    not modelled); `initial`: what the first
    requests had attached that no compaction re-attaches."""

    names: tuple[str, ...]
    thresholds: tuple[int | None, ...]
    added: tuple[int, ...]
    keeps_tail: tuple[bool, ...]
    reattached: tuple[tuple[int, int, int] | None, ...]
    initial: tuple[int, int] | None = None
    trigger_extra: tuple[int, ...] | None = None
    """Of `added`, what the agent's count adds that is no part of the prompt (opencode's cache reads
    past the prompt, anomalyco/opencode#30649): a compaction it alone triggers says so."""
    extra_note: str = ""


@dataclass(frozen=True)
class AgentRules:
    """What one agent does. `threshold(config)` is the compaction trigger in tokens (None:
    never); `reads` is "prompt" (the agent counts the prompt it is about to send: the last
    billed prompt plus everything appended since) or "previous" (the last response's usage:
    the last billed prompt plus that response's output). `per_request(replayer)` (optional)
    gives `StepRules`, which then decide the threshold and the trigger's reading per request."""

    profile: str
    threshold: Callable[[Settings], int | None]
    reads: str = "prompt"
    keep: str = "none"            # after a compaction: "none" | "user_messages" (codex) | "recent_turns" (opencode)
    #                               | "fraction" (gemini-cli: the newest `keep_fraction` of the history's characters)
    keep_fraction: float = 0.0
    prune: str = "none"           # "none" | "opencode" | "clear_tool_uses"
    summary_first: bool = True    # prompt order: the summary before what a compaction kept
    placeholder: str = ""         # what a pruned or cleared tool output is replaced by
    per_request: Callable[[AgentReplayer], StepRules] | None = None
    prune_enabled: Callable[[Settings], bool] | None = None  # None: the prune rule always runs
    keeps_thinking: bool = False  # thinking of the last `context_editing.thinking_turns` assistant turns is sent


class _Kept(NamedTuple):
    """What a Codex compaction kept: user_indices[start:hi] whole, one truncated, the session prefix."""

    start: int
    hi: int
    truncated: tuple[int, int] | None   # (message index, tokens sent)
    prefix: tuple[int, ...]
    tokens: int

    @property
    def count(self) -> int:
        return self.hi - self.start + len(self.prefix) + (self.truncated is not None)


class _State(NamedTuple):
    end: int
    cur: int | None
    covered_upto: int        # last summarized message index (-1: none)
    chain_len: int
    kept: _Kept | None             # what the last compaction kept verbatim (codex)
    cleared_upto: int        # tool outputs in (covered_upto, cleared_upto) are pruned/cleared
    clear_args: bool         # context editing with clear_tool_inputs
    failed: bool
    system_tokens: int
    summary_tokens: int
    kept_tokens: int
    history_tokens: int
    agent_pruned: frozenset[int] = frozenset()  # recorded: tool outputs the agent had erased by then


class _Tables(NamedTuple):
    msgs: list
    index: dict[str, int]
    turn_of: list[int | None]
    costs: list[int]
    full: list[int]         # prefix sums of costs over turn messages
    pre: list[int]          # prefix sums of pre-turn (system) message costs
    npre: list[int]         # prefix counts of pre-turn messages
    turn_start: list[int]
    labels: list[tuple[str, str, str]]
    tool_name: list[str | None]
    approx: list[int]       # the agents' rough estimate per message
    approx_full: list[int]  # prefix sums of approx over every message
    approx_out: list[int]   # prefix sums of approx over the assistant messages (a response's output)


def _tables(counter: TokenCounter, thread: Thread, profile: str) -> _Tables:
    memo = counter.__dict__.setdefault("_agent_tables", {})
    key = (id(thread.messages), profile)
    hit = memo.get(key)
    if hit is not None and hit[0] is thread.messages:
        return hit[1]
    msgs = list(thread.messages)
    index = {m.id: i for i, m in enumerate(msgs)}
    turn_of = assign_turns(msgs)
    costs = message_costs(counter, thread.messages, OVERHEAD)
    n = len(msgs)
    full, pre, npre = [0] * (n + 1), [0] * (n + 1), [0] * (n + 1)
    for i in range(n):
        in_turn = turn_of[i] is not None
        full[i + 1] = full[i] + (costs[i] if in_turn else 0)
        pre[i + 1] = pre[i] + (0 if in_turn else costs[i])
        npre[i + 1] = npre[i] + (0 if in_turn else 1)
    turn_start = [n]
    for i, t in enumerate(turn_of):
        if t is not None and t == len(turn_start):
            turn_start.append(i)
    call_names: dict[str, str] = {}
    for m in msgs:
        for call in m.tool_calls:
            call_names.setdefault(call.id, call.name)
    tool_name = [call_names.get(m.tool_call_id or "") if m.role is Role.TOOL else None for m in msgs]
    labels = [(m.id, str(m.role), str(m.kind)) for m in msgs]
    approx = [approx_tokens(m.text_for_count()) for m in msgs]
    approx_full, approx_out = [0] * (n + 1), [0] * (n + 1)
    for i in range(n):
        approx_full[i + 1] = approx_full[i] + approx[i]
        approx_out[i + 1] = approx_out[i] + (approx[i] if msgs[i].role is Role.ASSISTANT else 0)
    tables = _Tables(msgs, index, turn_of, costs, full, pre, npre, turn_start, labels, tool_name, approx, approx_full,
                     approx_out)
    if len(memo) >= 8:
        memo.clear()
    memo[key] = (thread.messages, tables)
    return tables


def _seconds(stamp: object) -> float | None:
    """An ISO 8601 time (`...Z` or with an offset) as seconds since the epoch; None where it is none."""
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()




def is_session_prefix(message) -> bool:
    """Codex's `collect_user_messages` leaves out the session-prefix user messages (AGENTS.md
    instructions, environment context) and earlier summaries."""
    text = message.content.lstrip()
    return (text.startswith("# AGENTS.md instructions") or text.startswith("<environment_context")
            or text.startswith("<user_instructions") or text.startswith("<INSTRUCTIONS>")
            or bool(message.meta.get("isMeta")) or bool(message.meta.get("isCompactSummary")))


class AgentReplayer(ReplayerBase):
    """One replay of an agent profile: `timeline()` at once, `audit(k)` on demand."""

    fills_calibration = True  # its budgets carry calibrated_prompt_tokens (its trigger reads them)

    def __init__(self, thread: Thread, config: Settings, ctx, rules: AgentRules) -> None:
        self.thread, self.config, self.ctx, self.rules = thread, config, ctx, rules
        counter: TokenCounter = ctx.counter
        self.t = _tables(counter, thread, rules.profile)
        self.base_system = text_cost(counter, thread.system_prompt, OVERHEAD)
        self.tool_tokens = tools_cost(counter, thread.tools)
        self.placeholder_cost = counter.count(rules.placeholder) if rules.placeholder else 0
        index = self.t.index
        known = [r for r in thread.requests if r.after_message_id in index] if thread.requests else None
        self.requests = (tuple(sorted(known, key=lambda r: index[r.after_message_id])) if known is not None
                         else effective_requests(thread))
        calibration = getattr(ctx, "calibration", None)
        if calibration is None or len(calibration) != len(self.requests):
            calibration = Calibration.identity(len(self.requests))
        self.calibration: Calibration = calibration
        self.steps: StepRules | None = rules.per_request(self) if rules.per_request is not None else None
        self.prunes = rules.prune_enabled(config) if rules.prune_enabled is not None else True
        # the thread's alone (its messages' `pruned_at`): remembered with its tables, not rescanned per edit
        self.recorded_prunes = remembered(counter, "agent_recorded_prunes", self.t, self._recorded_prunes)
        self.thinking_at, self.thinking_sum = (
            remembered(counter, "agent_thinking", self.t, self._thinking_tables) if rules.keeps_thinking else ([], [0]))
        self.chain: list[Summary] = []
        self.summary_cost: dict[str, int] = {}
        self.states: list[_State] = []
        self._timeline: list[RequestAudit] | None = None
        n = len(self.t.msgs)
        self._prunable_prefix(n)
        (self.session_prefix, self.session_prefix_sorted, self.user_indices, self.user_approx,
         self.user_cost) = (remembered(counter, "agent_user_messages", self.t, self._user_messages)
                            if rules.keep == "user_messages" else (frozenset(), (), [], [0], [0]))

    def _user_messages(self) -> tuple:
        """What Codex keeps from (the session prefix and the user messages, with prefix sums over
        the latter's rough and counted tokens): the thread's alone, remembered with its tables."""
        t = self.t
        session_prefix = frozenset(i for i, m in enumerate(t.msgs) if m.role is Role.USER and is_session_prefix(m))
        user_indices = [i for i, m in enumerate(t.msgs) if m.role is Role.USER
                        and m.kind is Kind.MESSAGE and i not in session_prefix]
        user_approx, user_cost = [0], [0]  # prefix sums over user_indices
        for i in user_indices:
            user_approx.append(user_approx[-1] + t.approx[i])
            user_cost.append(user_cost[-1] + t.costs[i])
        return session_prefix, tuple(sorted(session_prefix)), user_indices, user_approx, user_cost

    def _thinking_tables(self) -> tuple[list[int], list[int]]:
        """The assistant messages that carry thinking (`meta["thinking"]`, never counted as their text)
        and prefix sums of its tokens."""
        at, sums = [], [0]
        texts = {i: "\n".join(str(x) for x in m.meta["thinking"]) for i, m in enumerate(self.t.msgs)
                 if m.role is Role.ASSISTANT and isinstance(m.meta.get("thinking"), list) and m.meta["thinking"]}
        for i, n in zip(texts, self.ctx.counter.count_all(texts.values()), strict=True):
            at.append(i)
            sums.append(sums[-1] + n)
        return at, sums

    def _thinking(self, lo: int, end: int) -> int:
        """Thinking tokens sent with a request over [lo, end]: the last `context_editing.thinking_turns`
        assistant turns' (0: all; `clear_thinking_20251015` `keep`, the API's default without it 1)."""
        a_lo, a_hi = bisect_left(self.thinking_at, lo), bisect_right(self.thinking_at, end)
        turns = self.config["context_editing.thinking_turns"]
        start = a_lo if turns <= 0 else max(a_lo, a_hi - turns)
        return self.thinking_sum[a_hi] - self.thinking_sum[start] if a_hi > start else 0

    # -- tool-output tables ----------------------------------------------------------------
    def _prunable_prefix(self, n: int) -> None:
        """Prefix sums over the tool outputs a rule may clear: count, full cost, rough estimate,
        and (context editing) the tool-call arguments of the assistant messages. They depend on
        the thread and the protected tools only: remembered with the thread's tables."""
        cfg, t = self.config, self.t
        protected: frozenset[str] = frozenset()
        if self.rules.prune == "opencode":
            protected = frozenset({"skill"})
        elif self.rules.prune == "clear_tool_uses":
            protected = frozenset(s.strip() for s in str(cfg.values.get("context_editing.exclude_tools", "")).split(",")
                                  if s.strip())
        memo = self.ctx.counter.__dict__.setdefault("_agent_prunable", {})
        key = (id(t), self.rules.prune, protected, self.placeholder_cost)
        hit = memo.get(key)
        if hit is not None and hit[0] is t:
            self.prunable, self.ntool, self.tool_saving, self.tool_approx, self.arg_cost = hit[1]
            return
        self._build_prunable(n, protected)
        if len(memo) >= 8:
            memo.clear()
        memo[key] = (t, (self.prunable, self.ntool, self.tool_saving, self.tool_approx, self.arg_cost))

    def _build_prunable(self, n: int, protected: frozenset[str]) -> None:
        t = self.t
        ntool, cost, approx, args = [0] * (n + 1), [0] * (n + 1), [0] * (n + 1), [0] * (n + 1)
        counter = self.ctx.counter
        arg_cost = {}
        if self.rules.prune == "clear_tool_uses":
            texts = {i: "\n".join(c.arguments_json() for c in m.tool_calls) for i, m in enumerate(t.msgs)
                     if m.role is Role.ASSISTANT and m.tool_calls}
            counts = counter.count_all(texts.values())
            arg_cost = dict(zip(texts, counts, strict=True))
        self.prunable = [False] * n
        for i in range(n):
            ok = (t.msgs[i].role is Role.TOOL and t.turn_of[i] is not None
                  and (t.tool_name[i] or "") not in protected)
            self.prunable[i] = ok
            ntool[i + 1] = ntool[i] + ok
            cost[i + 1] = cost[i] + (t.costs[i] - self.placeholder_cost if ok else 0)
            approx[i + 1] = approx[i] + (t.approx[i] if ok else 0)
            args[i + 1] = args[i] + arg_cost.get(i, 0)
        self.ntool, self.tool_saving, self.tool_approx, self.arg_cost = ntool, cost, approx, args

    def _recorded_prunes(self) -> list[tuple[float, int]]:
        """(when, message index) of the tool outputs the agent erased itself, oldest first: opencode's
        `state.time.compacted` (`meta["pruned_at"]`), a time the requests' `created_at` can be held to."""
        out = []
        for i, m in enumerate(self.t.msgs):
            when = _seconds(m.meta.get("pruned_at")) if m.role is Role.TOOL and self.t.turn_of[i] is not None else None
            if when is not None:
                out.append((when, i))
        return sorted(out)

    def _agent_pruned(self, req, lo: int, end: int, cleared_upto: int) -> frozenset[int]:
        """Recorded mode: the tool outputs in [lo, end] the agent had erased before `req` was sent (a
        request of unknown time: none), less those the profile's own rule already prunes."""
        sent = _seconds(req.created_at) if self.recorded_prunes else None
        if sent is None:
            return frozenset()
        done = bisect_right(self.recorded_prunes, (sent, len(self.t.msgs)))  # those erased by then (oldest first)
        return frozenset(i for _, i in self.recorded_prunes[:done]
                         if lo <= i <= end and not (i < cleared_upto and self.prunable[i]))

    def _cleared(self, lo: int, hi: int) -> int:
        """Tokens saved by clearing the prunable tool outputs in [lo, hi)."""
        return self.tool_saving[hi] - self.tool_saving[lo] if hi > lo else 0

    # -- rules -------------------------------------------------------------------------------
    def _opencode_prune(self, lo: int, cur: int | None, pruned_upto: int) -> int:
        """opencode `prune`: the last 2 user turns are skipped; going back from there, tool
        outputs are protected until PRUNE_PROTECT tokens of them; the older ones are erased if
        that frees more than PRUNE_MINIMUM. Returns the new boundary (outputs before it erased)."""
        if cur is None or cur - 1 < 1 or not self.prunes:
            return pruned_upto
        protect_from = self.t.turn_start[cur - 1]
        lo = max(lo, pruned_upto)
        if protect_from <= lo:
            return pruned_upto
        s = self.tool_approx
        target = s[protect_from] - self.config["opencode.prune_protect"]
        x = bisect_left(s, target, lo, protect_from + 1) - 1  # last index whose output crosses PRUNE_PROTECT
        if x < lo:
            return pruned_upto
        if s[x + 1] - s[lo] > self.config["opencode.prune_minimum"]:
            return x + 1
        return pruned_upto

    def _clear_boundary(self, lo: int, end: int) -> int:
        """clear_tool_uses: every tool result but the last `keep` (not excluded) is cleared."""
        keep = self.config["context_editing.keep"]
        total = self.ntool[end + 1] - self.ntool[lo]
        if total <= keep:
            return lo
        # the index after the (total - keep)-th prunable tool output at or after lo
        want = self.ntool[lo] + total - keep
        return bisect_left(self.ntool, want, lo, end + 2)

    def _kept(self, lo: int, end: int) -> _Kept | None:
        """What a compaction keeps verbatim of the span it summarizes: Codex's newest user messages
        up to `codex.compact_user_tokens` by its rough count, the one that overflows truncated to
        what is left (`truncate_text`), found by bisection over the users' prefix sums."""
        if self.rules.keep != "user_messages":
            return None
        t, users, rough, cost = self.t, self.user_indices, self.user_approx, self.user_cost
        budget = self.config["codex.compact_user_tokens"]
        hi = bisect_right(users, end)
        lo_pos = bisect_left(users, lo)
        start = bisect_left(rough, rough[hi] - budget, lo_pos, hi + 1) if hi > lo_pos else hi
        trunc: tuple[int, int] | None = None
        remaining = budget - (rough[hi] - rough[start])
        if start > lo_pos and remaining > 0:
            i = users[start - 1]
            trunc = (i, max(1, t.costs[i] * remaining // max(1, t.approx[i])))
        # the session prefix (AGENTS.md, environment context) is the initial context Codex rebuilds
        prefix = tuple(i for i in self.session_prefix_sorted if lo <= i <= end)
        tokens = cost[hi] - cost[start] + (trunc[1] if trunc else 0) + sum(t.costs[i] for i in prefix)
        if start == hi and trunc is None and not prefix:
            return None
        return _Kept(start, hi, trunc, prefix, tokens)

    def _kept_map(self, kept: _Kept | None) -> dict[int, int]:
        """index -> tokens sent, for one request's blocks."""
        if kept is None:
            return {}
        costs = self.t.costs
        out = {i: costs[i] for i in kept.prefix}
        for i in self.user_indices[kept.start:kept.hi]:
            out[i] = costs[i]
        if kept.truncated is not None:
            out[kept.truncated[0]] = kept.truncated[1]
        return out

    def _recent_tail(self, lo: int, end: int) -> int:
        """opencode `select`: of the last `opencode.tail_turns` turns, the newest kept whole while they
        fit the preserve budget, then the newest suffix of the next one that fits. Returns the first
        kept index (end + 1: none)."""
        t = self.t
        budget = self.config["opencode.preserve_recent_tokens"]
        if budget <= 0:
            usable = self.rules.threshold(self.config) or 0
            budget = min(15_000, max(2_000, usable // 4))
        cur = t.turn_of[end]
        tail_turns = self.config["opencode.tail_turns"]
        if cur is None or tail_turns <= 0:
            return end + 1
        total, keep = 0, end + 1
        for turn in range(cur, max(0, cur - tail_turns), -1):  # of the last `tail_turns` turns
            start = max(lo, t.turn_start[turn])
            stop = t.turn_start[turn + 1] if turn + 1 < len(t.turn_start) else len(t.msgs)
            stop = min(stop, end + 1)
            size = t.approx_full[stop] - t.approx_full[start]
            if total + size <= budget:
                total += size
                keep = start
                if start <= lo:
                    break
                continue
            acc = 0
            for i in range(stop - 1, start, -1):  # the newest suffix of this turn that fits
                if total + acc + t.approx[i] > budget:
                    break
                acc += t.approx[i]
                keep = i
            break
        return keep if keep > lo else end + 1

    # -- the timeline ------------------------------------------------------------------------
    def timeline(self) -> list[RequestAudit]:
        if self._timeline is not None:
            return self._timeline
        cfg, t, rules, cal, steps = self.config, self.t, self.rules, self.calibration, self.steps
        window = cfg["context.window"]
        threshold = rules.threshold(cfg)
        estimated_trigger = cfg["context.trigger_tokens"] == "estimated"
        follow = getattr(self.ctx, "compactions", "decide") == "recorded"
        recorded_by_request = {s.before_request_id: s for s in self.thread.summaries if s.before_request_id}
        recorded_by_span = {(s.first_message_id, s.last_message_id): s for s in self.thread.summaries}
        first_turn = t.turn_start[1] if len(t.turn_start) > 1 else len(t.msgs)
        reads_output = rules.reads == "previous"
        covered, kept, kept_tokens, summary_tokens = -1, None, 0, 0
        cleared_upto, pruned_upto = 0, 0
        prev_end, prev_cur = -1, None
        prev_est = prev_cal = 0
        prev_recorded_history = False
        levels = ReplayCalibration(cal)
        out: list[RequestAudit] = []
        for k, req in enumerate(self.requests):
            end = t.index[req.after_message_id]
            cur = t.turn_of[end]
            lo = max(covered + 1, first_turn)
            if steps is not None:  # the agent version's own reading (Claude Code: output + rough count since)
                threshold = steps.thresholds[k]
                new_cost = steps.added[k]
            else:  # what was appended since the previous request, by the agent's own rough count (bytes / 4)
                appended = t.approx_out if reads_output else t.approx_full
                new_cost = appended[end + 1] - appended[prev_end + 1] if end > prev_end else 0
            if k == 0:
                reading, source = None, None
            elif estimated_trigger or cal.identity_model:
                reading, source = prev_est + new_cost, "estimated"
            else:
                reading = prev_cal + new_cost
                source = "recorded" if prev_recorded_history and (new_cost == 0 or steps is not None) else "calibrated"
            over = reading is not None and threshold is not None and reading >= threshold
            # pruning that happens before this request (opencode: at a new user turn)
            if rules.prune == "opencode" and cur != prev_cur:
                pruned_upto = self._opencode_prune(lo, cur, pruned_upto)
            compaction, new_summary, trigger = None, None, None
            diagnostics: list[str] = []
            recorded = recorded_by_request.get(req.id)
            manual = recorded is not None and recorded.last_message_id in t.index and is_manual_summary(recorded)
            if manual:  # the user's /compact: replayed where it happened, whatever the mode
                new_summary, trigger = recorded, "manual"
            elif follow:
                if recorded is not None and recorded.last_message_id in t.index:
                    new_summary, trigger = recorded, ("token_threshold" if over else "recorded")
                    if not over and threshold is not None:
                        diagnostics.append(
                            f"recorded compaction here; the trigger read {reading if reading is not None else 'nothing'}"
                            f", under this profile's threshold {threshold:,}")
            elif over and end >= lo:
                span_hi = end
                if rules.keep == "recent_turns":
                    tail = self._recent_tail(lo, end)
                    span_hi = tail - 1
                elif rules.keep == "fraction":
                    span_hi = self._split_point(lo, end) - 1
                elif steps is not None and steps.keeps_tail[k]:
                    span_hi = self._last_call(lo, end) - 1
                if span_hi >= lo:
                    trigger = "token_threshold"
                    extra = steps.trigger_extra[k] if steps is not None and steps.trigger_extra else 0
                    if extra and reading - extra < threshold:
                        diagnostics.append(f"{steps.extra_note}: {extra:,} of the {reading:,} tokens the trigger "
                                           f"read; without them {reading - extra:,}, under the threshold "
                                           f"{threshold:,}")
                    span = (t.msgs[lo].id, t.msgs[span_hi].id)
                    new_summary = recorded_by_span.get(span) or self._summarize(lo, span_hi, req)
            if new_summary is not None and trigger is not None:
                if not follow and not manual and out and out[-1].compaction is not None and reading is not None:
                    diagnostics.append(
                        f"compacts again right after the previous compaction: what this profile keeps and the "
                        f"agent's own part already read {reading:,} tokens, over the threshold {threshold:,}")
                self.chain.append(new_summary)
                new_covered = max(covered, t.index[new_summary.last_message_id])
                kept = self._kept(first_turn, new_covered) if rules.keep == "user_messages" else None
                kept_tokens = kept.tokens if kept else 0
                covered = new_covered
                lo = max(covered + 1, first_turn)
                if new_summary.id not in self.summary_cost:
                    text = new_summary.injected_text()  # a new summary: counted without a database write
                    self.summary_cost[new_summary.id] = (self.ctx.counter.count_transient(text) + OVERHEAD
                                                         if text else 0)
                summary_tokens = self.summary_cost[new_summary.id]
                compaction = CompactionAudit(trigger, new_summary.id, new_summary.first_message_id,
                                             new_summary.last_message_id, manual)
                pruned_upto = max(pruned_upto, lo)
            system_tokens = self.base_system + t.pre[end + 1]
            history = t.full[end + 1] - t.full[lo] if end >= lo else 0
            if rules.keeps_thinking and end >= lo:
                history += self._thinking(lo, end)
            clear_args = False
            sent = t.npre[end + 1] + (kept.count if kept else 0) + max(0, end + 1 - lo)
            attached = steps.reattached[k] if steps is not None else None
            if rules.prune == "opencode":
                cleared_upto = max(lo, min(pruned_upto, end + 1))
            elif rules.prune == "clear_tool_uses":
                cleared_upto = lo
                full_prompt = system_tokens + self.tool_tokens + summary_tokens + kept_tokens + history
                incoming = levels.value(k, full_prompt, sent, compaction is not None, attached)[0] \
                    if not cal.identity_model else full_prompt
                if incoming >= cfg["context_editing.trigger"]:
                    boundary = self._clear_boundary(lo, end)
                    saving = self._cleared(lo, boundary)
                    if cfg["context_editing.clear_tool_inputs"] == "true":
                        saving += self.arg_cost[boundary] - self.arg_cost[lo]
                    if saving >= cfg["context_editing.clear_at_least"] and boundary > lo:
                        cleared_upto = boundary
                        clear_args = cfg["context_editing.clear_tool_inputs"] == "true"
            saving = self._cleared(lo, cleared_upto) if cleared_upto > lo else 0
            agent_pruned = self._agent_pruned(req, lo, end, cleared_upto) if follow else frozenset()
            if agent_pruned:  # what the agent itself sent instead: its placeholder
                saving += sum(t.costs[i] - self.placeholder_cost for i in agent_pruned)
            if clear_args:
                saving += self.arg_cost[cleared_upto] - self.arg_cost[lo]
            history -= saving
            estimate = system_tokens + self.tool_tokens + summary_tokens + kept_tokens + history
            # the blocks it sends (as `_counts` gives them: kept, truncated and pruned)
            calibrated, basis = levels.value(k, estimate, sent, compaction is not None, attached)
            levels.advance(k, estimate, sent, compaction is not None, calibrated, basis)
            failed = calibrated > window
            if compaction is not None and threshold is not None and calibrated >= threshold:
                diagnostics.append(
                    f"the kept tail alone ({calibrated:,} calibrated tokens) is over the threshold {threshold:,}:"
                    " the next request compacts again")
            state = _State(end, cur, covered, len(self.chain), kept, cleared_upto, clear_args, failed,
                           system_tokens, summary_tokens, kept_tokens, history, agent_pruned)
            self.states.append(state)
            audit = self._aggregate(k, req, state, estimate, calibrated, reading, source, compaction,
                                    threshold, saving, tuple(diagnostics))
            audit.stats["calibration_basis"] = basis
            if steps is not None:
                audit.stats["rules"] = steps.names[k]
            out.append(audit)
            prev_end, prev_cur, prev_est, prev_cal = end, cur, estimate, calibrated
            prev_recorded_history = levels.in_sync(k, False) and cal.is_recorded_history(k, estimate)
        self._timeline = out
        return out

    def _split_point(self, lo: int, end: int) -> int:
        """gemini-cli's split (`compress_split_point`) over the history it holds when it checks: up to
        the last model response (what the request brings after it is pending, always sent). Returns
        the first kept index (lo: nothing to compress)."""
        t = self.t
        last = self._last_call(lo, end)
        if t.msgs[last].role is not Role.ASSISTANT:
            return lo
        span = range(lo, last + 1)
        return lo + compress_split_point([str(t.msgs[i].role) for i in span], [bool(t.msgs[i].tool_calls) for i in span],
                                         t.approx[lo:last + 1], 1 - self.rules.keep_fraction)

    def _last_call(self, lo: int, end: int) -> int:
        """The index of the last model call's response in [lo, end] (what a compaction that keeps
        the last call verbatim keeps from, with its tool results); lo when there is none."""
        for i in range(end, lo - 1, -1):
            if self.t.msgs[i].role is Role.ASSISTANT:
                return i
        return lo

    def _summarize(self, lo: int, hi: int, req) -> Summary:
        summarizer = self.ctx.summarizer
        if summarizer is None:
            raise ValueError("compaction needs a summarizer (summarization.summarizer)")
        return summarizer.summarize(self.t.msgs[lo:hi + 1], self.chain[-1] if self.chain else None,
                                    summary_id=f"replay-{req.id}", before_request_id=req.id)

    def _counts(self, st: _State) -> dict[str, int]:
        """Message blocks per status, the non-zero ones in the order kept, summarized, pruned,
        truncated (once per request of every edit: plain arithmetic, one dict)."""
        t = self.t
        end1 = st.end + 1
        first_turn = t.turn_start[1] if len(t.turn_start) > 1 else len(t.msgs)
        kept_n = t.npre[end1]
        truncated = 0
        covered1 = st.covered_upto + 1
        summarized = (covered1 if covered1 < end1 else end1) - first_turn
        if summarized < 0:
            summarized = 0
        if st.kept:
            truncated = 1 if st.kept.truncated is not None else 0
            kept_n += st.kept.count - truncated
            summarized -= st.kept.count
        lo = covered1 if covered1 > first_turn else first_turn
        history_n = end1 - lo if end1 > lo else 0
        pruned = self.ntool[st.cleared_upto] - self.ntool[lo] if st.cleared_upto > lo else 0
        pruned += len(st.agent_pruned)
        counts: dict[str, int] = {}
        kept = kept_n + history_n - pruned
        if kept:
            counts["kept"] = kept
        if summarized:
            counts["summarized"] = summarized
        if pruned:
            counts["pruned"] = pruned
        if truncated:
            counts["truncated"] = truncated
        return counts

    def _aggregate(self, k, req, st: _State, estimate, calibrated, reading, source, compaction, threshold,
                   saving, diagnostics) -> RequestAudit:
        window = self.config["context.window"]
        error = needed = None
        prompt = estimate
        if st.failed:
            needed, prompt = estimate, 0
            error = RequestError(
                "CONTEXT_WINDOW_EXCEEDED",
                f"the request would bill about {calibrated:,} tokens (calibrated), over the {window:,}-token window")
        fixed = st.system_tokens + self.tool_tokens + st.summary_tokens + st.kept_tokens
        budget = BudgetAudit(window, st.system_tokens, self.tool_tokens, st.summary_tokens, 0, window - fixed,
                             0 if st.failed else st.history_tokens + st.kept_tokens, prompt, req.prompt_tokens,
                             source, reading, saving, needed, calibrated, calibrated - estimate)
        stats = {"compaction_threshold_tokens": threshold, "block_counts": self._counts(st)}
        injected = (self.chain[st.chain_len - 1].id,) if st.chain_len else ()
        return RequestAudit(k, req.id, req.after_message_id, st.cur, "failed" if st.failed else "completed", error,
                            budget, compaction, injected, None, (), diagnostics, stats)

    def _is_kept(self, kept: _Kept | None, i: int) -> bool:
        """Whether message `i` is one `kept` sends verbatim (what `_kept_map` holds), without building it."""
        if kept is None:
            return False
        if i in kept.prefix or (kept.truncated is not None and kept.truncated[0] == i):
            return True
        at = bisect_left(self.user_indices, i, kept.start, kept.hi)
        return at < kept.hi and self.user_indices[at] == i

    def summary_spans(self) -> dict[str, tuple[str, ...]]:
        """Each compaction's summary -> the messages its request marks summarized by it (what `audit(k)`
        gives), without building the request's blocks: linear in the thread over every compaction
        (10,000 compactions were 10,000 audits of the whole history)."""
        timeline = self.timeline()
        t = self.t
        ends: list[int] = []  # the running last covered index along the whole chain (audit's `ends`)
        for link in self.chain:
            ends.append(max(ends[-1] if ends else -1, t.index.get(link.last_message_id, -1)))
        out: dict[str, tuple[str, ...]] = {}
        mids = label_columns(self.ctx.counter, t.labels)[0]
        in_turn = [turn is not None for turn in t.turn_of]
        for k, agg in enumerate(timeline):
            st = self.states[k]
            last = st.chain_len - 1
            if agg.compaction is None or last < 0 or self.chain[last].id != agg.compaction.summary_id:
                continue
            start = ends[last - 1] + 1 if last > 0 else 0
            stop = min(st.covered_upto, st.end)
            kept = st.kept
            if kept is None:  # the messages of the range that belong to a turn, in one C-level pass
                out[agg.compaction.summary_id] = tuple(compress(mids[start:stop + 1], in_turn[start:stop + 1]))
            else:
                out[agg.compaction.summary_id] = tuple(
                    mids[i] for i in range(start, stop + 1) if in_turn[i] and not self._is_kept(kept, i))
        return out

    def _summarized_run(self, i: int, stop: int, covering: str | None, mids, roles, kinds) -> tuple[BlockAudit, ...]:
        """The blocks of messages [i, stop) summarized by `covering`: they depend on the thread's tables
        alone, so the same run (the last requests of every edit of a long thread summarize the same
        thousands) is made once per thread and counter and shared (the blocks are frozen)."""
        memo = remembered(self.ctx.counter, "agent_summarized_runs", self.t, dict)
        key = (i, stop, covering)
        hit = memo.get(key)
        if hit is None:
            t = self.t
            n = stop - i
            hit = tuple(map(BlockAudit, mids[i:stop], roles[i:stop], kinds[i:stop], t.turn_of[i:stop],
                            repeat(BlockStatus.SUMMARIZED, n), repeat(False, n), repeat(Reason.SUMMARIZED, n),
                            t.costs[i:stop], repeat(0, n), repeat(None, n), repeat(covering, n)))
            if len(memo) >= SUMMARIZED_RUNS:
                memo.clear()
            memo[key] = hit
        return hit

    def audit(self, k: int) -> RequestAudit:
        """Request `k` with every block, in thread order, positions in prompt order."""
        agg = self.timeline()[k]
        st = self.states[k]
        t, rules = self.t, self.rules
        failed = st.failed
        summary = self.chain[st.chain_len - 1] if st.chain_len else None
        kept = self._kept_map(st.kept)
        chain = self.chain[: st.chain_len]
        ends: list[int] = []  # last covered index of each summary, non-decreasing along the chain
        for link in chain:
            ends.append(max(ends[-1] if ends else -1, t.index.get(link.last_message_id, -1)))
        # prompt order: pre-turn system blocks, then summary and kept messages, then the history
        position = t.npre[st.end + 1]
        order: list[str] = ["summary", "kept"] if rules.summary_first else ["kept", "summary"]
        summary_pos = kept_pos = 0
        for part in order:
            if part == "summary" and summary is not None:
                summary_pos, position = position, position + 1
            elif part == "kept":
                kept_pos, position = position, position + len(kept)
        history_pos = position
        blocks: list[BlockAudit] = []
        pre_pos = 0
        kept_seen = 0
        placeholder_sent = self.placeholder_cost
        mids, roles, kinds = label_columns(self.ctx.counter, t.labels)
        kept_sorted = sorted(kept)
        covered_hi = min(st.covered_upto, st.end)
        link = 0  # bisect_left(ends, i), walked forward with i
        i = 0
        while i <= st.end:
            turn = t.turn_of[i]
            if turn is not None and i <= covered_hi and i not in kept:
                # A run of summarized blocks under one summary, made in one C-level map (the last
                # request of a long thread summarizes thousands): up to the next kept block, the
                # end of the covering summary's span, the end of what is covered.
                while link < len(ends) and ends[link] < i:
                    link += 1
                stop = covered_hi + 1
                if link < len(ends):
                    stop = min(stop, ends[link] + 1)
                nxt = bisect_right(kept_sorted, i)
                if nxt < len(kept_sorted):
                    stop = min(stop, kept_sorted[nxt])
                if t.npre[stop] == t.npre[i]:  # no pre-turn block in the run (they come first)
                    covering = chain[link].id if link < len(ends) else (summary.id if summary else None)
                    blocks.extend(self._summarized_run(i, stop, covering, mids, roles, kinds))
                    i = stop
                    continue
            mid, role, kind = t.labels[i]
            cost = t.costs[i]
            j, i = i, i + 1  # the blocks below are of message j
            if turn is None:
                blocks.append(BlockAudit(mid, role, kind, turn, BlockStatus.KEPT, True, Reason.SYSTEM, cost,
                                         0 if failed else cost, None if failed else pre_pos))
                pre_pos += 1
            elif j <= st.covered_upto:
                sent = kept.get(j)
                if sent is None:
                    # the summary of the compaction that replaced it (the first one covering it)
                    covering = chain[bisect_left(ends, j)].id if ends and j <= ends[-1] else (
                        summary.id if summary else None)
                    blocks.append(BlockAudit(mid, role, kind, turn, BlockStatus.SUMMARIZED, False, Reason.SUMMARIZED,
                                             cost, 0, None, covering))
                else:
                    status = BlockStatus.KEPT if sent >= cost else BlockStatus.TRUNCATED
                    why = Reason.SYSTEM if j in self.session_prefix else KEPT_AFTER_COMPACTION
                    blocks.append(BlockAudit(mid, role, kind, turn, status, True, why, cost,
                                             0 if failed else sent, None if failed else kept_pos + kept_seen))
                    kept_seen += 1
            else:
                if self.prunable[j] and j < st.cleared_upto:
                    reason = TOOL_RESULT_CLEARED if rules.prune == "clear_tool_uses" else TOOL_OUTPUT_PRUNED
                    status, sent = BlockStatus.PRUNED, placeholder_sent
                elif j in st.agent_pruned:
                    reason, status, sent = PRUNED_BY_AGENT, BlockStatus.PRUNED, placeholder_sent
                else:
                    status, sent = BlockStatus.KEPT, cost
                    reason = Reason.CURRENT_TURN if turn == st.cur else SINCE_COMPACTION
                blocks.append(BlockAudit(mid, role, kind, turn, status, turn == st.cur, reason, cost,
                                         0 if failed else sent, None if failed else history_pos))
                history_pos += 1
        if summary is not None:
            cost = self.summary_cost.get(summary.id, 0)
            blocks.append(BlockAudit(None, "user" if rules.summary_first else "system", "summary", None,
                                     BlockStatus.KEPT, True, Reason.SUMMARY_INJECTED, cost,
                                     0 if failed else cost, None if failed else summary_pos, summary_id=summary.id))
        stats = dict(agg.stats)
        stats.pop("block_counts", None)
        return replace(agg, blocks=tuple(blocks), stats=stats)

    def replay(self) -> tuple[list[RequestAudit], list[Summary]]:
        timeline = self.timeline()
        return [self.audit(k) for k in range(len(timeline))], self.chain
