"""A read-only table drawn with the Line API: rows are produced lazily, only for the lines on screen.

Showing 10,000 rows costs the same as showing 10: nothing is measured or rendered per row up front
(DataTable measures every cell of every row it is given).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


@dataclass(frozen=True, slots=True)
class Column:
    label: str
    width: int  # 0: the column takes the width the others leave (at least FILL_MIN)
    justify: str = "left"  # "left" | "right"


FILL_MIN = 8


RowFactory = Callable[[int], tuple[Text, ...]]


class LineTable(ScrollView, can_focus=True):
    """Fixed-width columns, a header line, a row cursor; cells come from `row_factory(index)`."""

    DEFAULT_CSS = """
    LineTable { height: 1fr; overflow-x: hidden; }
    LineTable:focus { background-tint: $foreground 3%; }
    LineTable > .linetable--header { color: $foreground; background: $panel; text-style: bold; }
    LineTable > .linetable--cursor { background: $primary-muted; text-style: bold; }
    LineTable > .linetable--zebra { background: $surface; }
    """

    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False, id="table.up"),
        Binding("down", "move(1)", "Down", show=False, id="table.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="table.page-up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="table.page-down"),
        Binding("home,ctrl+home", "first", "First", show=False, id="table.first"),
        Binding("end,ctrl+end", "last", "Last", show=False, id="table.last"),
        Binding("enter", "select", "Select", show=False, id="table.select"),
    ]

    cursor_row: reactive[int] = reactive(0)

    class RowHighlighted(Message):
        def __init__(self, table: LineTable, cursor_row: int) -> None:
            super().__init__()
            self.table = table
            self.cursor_row = cursor_row

        @property
        def control(self) -> LineTable:
            return self.table

    class RowSelected(RowHighlighted):
        pass

    COMPONENT_CLASSES = frozenset({"linetable--header", "linetable--cursor", "linetable--zebra"})

    def __init__(self, columns: list[Column], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns = columns
        self.row_count = 0
        self.row_factory: RowFactory = lambda index: ()
        self._cache: dict[int, tuple[Text, ...]] = {}
        self.hidden: frozenset[int] = frozenset()  # indexes of columns not drawn (their cells are skipped)
        self._width = sum((c.width or FILL_MIN) + 1 for c in columns)

    def set_columns(self, columns: list[Column], hidden: frozenset[int] = frozenset()) -> None:
        """Replace the columns (e.g. widths that fit what is shown) and which are hidden; the rows' cells
        stay the same, and are rebuilt as they are drawn."""
        if columns == self.columns and hidden == self.hidden:
            return
        self.columns = columns
        self.hidden = hidden
        self._width = sum((c.width or FILL_MIN) + 1 for i, c in enumerate(columns) if i not in hidden)
        self._cache.clear()
        self.virtual_size = Size(self._width, self.row_count + 1)
        self.refresh()

    def _widths(self) -> list[int]:
        """The drawn width of every column (0 for a hidden one); a fill column takes what is left."""
        shown = [(i, c) for i, c in enumerate(self.columns) if i not in self.hidden]
        fixed = sum(c.width + 1 for _i, c in shown if c.width)
        rest = max(FILL_MIN, self.scrollable_content_region.width - fixed - 1)
        return [0 if i in self.hidden else (c.width or rest) for i, c in enumerate(self.columns)]

    # data -----------------------------------------------------------------------------------------

    def set_rows(self, count: int, factory: RowFactory, cursor: int = 0) -> None:
        self.row_count = count
        self.row_factory = factory
        self._cache.clear()
        self.virtual_size = Size(self._width, count + 1)
        self.set_reactive(LineTable.cursor_row, max(0, min(cursor, count - 1)) if count else 0)
        self._scroll_to_cursor()
        self.refresh()
        if count:
            self.post_message(self.RowHighlighted(self, self.cursor_row))

    def get_row_at(self, index: int) -> tuple[Text, ...]:
        cells = self._cache.get(index)
        if cells is None:
            cells = self.row_factory(index)
            if len(self._cache) > 2_000:
                self._cache.clear()
            self._cache[index] = cells
        return cells

    def move_cursor(self, *, row: int, animate: bool = False) -> None:
        if self.row_count:
            self.cursor_row = max(0, min(row, self.row_count - 1))

    # cursor ---------------------------------------------------------------------------------------

    def watch_cursor_row(self, old: int, new: int) -> None:
        self._scroll_to_cursor()
        self.refresh()
        if self.row_count:
            self.post_message(self.RowHighlighted(self, new))

    def _body_height(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def scroll_to_cursor(self) -> None:
        """Scroll so the cursor row is in view (again, once the table has its size)."""
        self._scroll_to_cursor()

    def _scroll_to_cursor(self) -> None:
        top = round(self.scroll_offset.y)
        height = self._body_height()
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= top + height:
            self.scroll_to(y=self.cursor_row - height + 1, animate=False, immediate=True)

    def action_move(self, delta: int) -> None:
        self.move_cursor(row=self.cursor_row + delta)

    def action_page(self, direction: int) -> None:
        self.move_cursor(row=self.cursor_row + direction * self._body_height())

    def action_first(self) -> None:
        self.move_cursor(row=0)

    def action_last(self) -> None:
        self.move_cursor(row=self.row_count - 1)

    def action_select(self) -> None:
        if self.row_count:
            self.post_message(self.RowSelected(self, self.cursor_row))

    def on_click(self, event: events.Click) -> None:
        """A click moves the cursor; a click on the row under the cursor (or a double click) selects it."""
        if event.y >= 1:
            row = round(self.scroll_offset.y) + event.y - 1
            if 0 <= row < self.row_count:
                if row == self.cursor_row or event.chain > 1:
                    self.post_message(self.RowSelected(self, row))
                self.move_cursor(row=row)

    # rendering ------------------------------------------------------------------------------------

    def _line(self, cells: tuple[Text, ...] | list[Text], style: Style | None) -> Strip:
        line = Text(no_wrap=True, overflow="ellipsis")
        for column, width, cell in zip(self.columns, self._widths(), cells, strict=False):
            if not width:
                continue
            text = cell.copy()
            text.no_wrap = True
            text.truncate(width, overflow="ellipsis")
            if column.justify == "right":
                text.align("right", width)
            else:
                text.align("left", width)
            line.append_text(text)
            line.append(" ")
        segments = list(line.render(self.app.console))
        strip = Strip([s for s in segments if s.text != "\n"])
        if style is not None:
            strip = strip.apply_style(style)
        return strip

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        if y == 0:
            header_style = self.get_component_rich_style("linetable--header", partial=True)
            header = self._line([Text(c.label) for c in self.columns], header_style)
            return header.crop_extend(scroll_x, scroll_x + width, header_style)
        row = scroll_y + y - 1
        if row >= self.row_count:
            return Strip.blank(width, self.rich_style)
        if row == self.cursor_row:
            style: Style | None = self.get_component_rich_style("linetable--cursor", partial=True)
        elif row % 2:
            style = self.get_component_rich_style("linetable--zebra", partial=True)
        else:
            style = None
        strip = self._line(self.get_row_at(row), style)
        return strip.crop_extend(scroll_x, scroll_x + width, style or self.rich_style)

    def plain_row(self, index: int) -> list[str]:
        return [cell.plain for cell in self.get_row_at(index)]


__all__ = ["Column", "LineTable", "Segment"]
