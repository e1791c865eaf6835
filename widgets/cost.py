"""One request's prompt cache and cost: the rows the Budget pane shows among its facts."""

from __future__ import annotations

from rich.text import Text

from inspector.pipeline.accounting import billed_prompt_tokens
from inspector.pipeline.audit import RequestAudit
from widgets.names import MessageNames
from widgets.safe import safe_line

CAUSE_TEXT = {  # what broke the cache, {where} the first changed block
    "compaction": "the history was replaced from {where}",
    "pruning": "{where} was pruned or dropped",
    "summary_injected": "the injected summaries changed at {where}",
    "what_if_edit": "{where} changed",
    "lifetime_expired": "the cache lifetime expired",
}


def _dollars(value: float | None) -> str:
    if value is None:
        return "-"
    return f"${value:,.4f}" if abs(value) < 1 else f"${value:,.2f}"


def bill_line(request: RequestAudit) -> Text | None:
    """One line: what the provider bills for the request, the cost with its compaction's summarization
    call, the share read from the cache, and the recorded cost beside (None where there is no bill)."""
    b = request.budget
    if b.cache_read_tokens is None or request.failed:
        return None
    billed = billed_prompt_tokens(b)
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append("Bill ", style="bold")
    line.append(f"{billed:,} tokens · ")
    line.append(_dollars(b.cost) if b.cost is not None else "no price", style="ci.recorded.strong")
    if b.summarization is not None and b.summarization.cost is not None:
        line.append(f" (summarization {_dollars(b.summarization.cost.total)})")
    if billed:
        line.append(f" · {b.cache_read_tokens / billed:.0%} read from the cache")
    if b.recorded_cost is not None:
        line.append(f" · recorded {_dollars(b.recorded_cost)}", style="ci.recorded")
    return line


def pricing_line(note: str) -> Text:
    """The bill line while the request's prices are being computed (`note`: "pricing…", or why not)."""
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append("Bill ", style="bold")
    line.append(safe_line(note, 160), style="dim")
    return line


def cost_rows(request: RequestAudit, names: MessageNames | None = None) -> list[tuple[str, Text]]:
    """The Budget pane's facts about the request's bill: the replayed cost and its split, the
    recorded cost, the compaction's summarization call and the cache break (the changed block named
    by `names`). Rows of the facts table: the pane is redrawn on every step, and a table of its own
    costs a layout pass."""
    b = request.budget
    if b.cache_read_tokens is None:
        return [("Cost", Text("the prompt cache is not modelled for this replay", style="dim"))]
    billed = billed_prompt_tokens(b) if not request.failed else 0
    write = b.cache_write_tokens or 0
    uncached = max(0, billed - b.cache_read_tokens - write)
    split = b.cost_split
    call = b.summarization
    text = Text()
    text.append(_dollars(b.cost) if b.cost is not None else "no price for this model", style="ci.recorded.strong")
    if split is not None:
        text.append(f" = input {uncached:,} {_dollars(split.input)} + cache write {write:,} "
                    f"{_dollars(split.cache_write)} + cache read {b.cache_read_tokens:,} "
                    f"{_dollars(split.cache_read)} + output {_dollars(split.output)}")
        if call is not None:
            text.append(" + the summarization call below")
    else:
        text.append(f" (input {uncached:,}, cache write {write:,}, cache read {b.cache_read_tokens:,})")
    if b.recorded_cost is not None:
        text.append(f"; recorded {_dollars(b.recorded_cost)}", style="ci.recorded")
        if call is not None:
            text.append(" (no summarization call: the transcript records none)", style="dim")
    if b.recorded_cache_read_tokens is not None and b.recorded_prompt_tokens:
        text.append(f" ({b.recorded_cache_read_tokens / b.recorded_prompt_tokens:.0%} read recorded"
                    + (f", {b.cache_read_tokens / billed:.0%} replayed)" if billed else ")"), style="dim")
    rows = [("Cost", text)]
    if call is not None:
        line = Text(_dollars(call.cost.total) if call.cost is not None else "no price for its model",
                    style="ci.recorded.strong")
        line.append(f" = {call.input_tokens:,} sent to summarize")
        if call.cache_read_tokens:
            line.append(f" ({call.cache_read_tokens:,} read from the cache)")
        line.append(f" + the summary, {call.output_tokens:,} out")
        if call.model:
            line.append(f" ({safe_line(call.model, 40)})", style="dim")
        if b.window and call.input_tokens > b.window:
            # the profile prices the whole span; no such call fits the window: said, not hidden
            line.append(f"; over the {b.window:,}-token window: no one call sends it (how the agent splits it is "
                        "not modelled)", style="ci.warning")
        rows.append(("Summarization", line))
    brk = b.cache_break
    if brk is not None:
        where = "the system prompt" if brk.position is None else f"block {brk.position}"
        if brk.message_id:
            named = names.name(brk.message_id, 40) if names is not None else ""
            where += f" ({named or safe_line(brk.message_id, 24)})"
        what = CAUSE_TEXT.get(brk.cause, "{where} changed").format(where=where)
        line = Text(f"{brk.cause}: {what}; {brk.lost_tokens:,} cached tokens lost"
                    + (f", {_dollars(brk.cost)}" if brk.cost is not None else ""), style="ci.caution.strong")
        rows.append(("Cache break", line))
    return rows
