"""A borderless table of short cells, rendered as Rich renders it without Rich's per-cell machinery.

The Budget pane is two `rich.table.Table(box=None, padding=(0, 1))` of short labels and numbers,
rendered on every `right` and every edit. Rich renders each cell through a `Padding`, a nested
`render_lines`, a wrap and a crop, and measures every cell first: about 20 ms of a 23 ms step on
the bench thread. `BorderlessTable` holds the same columns and rows and writes the segments Rich's table writes
(segment for segment: `tests/tui/test_borderless_table.py` holds it to Rich's own table, so what the pane
shows, and its snapshots, are unchanged): each cell that fits its column on one line directly, a
cell that must wrap (a long note, in a table wider than the space, whose column widths Rich's table
then gives) as Rich renders a table's cell. A cell that is not text, holds a newline or a tab, or sets
its own justification, has the whole table rendered by Rich. The column widths of a table that does
not fit follow Rich's own steps (`Table._collapse_widths`, `rich._ratio.ratio_reduce`): a Rich release
that changed them fails that test, not the pane.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich._ratio import ratio_reduce
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text

PAD = 1  # spaces either side of every cell (`padding=(0, 1)`, `pad_edge=True`)


def _settled(measure: Measurement, limit: int) -> Measurement:
    """What `Measurement.get` makes of a renderable's own measurement within `limit`."""
    measure = measure.normalize().with_maximum(limit)
    return Measurement(0, 0) if measure.maximum < 1 else measure.normalize()


def _padded_measure(low: int, high: int, limit: int) -> Measurement:
    """`Measurement.get` of a table cell (a text of longest word `low`, line `high`, in Rich's
    `Padding`) within `limit`."""
    if limit - 2 * PAD < 1:
        return _settled(Measurement(limit, limit), limit)
    inner = _settled(Measurement(low, high), limit)
    return _settled(Measurement(inner.minimum + 2 * PAD, inner.maximum + 2 * PAD).with_maximum(limit), limit)


@dataclass(frozen=True, slots=True)
class BorderlessColumn:
    header: str = ""
    justify: str = "left"  # "left" | "right" | "center"
    style: str = ""


