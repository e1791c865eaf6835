"""What a replay costs: the prompt cache of every request, priced, recorded beside replayed, and
the summarization call of every compaction.

Pure. `account(...)` runs the cache model of `cache.py` over a replay's timeline and returns
one `RequestCost` per request; `with_cost` puts it into the request's budget (simulate JSON:
`budget.cache_read_tokens`, `cache_write_tokens`, `cache_break`, `cost`, `recorded_cost`,
`recorded_cache_read_tokens`, `recorded_cache_write_tokens`, `cost_split`, `summarization`).
A compaction's cost includes its summarization call, priced by the profile's rule
(`profiles.base.SummarizationCall`): what the agent sends to summarize and the summary it gets.

Token units: the cache is simulated in the replay's own counts and scaled to the request's
billed prompt size, `billed_prompt_tokens` (the calibrated count where the replay has one,
else the replayed count: the one place that chooses).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any

import msgspec

from inspector.model import Request, Role, Summary, Thread, effective_requests
from inspector.pipeline.audit import BudgetAudit, CacheBreak, RequestAudit, SummarizationCost
from inspector.pipeline.cache import (
    Block,
    Prompt,
    Run,
    RunTable,
    _cached_length,
    lead_tokens,
    parse_time,
    prompt_from_audit,
    simulate_cache,
    with_lead,
)
from inspector.pipeline.cache_rules import CacheRules, rules_for, system_prefixes
from inspector.pipeline.pricing import CostSplit, PriceTable, request_cost
from inspector.pipeline.profiles.base import SummarizationCall
from inspector.tokens import message_costs


def billed_prompt_tokens(budget: BudgetAudit) -> int:
    """The prompt size the provider would bill: calibrated where the replay has it, else replayed."""
    calibrated = getattr(budget, "calibrated_prompt_tokens", None)
    return calibrated if isinstance(calibrated, int) else budget.prompt_tokens


def unaccounted_tokens(budget: BudgetAudit) -> int:
    """Of the billed prompt, the agent's own part that the transcript lacks (0 where not calibrated)."""
    value = getattr(budget, "unaccounted_tokens", None)
    return value if isinstance(value, int) and value > 0 else 0


@dataclass(frozen=True, slots=True)
class RequestCost:
    recorded_cache_read: int | None
    recorded_cache_write: int | None
    cache_read: int | None
    cache_write: int | None
    brk: CacheBreak | None
    cost: CostSplit | None
    recorded_cost: float | None
    summarization: SummarizationCost | None = None

    @property
    def total(self) -> float | None:
        """The request's own call and its compaction's summarization call (None: either has no price)."""
        if self.cost is None or (self.summarization is not None and self.summarization.cost is None):
            return None
        return self.cost.total + (0.0 if self.summarization is None else self.summarization.cost.total)


@dataclass(frozen=True, slots=True)
class ThreadCost:
    """A replay's totals (cost None when some sent request has no price)."""

    requests: int
    compactions: int
    failures: int
    prompt_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cache_breaks: int
    cost: float | None
    recorded_cost: float | None
    breaks_by_cause: dict[str, int] | None = None
    break_cost: float | None = None  # what the breaks cost more than reading the lost tokens
    summarization_cost: float | None = 0.0  # the compactions' summarization calls (in `cost`)
    back_to_back: int = 0  # compactions right after the previous one (at the next request)

    @property
    def cache_read_share(self) -> float | None:
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else None

    def to_json(self) -> dict[str, Any]:
        share = self.cache_read_share
        return {"requests": self.requests, "compactions": self.compactions, "failures": self.failures,
                "prompt_tokens": self.prompt_tokens, "cache_read_tokens": self.cache_read_tokens,
                "cache_write_tokens": self.cache_write_tokens,
                "cache_read_share": None if share is None else round(share, 4),
                "cache_breaks": self.cache_breaks, "breaks_by_cause": dict(sorted((self.breaks_by_cause or {}).items())),
                "break_cost": None if self.break_cost is None else round(self.break_cost, 6),
                "summarization_cost": None if self.summarization_cost is None else round(self.summarization_cost, 6),
                "back_to_back": self.back_to_back,
                "cost": None if self.cost is None else round(self.cost, 6),
                "recorded_cost": None if self.recorded_cost is None else round(self.recorded_cost, 6)}


