"""The thread list: filter-as-you-type Input over a Line-API table."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input

from inspector.model import ThreadInfo
from inspector.thread_tree import TreeRow, thread_tree
from widgets.linetable import Column, LineTable
from widgets.ordered_input import OrderedInput
from widgets.safe import safe_line


def matches(info: ThreadInfo, query: str) -> bool:
    """Every whitespace-separated word of the query appears in the title, id, source or a sub-agent's task
    description (case-insensitive)."""
    haystack = f"{info.title}\n{info.id}\n{info.source}\n{info.task_description or ''}".lower()
    return all(word in haystack for word in query.lower().split())


THREAD_COLUMNS = [
    Column("title", 0), Column("source", 8), Column("msgs", 5, "right"), Column("reqs", 4, "right"),
    Column("comp", 4, "right"),
]
NARROW = 40  # below this width the list drops its source column, so titles keep some room
NARROW_COLUMNS = [c for c in THREAD_COLUMNS if c.label != "source"]


def request_count(t: ThreadInfo) -> Text:
    """The reqs cell: the recorded requests, `~N` where the thread recorded none and the replay derives
    N, `!` (red) where the import of its file left something out."""
    derived = not t.requests and t.derived_requests
    text = f"~{t.derived_requests:,}" if derived else f"{t.requests:,}"
    if t.incomplete:
        return Text(text + "!", style="bold red")
    return Text(text, style="dim" if derived else "")


SUBAGENT_INDENT = 2  # columns per level of sub-agent nesting


def title_cell(row: TreeRow, current: bool) -> Text:
    """The title column: a sub-agent indented under its parent, named by its Task call's description
    where the import knows it (else by its own title)."""
    t = row.info
    lead = "▶ " if current else ""
    if not row.depth:
        return Text(lead + safe_line(t.title or t.id, 80), style="bold" if current else "")
    text = Text(" " * (SUBAGENT_INDENT * (row.depth - 1)) + lead + "↳ ", style="bold" if current else "")
    text.append(safe_line(t.task_description or t.title or t.id, 80), style="bold" if current else "")
    return text


class ThreadList(Vertical):
    DEFAULT_CSS = """
    ThreadList { height: 1fr; }
    ThreadList > Input { margin: 0; }
    ThreadList > LineTable { height: 1fr; }
    """

    BINDINGS = [
        Binding("down", "highlight(1)", "Next thread", show=False, id="threads.next"),
        Binding("up", "highlight(-1)", "Previous thread", show=False, id="threads.previous"),
    ]

    class Chosen(Message):
        def __init__(self, thread_id: str) -> None:
            super().__init__()
            self.thread_id = thread_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.threads: list[ThreadInfo] = []
        self.rows: list[TreeRow] = []  # the threads in list order, each sub-agent under its parent
        self.shown: list[ThreadInfo] = []
        self.current: str | None = None
        self.with_source = True

    def compose(self) -> ComposeResult:
        yield OrderedInput(placeholder="filter threads (/)", id="thread-filter")
        yield LineTable(THREAD_COLUMNS, id="threads-table")

    @property
    def table(self) -> LineTable:
        return self.query_one("#threads-table", LineTable)

    def set_threads(self, threads: Sequence[ThreadInfo], current: str | None = None) -> None:
        self.threads = list(threads)
        self.rows = thread_tree(self.threads)
        if current is not None:
            self.current = current
        self.apply_filter(self.query_one("#thread-filter", Input).value)

    def apply_filter(self, query: str, *, typed: bool = False) -> None:
        """Show the threads matching `query`. While the user types, the highlight goes to the first match
        (what Enter opens); otherwise it stays on the current thread."""
        rows = [r for r in self.rows if matches(r.info, query)]
        self.shown = shown = [r.info for r in rows]
        cursor = 0 if typed and query.strip() else next((row for row, t in enumerate(shown) if t.id == self.current), 0)
        self.table.set_rows(len(shown), lambda i: self._row(rows[i]), cursor=cursor)

    def on_resize(self) -> None:
        with_source = self.size.width >= NARROW
        if with_source != self.with_source:
            self.with_source = with_source
            self.table.set_columns(THREAD_COLUMNS if with_source else NARROW_COLUMNS)

    def _row(self, row: TreeRow) -> tuple[Text, ...]:
        t = row.info
        current = t.id == self.current
        source = (Text(safe_line(t.source, 12), style="dim"),) if self.with_source else ()
        return (
            title_cell(row, current),
            *source,
            Text(f"{t.messages:,}"),
            request_count(t),
            Text(f"{t.summaries:,}"),
        )

    def mark_current(self, thread_id: str) -> None:
        self.current = thread_id
        self.apply_filter(self.query_one("#thread-filter", Input).value)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.apply_filter(event.value, typed=True)

    def action_highlight(self, delta: int) -> None:
        """up / down in the filter move the highlight in the list (Enter opens the highlighted thread)."""
        self.table.move_cursor(row=self.table.cursor_row + delta)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.shown:
            self.post_message(self.Chosen(self.shown[self.table.cursor_row if self.table.cursor_row >= 0 else 0].id))

    def on_line_table_row_selected(self, event: LineTable.RowSelected) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self.shown):
            self.post_message(self.Chosen(self.shown[event.cursor_row].id))
