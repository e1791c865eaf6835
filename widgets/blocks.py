"""Every block of one request in a Line-API table, and the selected block's content in a detail pane."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from inspector.model import Message, Role, Summary
from inspector.pipeline.audit import BlockAudit, BlockStatus, RequestAudit
from widgets.budget import STATUS_STYLES
from widgets.linetable import Column, LineTable
from widgets.meanings import reason_meaning
from widgets.names import MessageNames
from widgets.palette import ensure_names
from widgets.safe import literal, safe_line

CLEARED_PLACEHOLDER = "[Tool output cleared]"
DETAIL_LIMIT = 20_000  # characters of content shown; the rest is elided with a note
REASON_WIDTH = 12  # the reason column is as wide as the longest reason shown (never cut), at least this
PREVIEW_CHARS = 120


def block_columns(reason_width: int = REASON_WIDTH, *, by_tokens: bool = False) -> list[Column]:
    return [
        Column("#", 5), Column("pos", 4), Column("role", 9), Column("turn", 4),
        Column("tokens▼" if by_tokens else "tokens", 7, "right"), Column("sent", 7, "right"), Column("status", 12),
        Column("reason", max(REASON_WIDTH, reason_width)), Column("name / preview", 0),
    ]


BLOCK_COLUMNS = block_columns()


def block_preview(block: BlockAudit, messages: Mapping[str, Message], summaries: Mapping[str, Summary],
                  names: MessageNames | None = None) -> str:
    """One line naming the block: the tool and what it was called on (a tool result by the call it
    answers: `Read(cmd/…/manual_commit.go) result`), then the first words of its text; the summary a
    synthetic block carries. The UUID is in the block's detail."""
    if block.message_id is None:
        summary = summaries.get(block.summary_id) if block.summary_id else None
        lead = f"{block.kind} {summary.id}: " if summary is not None else f"{block.kind}: "
        return safe_line(lead + (summary.summary if summary is not None else ""), PREVIEW_CHARS)
    message = messages.get(block.message_id)
    if message is None:
        return ""
    if names is not None and (message.tool_calls or message.role is Role.TOOL or message.tool_call_id):
        name = names.name(block.message_id, PREVIEW_CHARS)
        text = message.content[:PREVIEW_CHARS].strip()
        return safe_line(f"{name}: {text}" if text else name, PREVIEW_CHARS)
    parts = []
    if message.name and message.tool_call_id:
        parts.append(f"{message.name} →")
    for call in message.tool_calls:
        parts.append(f"{call.name}({call.arguments_json()[:60]})")
    if message.content:
        parts.append(message.content[:PREVIEW_CHARS])
    return safe_line(" ".join(parts), PREVIEW_CHARS)


def status_text(block: BlockAudit, lead: str = "") -> Text:
    text = Text(lead + str(block.status), style=STATUS_STYLES.get(str(block.status), ""))
    if block.protected:
        text.append(" ⚑", style="ci.recorded.strong")
    return text


def role_label(block: BlockAudit) -> str:
    """The role, or the kind for non-message blocks (character, lorebook, memory, summary)."""
    return block.role if block.kind == "message" else block.kind


def block_row(index: int, block: BlockAudit, preview: str = "") -> tuple:
    """The table cells of one block; every untrusted value wrapped in Text (never markup)."""
    reason = safe_line(block.reason, 60)
    return (
        Text(str(index + 1), style="dim"),
        Text("-" if block.position is None else str(block.position)),
        Text(safe_line(role_label(block), 9)),
        Text("-" if block.turn is None else str(block.turn)),
        Text(f"{block.tokens:,}", justify="right"),
        Text(f"{block.tokens_sent:,}", justify="right"),
        status_text(block),
        Text(reason, style="dim"),
        Text(preview, style="dim"),
    )


def _clip(content: str) -> Text:
    if len(content) <= DETAIL_LIMIT:
        return literal(content)
    text = literal(content[:DETAIL_LIMIT])
    text.append(f"\n… {len(content) - DETAIL_LIMIT:,} more characters not shown", style="dim italic")
    return text