class BorderlessTable:
    """`Table(box=None, padding=(0, 1), show_header=..., header_style=...)` of str or `Text` cells."""

    __slots__ = ("columns", "rows", "show_header", "header_style", "_table")

    def __init__(self, *columns: BorderlessColumn, show_header: bool = False, header_style: str = "") -> None:
        self.columns = columns
        self.rows: list[tuple[str | Text, ...]] = []
        self.show_header = show_header
        self.header_style = header_style
        self._table: Table | None = None

    def add_row(self, *cells: str | Text) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells in a table of {len(self.columns)} columns")
        self.rows.append(cells)
        self._table = None

    def table(self) -> Table:
        """The Rich table this stands for (what renders it where the fast path does not apply)."""
        if self._table is None:
            table = Table(box=None, padding=(0, PAD), show_header=self.show_header,
                          header_style=self.header_style or None)
            for column in self.columns:
                table.add_column(column.header, justify=column.justify, style=column.style or None)  # type: ignore[arg-type]
            for row in self.rows:
                table.add_row(*row)
            self._table = table
        return self._table

    # -- the fast path ---------------------------------------------------------------------
    def _texts(self, console: Console, options: ConsoleOptions) -> list[list[Text]] | None:
        """Every row's cells as Rich renders them (a str through `render_str`, as `Console.render`
        does), the header first; None where a cell is not a plain one-line text."""
        rows: list[list[Text]] = []
        source = ([tuple(c.header for c in self.columns)] if self.show_header else []) + self.rows
        markup = options.markup
        for row in source:
            out = []
            for cell in row:
                if isinstance(cell, str):
                    text = console.render_str(cell, highlight=False, markup=markup)
                elif type(cell) is Text:
                    text = cell
                else:
                    return None
                if (text.justify is not None or text.overflow is not None or text.no_wrap
                        or text.end != "\n" or "\n" in text.plain or "\t" in text.plain):
                    return None
                out.append(text)
            rows.append(out)
        return rows

    def _plan(self, console: Console, options: ConsoleOptions, *,
              wrapped: bool = True) -> tuple[list[list[Text]], list[int]] | None:
        """The cells and the columns' widths (padding included): their natural widths where the table
        fits, else (`wrapped`) the widths Rich's table gives them; None where Rich's table renders it
        (a cell that is not plain text, an empty column, a column Rich narrows to nothing)."""
        if not self.columns or options.max_width < 1:
            return None
        texts = self._texts(console, options)
        if texts is None:
            return None
        widths = [max((cell_len(row[i].plain) for row in texts), default=0) + 2 * PAD for i in range(len(self.columns))]
        if sum(widths) > options.max_width:
            if not wrapped:
                return None
            widths = self._rich_widths(texts, options.max_width)
        return None if any(w <= 2 * PAD for w in widths) else (texts, widths)

    def _rich_widths(self, texts: list[list[Text]], max_width: int) -> list[int]:
        """The widths (padding included) Rich's table gives its columns where they do not fit in
        `max_width`: its `_calculate_column_widths` for a table that does not expand, on the cells'
        own measurements (the longest word, the line) instead of a render of each."""
        sizes = [[(max((cell_len(w) for w in row[i].plain.split()), default=cell_len(row[i].plain)),
                   cell_len(row[i].plain)) for row in texts] for i in range(len(self.columns))]

        def column(i: int, limit: int) -> Measurement:
            if limit < 1:
                return Measurement(0, 0)
            cells = [_padded_measure(low, high, limit) for low, high in sizes[i]]
            return Measurement(max((c.minimum for c in cells), default=1),
                               max((c.maximum for c in cells), default=limit)).with_maximum(limit)

        widths = [column(i, max_width).maximum or 1 for i in range(len(self.columns))]
        if sum(widths) > max_width:
            widths = Table._collapse_widths(widths, [True] * len(widths), max_width)
            if sum(widths) > max_width:  # Rich's last resort: every column reduced evenly
                widths = ratio_reduce(sum(widths) - max_width, [1] * len(widths), widths, widths)
            widths = [column(i, width).maximum or 0 for i, width in enumerate(widths)]
        return widths

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        plan = self._plan(console, options)
        if plan is None:
            yield self.table()
            return
        texts, widths = plan
        get_style = console.get_style
        header_style = get_style(self.header_style) if self.header_style else Style.null()
        column_styles = [get_style(c.style) if c.style else Style.null() for c in self.columns]
        null = Style.null()
        new_line = Segment.line()
        for index, row in enumerate(texts):
            header = self.show_header and index == 0
            cells: list[list[list[Segment]]] = []
            for text, width, column, column_style in zip(row, widths, self.columns, column_styles, strict=True):
                style = header_style if header else column_style
                content = width - 2 * PAD
                if cell_len(text.plain) > content:  # wrapped: the cell as Rich's table renders it
                    cell_options = options.update(width=width, justify=column.justify, no_wrap=False,  # type: ignore[arg-type]
                                                  overflow="ellipsis", height=None, highlight=False)
                    cells.append(console.render_lines(Padding(text, (0, PAD, 0, PAD)), cell_options, style=style))
                    continue
                line = text.copy()  # as `Text.wrap` and `Lines.justify` make a line that fits
                if column.justify == "right":
                    line.rstrip()
                    line.truncate(content, overflow="ellipsis")
                    line.pad_left(content - cell_len(line.plain))
                elif column.justify == "center":
                    line.rstrip()
                    line.truncate(content, overflow="ellipsis")
                    line.pad_left((content - cell_len(line.plain)) // 2)
                    line.pad_right(content - cell_len(line.plain))
                else:
                    line.truncate(content, overflow="ellipsis", pad=True)
                segments = Text("\n").join([line]).render(console)
                pad = Segment(" " * PAD, style if style else null)
                cells.append([[pad, *(Segment.apply_style(segments, style) if style else segments), pad]])
            height = max(len(cell) for cell in cells)
            if height > 1:  # cells aligned as Rich aligns them: a header at the bottom, others at the top
                align = Segment.align_bottom if header else Segment.align_top
                cells = [Segment.set_shape(align(cell, width, height, header_style if header else column_style),
                                           width, height)
                         for cell, width, column_style in zip(cells, widths, column_styles, strict=True)]
            for line_no in range(height):
                for cell in cells:
                    yield from cell[line_no]
                yield new_line

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        plan = self._plan(console, options, wrapped=False)  # a table that does not fit: Rich's own measure
        if plan is None:
            return Measurement.get(console, options, self.table())
        texts, widths = plan
        minimum = 0
        for i in range(len(self.columns)):
            words = [max((cell_len(w) for w in row[i].plain.split()), default=cell_len(row[i].plain)) for row in texts]
            minimum += max(words, default=0) + 2 * PAD
        return Measurement(minimum, sum(widths))