def _iris_prompts(fast) -> tuple[list[Prompt | None], RunTable]:
    """The iris fast replayer's prompts as runs of messages: no block lists are built."""
    memo = fast.ctx.counter.__dict__.setdefault("_cache_run_tables", {})
    hit = memo.get(id(fast.costs))
    if hit is not None and hit[0] is fast.costs:
        table = hit[1]
    else:
        table = RunTable([m.id for m in fast.msgs], fast.is_tool, fast.costs, fast.pruned_costs)
        if len(memo) >= 4:
            memo.clear()
        memo[id(fast.costs)] = (fast.costs, table)
    lead = fast.base_system + fast.tool_tokens
    lead_block = Block(("lead", lead), lead, None, None, "lead")
    first = fast.first_turn_index
    pre_runs: dict[int, tuple[Run, int]] = {}
    summaries: dict[tuple[str, int], Block] = {}  # one block per summary and place, shared by the prompts
    out: list[Prompt | None] = []
    for st in fast.states:
        if st.failed:
            out.append(None)
            continue
        pre_n = min(st.end + 1, first)
        segments: list = [lead_block]
        tokens = lead
        if pre_n:
            pre = pre_runs.get(pre_n)
            if pre is None:
                pre = pre_runs[pre_n] = (Run(0, pre_n, 0, 0), table.cost(0, pre_n, 0))
            segments.append(pre[0])
            tokens += pre[1]
        position = pre_n
        for s in fast.chain[st.injected_from:st.chain_len]:
            block = summaries.get((s.id, position))
            if block is None:
                cost = fast.summary_cost[s.id]
                block = summaries[(s.id, position)] = Block(("s", "summary", s.id, cost), cost, position, None,
                                                             "summary")
            segments.append(block)
            tokens += block.tokens
            position += 1
        if st.loaded_lo <= st.end:
            segments.append(Run(st.loaded_lo, st.end + 1, st.shield_lo, position))
            tokens += table.cost(st.loaded_lo, st.end + 1, st.shield_lo)
        out.append(Prompt(tuple(segments), tokens))
    return out, table


def _agent_prompts(fast, timeline: Sequence[RequestAudit]) -> tuple[list[Prompt | None], RunTable] | None:
    """The agent replayer's prompts as runs: the pre-turn blocks, the last summary, then every
    message since it, prunable tool outputs before `cleared_upto` at the placeholder's cost. None
    where a request keeps messages across a compaction (codex) or clears tool-call arguments
    (context editing): those are read block by block."""
    if any(st.kept is not None or st.clear_args for st in fast.states):
        return None
    t = fast.t
    memo = fast.ctx.counter.__dict__.setdefault("_cache_agent_run_tables", {})
    key = (id(t), id(fast.prunable), fast.placeholder_cost)
    hit = memo.get(key)
    if hit is not None and hit[0] is t and hit[1] is fast.prunable:
        table = hit[2]
    else:
        n = len(t.msgs)
        table = RunTable([label[0] for label in t.labels], fast.prunable, t.costs, [fast.placeholder_cost] * n)
        if len(memo) >= 4:
            memo.clear()
        memo[key] = (t, fast.prunable, table)
    first = t.npre[len(t.msgs)]  # pre-turn messages are the thread's first ones
    summaries: dict[str, Block] = {}
    out: list[Prompt | None] = []
    for st, audit in zip(fast.states, timeline, strict=True):
        if st.failed:
            out.append(None)
            continue
        pre_n = t.npre[st.end + 1]
        segments: list = []
        sent = 0
        if pre_n:
            segments.append(Run(0, pre_n, 0, 0))
            sent += table.cost(0, pre_n, 0)
        position = pre_n
        if st.chain_len:
            summary = fast.chain[st.chain_len - 1]
            block = summaries.get(summary.id)
            if block is None:
                cost = fast.summary_cost.get(summary.id, 0)
                block = summaries[summary.id] = Block(("s", "summary", summary.id, cost), cost, position, None,
                                                      "summary")
            segments.append(block)
            sent += block.tokens
            position += 1
        lo = max(st.covered_upto + 1, first)
        if lo <= st.end:
            segments.append(Run(lo, st.end + 1, st.cleared_upto, position))
            sent += table.cost(lo, st.end + 1, st.cleared_upto)
        lead = max(0, audit.budget.prompt_tokens - sent)  # as prompt_from_audit reads it
        out.append(Prompt((Block(("lead", lead), lead, None, None, "lead"), *segments), lead + sent))
    return out, table