def notification_origin(message: Message) -> Text | None:
    """Where a `<task-notification>` message (a background task's result, injected by Claude Code) came
    from: its sub-agent thread as the import linked it (`meta["task_notification"]`); None for others."""
    link = message.meta.get("task_notification")
    if not isinstance(link, Mapping):
        return None
    task = link.get("task_id")
    status = link.get("status")
    text = Text("Background task result", style="bold")
    if isinstance(task, str):
        text.append(f" of task {safe_line(task, 40)}")
    if isinstance(status, str):
        text.append(f" ({safe_line(status, 20)})")
    thread = link.get("subagent_thread_id")
    if isinstance(thread, str):
        text.append(": from the sub-agent thread ")
        text.append(safe_line(thread, 120), style="bold")
    else:
        text.append(": no sub-agent thread of this import ran it (a background shell, or its records are absent)",
                    style="dim")
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
    out.append(f"{block.role} · {block.kind} · turn {block.turn if block.turn is not None else '-'}\n", style="dim")
    out.append_text(status_text(block))
    if block.protected:
        out.append(" protected", style="ci.recorded")
    if block.reason != str(block.status):  # summarized / summarized says it once
        out.append(" · ")
        out.append(safe_line(block.reason, 60), style="bold")
    out.append(f": {reason_meaning(block.reason)}\n", style="dim")
    out.append(f"tokens {block.tokens:,} · sent {block.tokens_sent:,}", style="dim")
    if block.position is not None:
        out.append(f" · position {block.position} in the prompt", style="dim")
    out.append("\n\n")
    message = messages.get(block.message_id) if block.message_id else None
    summary = summaries.get(block.summary_id) if block.summary_id else None
    if block.message_id is None:
        if summary is not None:
            out.append("Summary text sent:\n", style="ci.compaction.strong")
            out.append_text(_clip(summary.injected_text()))
        else:
            out.append("Synthetic block (no stored message).", style="dim")
        return out
    if block.status is BlockStatus.PRUNED and block.reason == "pruned_by_agent":
        when = message.meta.get("pruned_at") if message is not None else None
        out.append("Pruned by the agent itself" + (f" at {safe_line(str(when), 40)}" if when else ""), style="bold")
        out.append(" (recorded): it sent its placeholder instead from then on. Original:\n")
    elif block.status is BlockStatus.PRUNED:
        out.append("Sent instead:\n", style="ci.pruned.strong")
        out.append(CLEARED_PLACEHOLDER + "\n\n", style="ci.pruned")
        out.append("Original:\n", style="bold")
    elif block.status is BlockStatus.TRUNCATED:
        out.append(f"Truncated to {block.tokens_sent:,} of {block.tokens:,} tokens. Original:\n", style="ci.caution.strong")
    elif block.status is BlockStatus.SUMMARIZED:
        if summary is not None:
            out.append(f"Covered by summary {safe_line(summary.id, 40)} ", style="ci.compaction.strong")
            out.append(f"({safe_line(summary.first_message_id, 30)} .. {safe_line(summary.last_message_id, 30)}):\n")
            out.append_text(_clip(summary.summary))
            out.append("\n\nOriginal:\n", style="bold")
        else:
            out.append("Summarized (summary not in this replay's chain). Original:\n", style="ci.compaction.strong")
    elif block.status is BlockStatus.EXCLUDED:
        out.append("Not sent. Original:\n", style="ci.error.strong")
    if message is None:
        out.append("(message not found in the thread)", style="dim")
        return out
    origin = notification_origin(message)
    if origin is not None:
        out.append_text(origin)
        out.append("\n\n")
    if message.content:
        out.append_text(_clip(message.content))
    for call in message.tool_calls:
        out.append(f"\n→ tool call {safe_line(call.id, 40)}: {safe_line(call.name, 60)} ", style="ci.info")
        out.append_text(_clip(call.arguments_json()))
    partner_ids = set((partners or {}).get(block.message_id, ()))
    group_blocks = [
        b for b in request.blocks
        if b is not block and (b.message_id in partner_ids or (block.group is not None and b.group == block.group))
    ]
    if group_blocks:
        out.append("\n\nTool group partners:\n", style="ci.info.strong")
        for partner in group_blocks:
            out.append(f"  {safe_line(partner.message_id or '-', 40)} {partner.role} ")
            out.append_text(status_text(partner))
            out.append(f" {partner.tokens:,} tokens\n", style="dim")
    return out


