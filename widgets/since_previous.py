"""The "Since N-1" pane: what came in, what went out and the token delta since the previous request."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from inspector.compare.between_requests import RequestStep, StepBlock
from inspector.pipeline.audit import RequestAudit
from widgets.budget import STATUS_STYLES
from widgets.names import MessageNames
from widgets.palette import ensure_names
from widgets.safe import safe_line

SHOWN = 40  # blocks listed per section (the rest are counted)


def _signed(value: int) -> Text:
    style = "ci.error" if value > 0 else "ci.success" if value < 0 else "dim"
    return Text(f"{value:+,}", style=style, justify="right")


def _section(title: str, rows: tuple[StepBlock, ...], *, new: bool, names: MessageNames | None) -> Group:
    table = Table(box=None, padding=(0, 1), show_header=bool(rows), header_style="bold dim", expand=False)
    table.add_column("block", no_wrap=True, overflow="ellipsis", max_width=42)
    table.add_column("turn", no_wrap=True, justify="right", min_width=4)
    table.add_column("status", no_wrap=True, min_width=10 if new else 20)
    table.add_column("sent", justify="right", no_wrap=True, min_width=6 if new else 15)
    table.add_column("reason", no_wrap=True, overflow="ellipsis", max_width=22)
    table.add_column("id", no_wrap=True, overflow="ellipsis", max_width=12, style="dim")
    for step in rows[:SHOWN]:
        b = step.block
        status = Text()
        if not new and step.before is not None:
            status.append(step.before, style=STATUS_STYLES.get(step.before, ""))
            status.append(" → ")
        status.append(step.after, style=STATUS_STYLES.get(step.after, ""))
        sent = f"{b.tokens_sent:,}" if new else f"{step.tokens_before:,} → {b.tokens_sent:,}"
        name = names.name(b.message_id, 44) if names is not None and b.message_id else ""
        label = name or (f"({b.kind})" if b.message_id is None else f"{b.role} {b.message_id}")
        table.add_row(Text(safe_line(label, 48)), "-" if b.turn is None else str(b.turn), status, sent,
                      Text(safe_line(b.reason, 40), style="dim"), Text(safe_line(b.message_id or "", 40)))
    if len(rows) > SHOWN:
        table.add_row(Text(f"… {len(rows) - SHOWN} more", style="dim"), "", "", "", "", "")
    head = Text(f"{title}: {len(rows)}", style="bold")
    if not rows:
        head.append("  none", style="dim")
    return Group(head, table)


class RequestStepView(Static):
    """Request N against request N-1 of the same replay (request numbers 1-based, as on screen)."""

    DEFAULT_CSS = """
    RequestStepView { padding: 0 1; height: auto; }
    """

    def on_mount(self) -> None:
        ensure_names(self.app.console)  # the style names of widgets/palette.py resolve in any app

    def show(self, step: RequestStep | None, request: RequestAudit | None, names: MessageNames | None = None) -> None:
        if request is None:
            self.update(Text("No request selected.", style="dim"))
            return
        if step is None:
            self.update(Text(f"Request {request.index + 1} is the first: nothing before it to compare with.",
                             style="dim"))
            return
        head = Text()
        head.append(f"Request {step.index + 1} against request {step.index}", style="bold")
        deltas = Table.grid(padding=(0, 2))
        deltas.add_column(style="dim")
        deltas.add_column(justify="right")
        if step.billed_delta is not None:  # what the provider bills (calibrated), then the replay's own count
            deltas.add_row("Prompt tokens (billed)", _signed(step.billed_delta))
            deltas.add_row("Prompt tokens (replayed)", _signed(step.prompt_delta))
        else:
            deltas.add_row("Prompt tokens", _signed(step.prompt_delta))
        deltas.add_row("History sent", _signed(step.history_delta))
        deltas.add_row("Injected summaries", _signed(step.summary_delta))
        if step.system_delta:
            deltas.add_row("System + tools", _signed(step.system_delta))
        deltas.add_row("Sent by what came in", Text(f"+{step.sent_in:,}", justify="right"))
        deltas.add_row("No longer sent by what went out", Text(f"-{step.sent_out:,}", justify="right"))
        parts: list = [head, deltas, Text("")]
        parts.append(_section("Came in", step.came_in, new=True, names=names))
        parts.append(Text(""))
        parts.append(_section("Went out (excluded, pruned, summarized)", step.went_out, new=False, names=names))
        if step.came_back:
            parts.append(Text(""))
            parts.append(_section("Came back", step.came_back, new=False, names=names))
        if step.gone:
            gone = Text(f"\nNo longer in the prompt ({len(step.gone)}): ", style="bold")
            gone.append(", ".join(safe_line(b.summary_id or b.kind, 30) for b in step.gone[:SHOWN]), style="dim")
            parts.append(gone)
        self.update(Group(*parts))