def has_fast_prompt_model(fast) -> bool:
    """Whether the prompts of `fast`'s replay come from its state, without building blocks
    (iris, and the agents' replayer where no compaction keeps messages)."""
    from inspector.pipeline.profiles.agents import AgentReplayer
    from inspector.pipeline.profiles.iris.replayer import IrisReplayer

    if type(fast) is IrisReplayer:
        return True
    return type(fast) is AgentReplayer and not any(st.kept is not None or st.clear_args for st in fast.states)


def replay_prompts(fast, timeline: Sequence[RequestAudit], audit) -> tuple[list[Prompt | None], RunTable | None]:
    """Every request's prompt: from the iris or agent replayer's state, else from each request's blocks."""
    from inspector.pipeline.profiles.agents import AgentReplayer
    from inspector.pipeline.profiles.iris.replayer import IrisReplayer

    if type(fast) is IrisReplayer and len(fast.states) == len(timeline):
        return _iris_prompts(fast)
    if type(fast) is AgentReplayer and len(fast.states) == len(timeline):
        fast_prompts = _agent_prompts(fast, timeline)
        if fast_prompts is not None:
            return fast_prompts
    return [None if r.failed else prompt_from_audit(audit(r.index)) for r in timeline], None


def _output_tokens(thread: Thread, requests: Sequence[Request], counter) -> list[int]:
    """Recorded output tokens, else the replayed count of the assistant message the request produced.

    No config key changes them: remembered per thread and counter (every edit replays the thread)."""
    memo = counter.__dict__.setdefault("_cache_outputs", {})
    key = (id(thread.messages), id(thread.requests))
    hit = memo.get(key)
    if hit is not None and hit[0] is thread.messages and hit[1] is thread.requests and len(hit[2]) == len(requests):
        return hit[2]
    out = _count_outputs(thread, requests, counter)
    if len(memo) >= 4:
        memo.clear()
    memo[key] = (thread.messages, thread.requests, out)
    return out


def _count_outputs(thread: Thread, requests: Sequence[Request], counter) -> list[int]:
    index = thread.message_index()
    msgs = thread.messages
    out: list[int] = []
    for r in requests:
        if r.output_tokens is not None:
            out.append(r.output_tokens)
            continue
        i = index.get(r.after_message_id, -2) + 1
        reply = msgs[i] if 0 < i < len(msgs) else None
        out.append(counter.count(reply.text_for_count()) if reply is not None and reply.role is Role.ASSISTANT else 0)
    return out


def _leads(timeline: Sequence[RequestAudit], prompts: Sequence[Prompt | None], billed: Sequence[int],
           prefixes: dict[str, int]) -> tuple[list[int], list[int]]:
    """Each sent request's leading block and cached system prefix, in billed tokens.

    The lead: the prompt's own leading block (the system prompt and tools the transcript holds) plus
    what the provider billed beyond the transcript at the thread's first request (the agent's own
    system prompt, tools and injected files; the same in every replay, as nothing compacts before
    the first request). The system prefix, what a request whose messages changed still reads: what
    the thread's recorded usage shows (`cache_rules.system_prefixes`), else the whole lead."""
    gap = next((max(0, b - p.tokens) for p, b in zip(prompts, billed, strict=True) if p is not None), 0)
    leads: list[int] = []
    floors: list[int] = []
    for a, p, b in zip(timeline, prompts, billed, strict=True):
        if p is None:
            leads.append(0)
            floors.append(0)
            continue
        lead = lead_tokens(p) + gap
        floor = prefixes.get(a.request_id, lead)
        lead = max(lead, floor)
        leads.append(lead if lead < b else b)
        floors.append(floor if floor < b else b)
    return leads, floors


