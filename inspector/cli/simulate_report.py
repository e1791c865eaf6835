"""Plain-text rendering of a simulation for `simulate` without --json."""

from __future__ import annotations

from collections import Counter

from inspector.model import Thread
from inspector.pipeline.accounting import billed_prompt_tokens
from inspector.pipeline.audit import RequestAudit, Simulation
from inspector.terminal_safety import safe_line
from inspector.thread_tree import SubagentTotals


def _fmt(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def _table(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]


NUMBERING = ("requests are numbered from 1 (N, as in the TUI); INDEX counts from 0 "
             "(the JSON index, and --request INDEX)")


def timeline_lines(sim: Simulation) -> list[str]:
    rows = []
    for r in sim.requests:
        counts = r.block_counts()  # from the replay's statistics when the blocks were not built
        b = r.budget
        event = ""
        if r.compaction:
            why = "manual (/compact)" if r.compaction.manual else r.compaction.trigger
            event = f"compaction ({why}) -> {r.compaction.summary_id}"
        if r.error:
            event = r.error.code
        rows.append([
            str(r.index + 1), str(r.index), safe_line(r.request_id, 28), _fmt(r.turn), r.status, _fmt(b.prompt_tokens if not r.failed else b.needed_tokens),
            _fmt(b.calibrated_prompt_tokens), _fmt(b.recorded_prompt_tokens), _fmt(b.available), str(counts.get("kept", 0)), str(counts.get("pruned", 0)),
            str(counts.get("excluded", 0) + counts.get("truncated", 0)), str(counts.get("summarized", 0)), event,
        ])
    header = ["N", "INDEX", "REQUEST", "TURN", "STATUS", "PROMPT", "CALIBRATED", "RECORDED", "AVAILABLE", "KEPT",
              "PRUNED", "EXCL", "SUMM", "EVENT"]
    return _table(header, rows, right={0, 1, 3, 5, 6, 7, 8, 9, 10, 11, 12})


def request_lines(audit: RequestAudit, thread: Thread) -> list[str]:
    b = audit.budget
    out = [
        f"request {audit.index + 1} (index {audit.index}, {safe_line(audit.request_id)}), turn {_fmt(audit.turn)}: "
        f"{audit.status}"
        + (f" - {audit.error.code}: {audit.error.message}" if audit.error else ""),
        f"  window {_fmt(b.window)}  system {_fmt(b.system_tokens)}  tools {_fmt(b.tool_tokens)}  "
        f"summaries {_fmt(b.summary_tokens)}  reserve {_fmt(b.response_reserve)}  available {_fmt(b.available)}",
        f"  history {_fmt(b.history_tokens)}  prompt {_fmt(b.prompt_tokens)}  calibrated {_fmt(b.calibrated_prompt_tokens)}"
        f" (unaccounted {_fmt(b.unaccounted_tokens)})  recorded {_fmt(b.recorded_prompt_tokens)}  "
        f"trigger {_fmt(b.trigger_tokens)} ({b.trigger_source or '-'})  saved by pruning {_fmt(b.pruned_savings)}"
        + (f"  needed {_fmt(b.needed_tokens)}" if b.needed_tokens is not None else ""),
        f"  protect_turns {_fmt(audit.protect_turns)}  summaries injected: {', '.join(audit.summaries_injected) or '-'}",
    ]
    if audit.compaction:
        c = audit.compaction
        out.append(f"  compaction ({c.trigger}): {c.summary_id} covers {c.first_message_id} .. {c.last_message_id}")
    if b.cache_read_tokens is not None:
        out.append(f"  cache read {_fmt(b.cache_read_tokens)}  write {_fmt(b.cache_write_tokens)}  "
                   f"cost {_dollars(b.cost)}  recorded {_dollars(b.recorded_cost)} (cache read "
                   f"{_fmt(b.recorded_cache_read_tokens)}, write {_fmt(b.recorded_cache_write_tokens)})")
    if b.cache_break is not None:
        k = b.cache_break
        out.append(f"  cache break ({k.cause}) at position {_fmt(k.position)} "
                   f"{safe_line(k.message_id or '(system prompt)', 40)}: {_fmt(k.lost_tokens)} cached tokens lost, "
                   f"{_dollars(k.cost)}")
    for d in audit.diagnostics:
        out.append(f"  diagnostic: {safe_line(d)}")
    out.extend(agent_pruned_lines(audit, thread))
    rows = []
    for blk in audit.blocks:
        rows.append([
            _fmt(blk.position), safe_line(blk.message_id or f"<{blk.kind}>", 32), blk.role, blk.kind, _fmt(blk.turn),
            str(blk.status) + ("*" if blk.protected else ""), _fmt(blk.tokens), _fmt(blk.tokens_sent), str(blk.reason),
        ])
    out.append("")
    out += _table(["POS", "BLOCK", "ROLE", "KIND", "TURN", "STATUS", "TOKENS", "SENT", "REASON"], rows,
                  right={0, 4, 6, 7})
    out.append("  (* protected)")
    return out


AGENT_PRUNED_SHOWN = 5  # tool outputs the agent pruned itself named on the line (the rest counted)


def agent_pruned_lines(audit: RequestAudit, thread: Thread) -> list[str]:
    """The tool outputs the agent itself had pruned before the request (recorded; reason
    `pruned_by_agent`), each with when, on one line (none where there are none)."""
    ids = [b.message_id for b in audit.blocks if b.reason == "pruned_by_agent" and b.message_id]
    if not ids:
        return []
    wanted = set(ids)
    when = {m.id: m.meta.get("pruned_at") for m in thread.messages if m.id in wanted}
    named = [f"{safe_line(i, 40)} at {safe_line(str(when.get(i) or 'an unknown time'), 40)}"
             for i in ids[:AGENT_PRUNED_SHOWN]]
    more = f" and {len(ids) - AGENT_PRUNED_SHOWN} more" if len(ids) > AGENT_PRUNED_SHOWN else ""
    return [f"  pruned by the agent (recorded): {len(ids)} tool output{'' if len(ids) == 1 else 's'}: "
            f"{', '.join(named)}{more}"]


def _dollars(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}"


def cost_lines(sim: Simulation) -> list[str]:
    """The thread's bill, replayed and recorded, and its prompt cache (none when not modelled)."""
    sent = [r for r in sim.requests if not r.failed]
    if not sim.requests or all(r.budget.cache_read_tokens is None for r in sim.requests):
        return []
    read = sum(r.budget.cache_read_tokens or 0 for r in sent)
    prompt = sum(billed_prompt_tokens(r.budget) for r in sent)
    costs = [r.budget.cost for r in sim.requests]
    recorded = [r.budget.recorded_cost for r in sim.requests]
    breaks = Counter(r.budget.cache_break.cause for r in sim.requests if r.budget.cache_break is not None)
    line = (f"cost {_dollars(None if None in costs else sum(costs))}"
            f" (recorded {_dollars(None if None in recorded else sum(recorded))}), "
            f"cache read {read / prompt:.0%} of prompt tokens, " if prompt else "cache read -, ")
    line += f"{sum(breaks.values())} cache breaks" + (
        " (" + ", ".join(f"{c} {n}" for c, n in sorted(breaks.items())) + ")" if breaks else "")
    return [line]


def subagent_lines(totals: SubagentTotals | None) -> list[str]:
    """The sub-agents' figures, apart from the thread's own (none for a thread without sub-agents)."""
    if totals is None:
        return []
    n = totals.threads
    line = (f"sub-agents (not in the figures above): {totals.requests:,} requests in {n} sub-agent"
            f"{'' if n == 1 else 's'}, {_fmt(totals.prompt_tokens)} billed prompt tokens, cost "
            f"{_dollars(totals.cost)} (recorded {_dollars(totals.recorded_cost)})")
    if totals.unreadable:
        line += f"; {len(totals.unreadable)} could not be replayed: {', '.join(map(safe_line, totals.unreadable))}"
    out = [line]
    for a in totals.agents:
        named = f" ({safe_line(a.task_description, 60)})" if a.task_description else ""
        out.append(f"  {safe_line(a.thread_id)}{named}: {a.requests:,} requests, {_fmt(a.prompt_tokens)} billed "
                   f"prompt tokens, cost {_dollars(a.cost)} (recorded {_dollars(a.recorded_cost)})")
    return out


def render_simulation(sim: Simulation, thread: Thread, *, timeline: bool = False, request: int | None = None,
                      compactions: str | None = None, status: str | None = None, calibration=None,
                      subagents: SubagentTotals | None = None) -> str:
    own = len(sim.requests)
    requests = f"{own} requests" + (f" + {subagents.requests:,} in {subagents.threads} sub-agent"
                                    f"{'' if subagents.threads == 1 else 's'}" if subagents is not None else "")
    head = [
        f"thread {safe_line(sim.thread_id)}: {safe_line(thread.title, 80)}",
        f"profile {sim.profile}, tokenizer {sim.tokenizer} ({'approximate' if sim.approximate else 'exact'}), "
        f"{requests}, {sum(1 for r in sim.requests if r.compaction)} compactions, "
        f"{sum(1 for r in sim.requests if r.failed)} failed"
        + (f", compactions {compactions}" if compactions else ""),
        NUMBERING,
        *cost_lines(sim),
        *subagent_lines(subagents),
    ]
    if status:
        head.append(status)
    if sim.rules:  # the agent versions' rules (Claude Code, by the CLI version of each request)
        names = list(dict.fromkeys(sim.rules))
        changes = [r.index for r in sim.requests[1:] if sim.rules[r.index] != sim.rules[r.index - 1]]
        head.append(f"rules: {', '.join(names)}" + (f" (changes at request {', '.join(map(str, changes))})"
                                                     if changes else ""))
    if calibration is not None:
        head.append(f"calibration: {calibration.fit.describe()}")
    head.append("")
    if request is not None:
        return "\n".join(head + request_lines(sim.requests[request], thread))
    if timeline or not sim.requests:
        return "\n".join(head + timeline_lines(sim))
    # Default: the timeline, then the last request in full.
    return "\n".join(head + timeline_lines(sim) + [""] + request_lines(sim.requests[-1], thread))
