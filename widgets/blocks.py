"""Every block of one request in a Line-API table, and the selected block's content in a detail pane."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from inspector.model import Message, Summary
from inspector.pipeline.audit import BlockAudit, BlockStatus, RequestAudit
from widgets.budget import STATUS_STYLES
from widgets.linetable import Column, LineTable
from widgets.safe import literal, safe_line

CLEARED_PLACEHOLDER = "[Tool output cleared]"
DETAIL_LIMIT = 20_000  # characters of content shown; the rest is elided with a note
BLOCK_COLUMNS = [
    Column("#", 5), Column("pos", 4), Column("role", 9), Column("turn", 4), Column("tokens", 7, "right"),
    Column("sent", 7, "right"), Column("status", 12), Column("reason", 20),
]


def status_text(block: BlockAudit, lead: str = "") -> Text:
    text = Text(lead + str(block.status), style=STATUS_STYLES.get(str(block.status), ""))
    if block.protected:
        text.append(" ⚑", style="bold #ffd75f")
    return text


def role_label(block: BlockAudit) -> str:
    """The role, or the kind for non-message blocks (character, lorebook, memory, summary)."""
    return block.role if block.kind == "message" else block.kind


def block_row(index: int, block: BlockAudit) -> tuple:
    """The table cells of one block; every untrusted value wrapped in Text (never markup)."""
    return (
        Text(str(index + 1), style="dim"),
        Text("-" if block.position is None else str(block.position)),
        Text(safe_line(role_label(block), 9)),
        Text("-" if block.turn is None else str(block.turn)),
        Text(f"{block.tokens:,}", justify="right"),
        Text(f"{block.tokens_sent:,}", justify="right"),
        status_text(block),
        Text(safe_line(block.reason, 20), style="dim"),
    )


def _clip(content: str) -> Text:
    if len(content) <= DETAIL_LIMIT:
        return literal(content)
    text = literal(content[:DETAIL_LIMIT])
    text.append(f"\n… {len(content) - DETAIL_LIMIT:,} more characters not shown", style="dim italic")
    return text


def block_detail(
    block: BlockAudit,
    request: RequestAudit,
    messages: Mapping[str, Message],
    summaries: Mapping[str, Summary],
    partners: Mapping[str, tuple[str, ...]] | None = None,
) -> Text:
    """What the detail pane shows for one block."""
    out = Text()
    out.append(f"{safe_line(block.message_id or '(synthetic block)', 80)}\n", style="bold")
    out.append(f"{block.role} · {block.kind} · turn {block.turn if block.turn is not None else '-'}  ", style="dim")
    out.append_text(status_text(block))
    out.append(f"  {block.reason}\n", style="dim")
    out.append(f"tokens {block.tokens:,} · sent {block.tokens_sent:,}", style="dim")
    if block.position is not None:
        out.append(f" · position {block.position} in the prompt", style="dim")
    out.append("\n\n")
    message = messages.get(block.message_id) if block.message_id else None
    summary = summaries.get(block.summary_id) if block.summary_id else None
    if block.message_id is None:
        if summary is not None:
            out.append("Summary text sent:\n", style="bold #d787ff")
            out.append_text(_clip(summary.injected_text()))
        else:
            out.append("Synthetic block (no stored message).", style="dim")
        return out
    if block.status is BlockStatus.PRUNED:
        out.append("Sent instead:\n", style="bold #d7af5f")
        out.append(CLEARED_PLACEHOLDER + "\n\n", style="#d7af5f")
        out.append("Original:\n", style="bold")
    elif block.status is BlockStatus.TRUNCATED:
        out.append(f"Truncated to {block.tokens_sent:,} of {block.tokens:,} tokens. Original:\n", style="bold #ff8700")
    elif block.status is BlockStatus.SUMMARIZED:
        if summary is not None:
            out.append(f"Covered by summary {safe_line(summary.id, 40)} ", style="bold #d787ff")
            out.append(f"({safe_line(summary.first_message_id, 30)} .. {safe_line(summary.last_message_id, 30)}):\n")
            out.append_text(_clip(summary.summary))
            out.append("\n\nOriginal:\n", style="bold")
        else:
            out.append("Summarized (summary not in this replay's chain). Original:\n", style="bold #d787ff")
    elif block.status is BlockStatus.EXCLUDED:
        out.append("Not sent. Original:\n", style="bold #ff5f5f")
    if message is None:
        out.append("(message not found in the thread)", style="dim")
        return out
    if message.content:
        out.append_text(_clip(message.content))
    for call in message.tool_calls:
        out.append(f"\n→ tool call {safe_line(call.id, 40)}: {safe_line(call.name, 60)} ", style="#5fafd7")
        out.append_text(_clip(call.arguments_json()))
    partner_ids = set((partners or {}).get(block.message_id, ()))
    group_blocks = [
        b for b in request.blocks
        if b is not block and (b.message_id in partner_ids or (block.group is not None and b.group == block.group))
    ]
    if group_blocks:
        out.append("\n\nTool group partners:\n", style="bold #5fafd7")
        for partner in group_blocks:
            out.append(f"  {safe_line(partner.message_id or '-', 40)} {partner.role} ")
            out.append_text(status_text(partner))
            out.append(f" {partner.tokens:,} tokens\n", style="dim")
    return out


class BlocksView(Horizontal):
    """The Blocks pane."""

    DEFAULT_CSS = """
    BlocksView { height: 1fr; }
    BlocksView > LineTable { width: 78; height: 1fr; }
    BlocksView > #block-detail-scroll { width: 1fr; min-width: 34; height: 1fr; border-left: solid $primary-darken-2; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.request: RequestAudit | None = None
        self.messages: Mapping[str, Message] = {}
        self.summaries: Mapping[str, Summary] = {}
        self.partners: Mapping[str, tuple[str, ...]] = {}

    def compose(self) -> ComposeResult:
        yield LineTable(BLOCK_COLUMNS, id="blocks-table")
        with VerticalScroll(id="block-detail-scroll"):
            yield Static(Text("Select a block to see its content.", style="dim"), id="block-detail", markup=False)

    @property
    def table(self) -> LineTable:
        return self.query_one("#blocks-table", LineTable)

    def show(
        self,
        request: RequestAudit | None,
        messages: Mapping[str, Message],
        summaries: Mapping[str, Summary],
        partners: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        # Keep the selected message selected across requests, so stepping shows how its status changes.
        keep_row = 0
        if self.request is not None and request is not None and self.request.blocks:
            old = self.request.blocks[min(self.table.cursor_row, len(self.request.blocks) - 1)]
            keep_row = next(
                (i for i, b in enumerate(request.blocks) if b.message_id == old.message_id and b.kind == old.kind),
                min(self.table.cursor_row, max(0, len(request.blocks) - 1)),
            )
        self.request = request
        self.messages = messages
        self.summaries = summaries
        self.partners = partners or {}
        table = self.table
        if request is None:
            table.set_rows(0, lambda i: ())
            self._detail(Text("No request.", style="dim"))
            return
        blocks = request.blocks
        table.set_rows(len(blocks), lambda i: block_row(i, blocks[i]), cursor=keep_row)
        if blocks:
            self.show_detail(table.cursor_row)

    def select_block(self, index: int) -> None:
        self.table.move_cursor(row=index, animate=False)
        self.show_detail(index)

    def show_detail(self, index: int) -> None:
        if self.request is None or not (0 <= index < len(self.request.blocks)):
            return
        block = self.request.blocks[index]
        self._detail(block_detail(block, self.request, self.messages, self.summaries, self.partners))

    def _detail(self, text: Text) -> None:
        self.query_one("#block-detail", Static).update(text)
        self.query_one("#block-detail-scroll", VerticalScroll).scroll_home(animate=False)

    def on_line_table_row_highlighted(self, event: LineTable.RowHighlighted) -> None:
        event.stop()
        self.show_detail(event.cursor_row)