def _recorded_cost(r: Request, price, rules: CacheRules) -> float | None:
    if r.billed_cost is not None:
        return r.billed_cost  # what the agent recorded it paid (opencode), not a price from the table
    if r.prompt_tokens is None or price is None:
        return None
    known = r.cache_read_tokens is not None or (rules.writes and r.cache_write_tokens is not None)
    if not known:
        return None  # the provider said nothing about the cache: the split is unknown
    read = r.cache_read_tokens or 0
    write = r.cache_write_tokens or 0
    return request_cost(price, prompt=r.prompt_tokens, cache_read=read, cache_write=write,
                        output=r.output_tokens or 0, one_hour=rules.one_hour).total


@dataclass(frozen=True, slots=True)
class _ThreadFacts:
    """What no config key changes, remembered per thread and counter (every edit replays the thread)."""

    rules: CacheRules
    requests: dict[str, Request]
    times: dict[str, float | None]
    order: dict[str, int]
    prefixes: dict[str, int]  # request id -> the cached system prefix its recorded usage shows


def _thread_facts(thread: Thread, counter) -> _ThreadFacts:
    memo = counter.__dict__.setdefault("_cache_thread_facts", {})
    key = (id(thread.messages), id(thread.requests), thread.source)
    hit = memo.get(key)
    if hit is not None and hit[0] is thread.messages and hit[1] is thread.requests:
        return hit[2]
    requests = {r.id: r for r in effective_requests(thread)}
    facts = _ThreadFacts(rules_for(thread), requests, {r.id: parse_time(r.created_at) for r in requests.values()},
                         thread.message_index(), system_prefixes(thread))
    if len(memo) >= 4:
        memo.clear()
    memo[key] = (thread.messages, thread.requests, facts)
    return facts


def _message_prefix(thread: Thread, counter) -> list[int]:
    """Prefix sums of every message's replayed tokens (no config key changes them: remembered)."""
    memo = counter.__dict__.setdefault("_cache_message_prefix", {})
    hit = memo.get(id(thread.messages))
    if hit is not None and hit[0] is thread.messages:
        return hit[1]
    prefix = [0]
    for c in message_costs(counter, thread.messages, 0):
        prefix.append(prefix[-1] + c)
    if len(memo) >= 4:
        memo.clear()
    memo[id(thread.messages)] = (thread.messages, prefix)
    return prefix


@dataclass(frozen=True, slots=True)
class SummarizationPricing:
    """What `account` needs to price a replay's summarization calls: the profile's rule, the
    configured `summarization.model` and the replay's summaries by id."""

    call: SummarizationCall
    model: str | None
    summaries: dict[str, Summary]


