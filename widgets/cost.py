"""One request's prompt cache and cost: the split the Budget pane shows under the bar."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from inspector.pipeline.accounting import billed_prompt_tokens
from inspector.pipeline.audit import RequestAudit
from widgets.safe import safe_line

CAUSE_TEXT = {
    "compaction": "compaction replaced the history",
    "pruning": "an earlier block was pruned or dropped",
    "summary_injected": "the injected summaries changed",
    "what_if_edit": "an earlier block changed",
    "lifetime_expired": "the cache lifetime expired",
}


def _dollars(value: float | None) -> str:
    if value is None:
        return "-"
    return f"${value:,.4f}" if abs(value) < 1 else f"${value:,.2f}"


def cost_table(request: RequestAudit) -> Table | Text:
    """Uncached input, cache writes, cache reads and output: tokens and dollars; the break, if any."""
    b = request.budget
    if b.cache_read_tokens is None:
        return Text("Cost: the prompt cache is not modelled for this replay", style="dim")
    table = Table(box=None, padding=(0, 1), show_header=True, header_style="bold dim")
    table.add_column("Cost")
    table.add_column("Tokens", justify="right")
    table.add_column("Dollars", justify="right")
    billed = billed_prompt_tokens(b) if not request.failed else 0
    write = b.cache_write_tokens or 0
    uncached = max(0, billed - b.cache_read_tokens - write)
    split = b.cost_split
    table.add_row("Input (uncached)", f"{uncached:,}", _dollars(split.input if split else None))
    table.add_row("Cache write", f"{write:,}", _dollars(split.cache_write if split else None))
    table.add_row("Cache read", f"{b.cache_read_tokens:,}", _dollars(split.cache_read if split else None))
    table.add_row("Output", "", _dollars(split.output if split else None))
    total = Text(_dollars(b.cost), style="bold")
    share = f"{b.cache_read_tokens / billed:.0%} read" if billed else ""
    table.add_row(Text("Replayed", style="bold"), share, total)
    if b.recorded_cost is not None or b.recorded_cache_read_tokens is not None:
        recorded_share = ""
        if b.recorded_cache_read_tokens is not None and b.recorded_prompt_tokens:
            recorded_share = f"{b.recorded_cache_read_tokens / b.recorded_prompt_tokens:.0%} read"
        table.add_row(Text("Recorded", style="#ffd75f"), recorded_share, _dollars(b.recorded_cost))
    if b.cost is None:
        table.add_row(Text("no price for this request's model", style="dim"), "", "")
    brk = b.cache_break
    if brk is not None:
        where = "the system prompt" if brk.position is None else f"block {brk.position}"
        if brk.message_id:
            where += f" ({safe_line(brk.message_id, 24)})"
        table.add_row(Text(f"Cache break ({brk.cause})", style="bold #ff8700"), f"{brk.lost_tokens:,} lost",
                      _dollars(brk.cost))
        table.add_row(Text(f"{CAUSE_TEXT.get(brk.cause, brk.cause)} at {where}", style="#ff8700"), "", "")
    return table