class BlocksView(Horizontal):
    """The Blocks pane: the table (thread order, or `s` for the largest first) and the selected block's detail."""

    # The detail goes under the table: the table keeps its width for the name / preview column and the
    # detail gets whole lines of content.
    DEFAULT_CSS = """
    BlocksView { height: 1fr; layout: vertical; }
    BlocksView > LineTable { width: 1fr; height: 3fr; }
    BlocksView > #block-detail-scroll { width: 1fr; height: 2fr; border-top: solid $primary-darken-2; padding: 0 1; }
    """
    COMPACT_BELOW = 100  # table width under which the pos and turn columns are hidden (the detail has them)

    BINDINGS = [Binding("s", "toggle_sort", "Sort blocks by tokens", show=False, id="blocks.toggle-sort")]

    def on_mount(self) -> None:
        ensure_names(self.app.console)  # the style names of widgets/palette.py resolve in any app

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.request: RequestAudit | None = None
        self.messages: Mapping[str, Message] = {}
        self.summaries: Mapping[str, Summary] = {}
        self.partners: Mapping[str, tuple[str, ...]] = {}
        self.by_tokens = False
        self.order: list[int] | None = None  # table row -> block index when sorted by tokens
        self.names: MessageNames | None = None
        # (message id, text): a lost fact marked in its block's detail, when that block is shown
        self.highlight: tuple[str, str] | None = None

    def compose(self) -> ComposeResult:
        yield LineTable(BLOCK_COLUMNS, id="blocks-table")
        with VerticalScroll(id="block-detail-scroll"):
            yield Static(Text("Select a block to see its content.", style="dim"), id="block-detail", markup=False)

    @property
    def table(self) -> LineTable:
        return self.query_one("#blocks-table", LineTable)

    def block_index(self, row: int) -> int:
        return self.order[row] if self.order is not None and 0 <= row < len(self.order) else row

    def row_of(self, index: int) -> int:
        return self.order.index(index) if self.order is not None and index in self.order else index

    def selected_block(self) -> BlockAudit | None:
        if self.request is None or not self.request.blocks:
            return None
        index = self.block_index(min(self.table.cursor_row, len(self.request.blocks) - 1))
        return self.request.blocks[index]

    def show(
        self,
        request: RequestAudit | None,
        messages: Mapping[str, Message],
        summaries: Mapping[str, Summary],
        partners: Mapping[str, tuple[str, ...]] | None = None,
        names: MessageNames | None = None,
    ) -> None:
        # Keep the selected message selected across requests, so stepping shows how its status changes.
        old = self.selected_block() if request is not None else None
        keep = 0
        if old is not None and request is not None:
            keep = next(
                (i for i, b in enumerate(request.blocks) if b.message_id == old.message_id and b.kind == old.kind),
                min(self.block_index(self.table.cursor_row), max(0, len(request.blocks) - 1)),
            )
        self.request = request
        self.messages = messages
        self.summaries = summaries
        self.partners = partners or {}
        self.names = names
        self._fill(keep)

    def _fill(self, keep: int) -> None:
        table, request = self.table, self.request
        if request is None:
            table.set_rows(0, lambda i: ())
            self._detail(Text("No request.", style="dim"))
            return
        blocks = request.blocks
        self.order = sorted(range(len(blocks)), key=lambda i: (-blocks[i].tokens, i)) if self.by_tokens else None
        widest = max((len(r) for r in {b.reason for b in blocks}), default=0)
        table.set_columns(block_columns(min(widest, 60), by_tokens=self.by_tokens), self._hidden())
        order, messages, summaries, names = self.order, self.messages, self.summaries, self.names

        def row(r: int) -> tuple:
            i = order[r] if order is not None else r
            return block_row(i, blocks[i], block_preview(blocks[i], messages, summaries, names))

        table.set_rows(len(blocks), row, cursor=self.row_of(keep))
        if blocks:
            self.show_detail(table.cursor_row)

    def _hidden(self) -> frozenset[int]:
        return frozenset((1, 3)) if 0 < self.table.size.width < self.COMPACT_BELOW else frozenset()

    def on_resize(self) -> None:
        self.table.set_columns(self.table.columns, self._hidden())

    def action_toggle_sort(self) -> None:
        """Thread order, or the largest blocks (full tokens) first; the cursor goes to the top (the
        largest block, or the first one)."""
        self.by_tokens = not self.by_tokens
        blocks = self.request.blocks if self.request is not None else ()
        top = min(range(len(blocks)), key=lambda i: (-blocks[i].tokens, i)) if self.by_tokens and blocks else 0
        self._fill(top)

    def select_block(self, index: int, highlight: str | None = None) -> None:
        """Select the block at `index` of the request's blocks (in thread order, whatever the sort), scrolled
        into view; `highlight`: a text marked in its detail (a lost fact)."""
        message_id = self.request.blocks[index].message_id if self.request is not None else None
        self.highlight = (message_id, highlight) if highlight and message_id else None
        row = self.row_of(index)
        self.table.move_cursor(row=row, animate=False)
        self.table.call_after_refresh(self.table.scroll_to_cursor)  # once the table has its size
        self.show_detail(row)

    def show_detail(self, row: int) -> None:
        if self.request is None or not (0 <= row < len(self.request.blocks)):
            return
        block = self.request.blocks[self.block_index(row)]
        detail = block_detail(block, self.request, self.messages, self.summaries, self.partners)
        mark = self.highlight[1] if self.highlight and self.highlight[0] == block.message_id else None
        if mark:
            detail.highlight_words([mark], style="ci.found", case_sensitive=False)
        self._detail(detail, mark)

    def _detail(self, text: Text, highlight: str | None = None) -> None:
        self.query_one("#block-detail", Static).update(text)
        scroll = self.query_one("#block-detail-scroll", VerticalScroll)
        at = text.plain.casefold().find(highlight.casefold()) if highlight else -1
        if at < 0:
            scroll.scroll_home(animate=False)
            return
        line = text.plain.count("\n", 0, at)  # the marked text's line (before wrapping)
        scroll.call_after_refresh(scroll.scroll_to, y=max(0, line - 2), animate=False)

    def on_line_table_row_highlighted(self, event: LineTable.RowHighlighted) -> None:
        event.stop()
        self.show_detail(event.cursor_row)