def _summarization(k: int, j: int | None, timeline: Sequence[RequestAudit], prompts: Sequence[Prompt | None],
                   billed: Sequence[int], times: Sequence[float | None], requests: Sequence[Request],
                   pricing: SummarizationPricing, rules: CacheRules, prices: PriceTable | None, thread: Thread,
                   counter, position: dict[str, int]) -> SummarizationCost:
    """The summarization call of request k's compaction, in billed tokens: the replayed tokens it
    sends beyond the last request's prompt (`j`: the last request before k with a prompt, None:
    none), and the summary, are scaled as that request's messages are billed (its billed prompt
    beyond the leading block per replayed token)."""
    audit = timeline[k]
    comp = audit.compaction
    call = pricing.call
    ratio = 1.0
    if j is not None:
        lead = lead_tokens(prompts[j])
        rest = prompts[j].tokens - lead
        ratio = (billed[j] - lead) / rest if rest > 0 else 1.0
    prefix = _message_prefix(thread, counter)
    summary = pricing.summaries.get(comp.summary_id)
    read = 0
    if call.sends == "history":
        # the last request's prompt, then every message after it up to this request's
        start = position.get(timeline[j].after_message_id, -1) + 1 if j is not None else 0
        end = position.get(audit.after_message_id, start - 1) + 1
        before = billed[j] if j is not None else 0
        sent = before + round(ratio * (prefix[end] - prefix[start] if end > start else 0))
        if call.cached and j is not None:
            t, t_j = times[k], times[j]
            if t is None or t_j is None or t - t_j <= rules.lifetime:
                read = min(_cached_length(rules, before), sent)
    else:
        lo = position.get(comp.first_message_id)
        hi = position.get(comp.last_message_id)
        span = prefix[hi + 1] - prefix[lo] if lo is not None and hi is not None and hi >= lo else 0
        previous = pricing.summaries.get(summary.previous_summary_id) if summary and summary.previous_summary_id \
            else None
        span += counter.count(previous.injected_text()) if previous is not None else 0
        sent = round(ratio * span)
    output = round(ratio * counter.count(summary.injected_text())) if summary is not None else 0
    if call.verification:  # the second pass: the same input and the summary in, the summary again out
        sent, read, output = 2 * sent + output, 2 * read, 2 * output
    model = pricing.model if call.model == "summarization" else (requests[k].model or
                                                                  (requests[j].model if j is not None else None))
    price = prices.lookup(model) if prices is not None else None
    cost = None if price is None else request_cost(price, prompt=sent, cache_read=read, cache_write=0, output=output)
    return SummarizationCost(model or (prices.default_model if prices is not None else None), sent, read, output,
                             cost)


def account(thread: Thread, timeline: Sequence[RequestAudit], prompts: Sequence[Prompt | None],
            table: RunTable | None, prices: PriceTable | None, counter,
            rules: CacheRules | None = None, summarization: SummarizationPricing | None = None) -> list[RequestCost]:
    """One `RequestCost` per request of the timeline; `summarization`: how the profile's compactions
    write their summaries (None: by no model call)."""
    facts = _thread_facts(thread, counter)
    rules = rules or facts.rules
    by_id = facts.requests
    requests = [by_id.get(a.request_id) or Request(a.request_id, a.after_message_id) for a in timeline]
    times = [facts.times.get(r.id) for r in requests]
    order = facts.order
    billed = [billed_prompt_tokens(a.budget) for a in timeline]
    # The leading block holds the cached system prefix in billed tokens (cache.py, "Units").
    leads, floors = _leads(timeline, prompts, billed, facts.prefixes)
    prompts = [p if p is None else with_lead(p, lead) for p, lead in zip(prompts, leads, strict=True)]
    results = simulate_cache(timeline, prompts, times, rules, table, order, billed, floors)
    outputs = _output_tokens(thread, requests, counter)
    out: list[RequestCost] = []
    price_of: dict[str | None, object] = {}  # one lookup per model name, not per request
    for audit, req, res, output in zip(timeline, requests, results, outputs, strict=True):
        if req.model in price_of:
            price = price_of[req.model]
        else:
            price = price_of[req.model] = prices.lookup(req.model) if prices is not None else None
        recorded = _recorded_cost(req, price, rules)
        if audit.failed:
            out.append(RequestCost(req.cache_read_tokens, req.cache_write_tokens, 0, 0, None,
                                   CostSplit(0.0, 0.0, 0.0, 0.0) if price is not None else None, recorded))
            continue
        size = billed_prompt_tokens(audit.budget)
        cost = None
        brk = res.brk
        if price is not None:
            cost = request_cost(price, prompt=size, cache_read=res.read, cache_write=res.write, output=output,
                                one_hour=rules.one_hour)
            if brk is not None:
                # What the lost prefix costs more than reading it: written again (Anthropic), or
                # sent uncached (OpenAI).
                rewrite = request_cost(price, prompt=brk.lost_tokens, cache_read=0,
                                       cache_write=brk.lost_tokens if rules.writes else 0, output=0,
                                       one_hour=rules.one_hour).total
                reread = brk.lost_tokens * price.cache_read / 1_000_000
                brk = replace(brk, cost=rewrite - reread)
        out.append(RequestCost(req.cache_read_tokens, req.cache_write_tokens, res.read, res.write, brk, cost,
                               recorded))
    if summarization is not None:
        recorded_calls = {r.id for r in thread.requests}
        last_prompt: int | None = None  # the last request before k with a prompt (one pass, not a scan back per call)
        for k, audit in enumerate(timeline):
            j, last_prompt = last_prompt, (k if prompts[k] is not None else last_prompt)
            if audit.compaction is not None:
                summary = summarization.summaries.get(audit.compaction.summary_id)
                if summary is not None and isinstance(summary.meta, Mapping) and \
                        summary.meta.get("summarization_request") in recorded_calls:
                    continue  # the agent's own summarization call is a request of the thread (opencode)
                call = _summarization(k, j, timeline, prompts, billed, times, requests, summarization, rules,
                                      prices, thread, counter, order)
                out[k] = replace(out[k], summarization=call)
    return out


COST_FIELDS = ("recorded_cache_read_tokens", "recorded_cache_write_tokens", "cache_read_tokens",
               "cache_write_tokens", "cache_break", "cost", "recorded_cost", "cost_split", "summarization")
_BUDGET_NAMES = BudgetAudit.__struct_fields__
_REQUEST_NAMES = RequestAudit.__struct_fields__
# Every request of a long thread is priced on each edit: the audits are rebuilt positionally
# (C-level attribute reads) when the cost fields are the budget's last ones, else with replace().
_FAST = _BUDGET_NAMES[-len(COST_FIELDS):] == COST_FIELDS
_budget_head = attrgetter(*_BUDGET_NAMES[:-len(COST_FIELDS)])
_request_values = attrgetter(*_REQUEST_NAMES)
_BUDGET_AT = _REQUEST_NAMES.index("budget")


def with_cost(audit: RequestAudit, c: RequestCost) -> RequestAudit:
    """The audit with its cache and cost in the budget."""
    values = (c.recorded_cache_read, c.recorded_cache_write, c.cache_read, c.cache_write, c.brk,
              c.total, c.recorded_cost, c.cost, c.summarization)
    if not _FAST:
        return msgspec.structs.replace(audit, budget=msgspec.structs.replace(
            audit.budget, **dict(zip(COST_FIELDS, values, strict=True))))
    budget = BudgetAudit(*_budget_head(audit.budget), *values)
    args = list(_request_values(audit))
    args[_BUDGET_AT] = budget
    return RequestAudit(*args)


def back_to_back(timeline: Sequence[RequestAudit]) -> int:
    """Compactions right after the previous one: before request k when request k - 1 compacted too
    (the kept tail alone, or what the agent re-attaches, is over the threshold)."""
    return sum(1 for a, b in zip(timeline, timeline[1:], strict=False) if a.compaction is not None and b.compaction is not None)


def totals(timeline: Sequence[RequestAudit], costs: Sequence[RequestCost]) -> ThreadCost:
    prompt = read = write = breaks = 0
    cost: float | None = 0.0
    recorded: float | None = 0.0
    break_cost: float | None = 0.0
    summarization: float | None = 0.0
    causes: dict[str, int] = {}
    for a, c in zip(timeline, costs, strict=True):
        if c.summarization is not None:
            summarization = None if summarization is None or c.summarization.cost is None else \
                summarization + c.summarization.cost.total
        if not a.failed:
            prompt += billed_prompt_tokens(a.budget)
            read += c.cache_read or 0
            write += c.cache_write or 0
        if c.brk is not None:
            breaks += 1
            causes[c.brk.cause] = causes.get(c.brk.cause, 0) + 1
            break_cost = None if break_cost is None or c.brk.cost is None else break_cost + c.brk.cost
        total = c.total
        cost = None if cost is None or total is None else cost + total
        recorded = None if recorded is None or c.recorded_cost is None else recorded + c.recorded_cost
    return ThreadCost(len(timeline), sum(1 for a in timeline if a.compaction is not None),
                      sum(1 for a in timeline if a.failed), prompt, read, write, breaks, cost, recorded,
                      causes, break_cost, summarization, back_to_back(timeline))
