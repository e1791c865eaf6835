"""Prompt tokens per request, drawn with the Line API (one `render_line` per row, no widget per request).

Only the visible columns are computed, so a 2,500-request thread costs the same to draw as a short one.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from widgets.palette import Palette

BAR_CHARS = " ▁▂▃▄▅▆▇█"
GUTTER = 7


class TimelinePoint(msgspec.Struct, frozen=True, gc=False):
    """One request as the chart sees it (a msgspec Struct: one per request, made on every config edit;
    scalars only, so the collector need not track it)."""

    prompt_tokens: int           # replayed (for a failed request: what it would have needed)
    recorded_tokens: int | None  # provider-reported, where the thread has it
    compaction: bool
    failed: bool
    changed: bool = False        # differs from the baseline replay
    recorded_compaction: bool = False  # the app itself compacted before this request (recorded summary)
    recorded_event: bool = False  # the app changed its context in place before this request (e.g. cleared tool results)
    guessed: bool = False        # its calibrated prompt is a guess (nothing recorded since the last compaction)


@dataclass(frozen=True, slots=True)
class TimelineScale:
    window: int
    budget: int | None = None     # the prompt ceiling the profile enforces (the largest prompt it sends)
    threshold: int | None = None  # compaction threshold in tokens


def compact_number(value: float) -> str:
    """12345 -> '12.3k', 200000 -> '200k'."""
    if value >= 1_000_000:
        return f"{value / 1_000_000:.3g}M"
    if value >= 1_000:
        return f"{value / 1_000:.3g}k"
    return str(int(value))


class TimelineChart(Widget, can_focus=True):
    """Bar chart of the thread's requests; the cursor is the selected request."""

    DEFAULT_CSS = """
    TimelineChart { height: 12; }
    TimelineChart:focus { background: $boost; }
    TimelineChart > .timeline--bar { color: $primary; }
    TimelineChart > .timeline--bar-over { color: $warning; }
    TimelineChart > .timeline--bar-failed { color: $error; }
    TimelineChart > .timeline--bar-changed { color: $success; }
    TimelineChart > .timeline--bar-guessed { color: $primary-darken-2; }
    TimelineChart > .timeline--recorded { color: $text-accent; text-style: bold; }
    TimelineChart > .timeline--window { color: $error; }
    TimelineChart > .timeline--threshold { color: $warning; }
    TimelineChart > .timeline--budget { color: $success; }
    TimelineChart > .timeline--gutter { color: $foreground-darken-3; }
    TimelineChart > .timeline--compaction { color: $text-secondary; text-style: bold; }
    TimelineChart > .timeline--failed { color: $text-error; text-style: bold; }
    TimelineChart > .timeline--cursor { background: $primary-muted; }
    TimelineChart > .timeline--probe { color: $text-warning; text-style: bold; }
    TimelineChart > .timeline--axis { color: $foreground-darken-3; text-style: dim; }
    """

    BINDINGS = [
        Binding("left", "step(-1)", "Prev request", show=False, id="timeline.previous"),
        Binding("right", "step(1)", "Next request", show=False, id="timeline.next"),
        Binding("shift+left", "step(-10)", "Back 10", show=False, id="timeline.back-10"),
        Binding("shift+right", "step(10)", "Forward 10", show=False, id="timeline.forward-10"),
        Binding("home", "jump_to(0)", "First request", show=False, id="timeline.first"),
        Binding("end", "jump_to(-1)", "Last request", show=False, id="timeline.last"),
    ]

    cursor: reactive[int] = reactive(0)

    class Resized(Message):
        """The chart's size changed: the part of the thread it shows may have too."""

        def __init__(self, chart: TimelineChart) -> None:
            super().__init__()
            self.chart = chart

    class CursorMoved(Message):
        """The user moved the cursor to another request."""

        def __init__(self, chart: TimelineChart, index: int) -> None:
            super().__init__()
            self.chart = chart
            self.index = index

    # style key -> its component class, read with `get_component_rich_style` (so the theme reaches the chart)
    STYLE_CLASSES = {
        "bar": "timeline--bar",
        "bar_over": "timeline--bar-over",
        "bar_failed": "timeline--bar-failed",
        "bar_changed": "timeline--bar-changed",
        "bar_guessed": "timeline--bar-guessed",
        "recorded": "timeline--recorded",
        "window": "timeline--window",
        "threshold": "timeline--threshold",
        "budget": "timeline--budget",
        "gutter": "timeline--gutter",
        "compaction": "timeline--compaction",
        "failed": "timeline--failed",
        "cursor_bg": "timeline--cursor",
        "probe": "timeline--probe",
        "axis": "timeline--axis",
    }
    COMPONENT_CLASSES = frozenset(STYLE_CLASSES.values())

    @property
    def styles_by_key(self) -> dict[str, Style]:
        """The chart's styles under their keys, from its component classes, read again when the theme
        changes (textual's own cache of them is cleared at every refresh: each cursor move)."""
        key = (Palette.generation, self.app.theme)
        if self._styles is None or self._styles[0] != key:
            self._styles = (key, {k: self.get_component_rich_style(name, partial=True)
                                  for k, name in self.STYLE_CLASSES.items()})
        return self._styles[1]

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.points: list[TimelinePoint] = []
        self.scale = TimelineScale(window=1)
        self._start = 0
        self._peak = 0
        self.overview = False  # one column per bucket of requests, the whole thread on screen
        self._buckets: tuple[int, list[TimelinePoint]] | None = None
        self.probe_mark: int | None = None  # the request where a probed text stopped being visible
        self._styles: tuple[tuple, dict[str, Style]] | None = None
        # the plot's rows as drawn without the cursor, for one data set, layout and theme: a cursor move
        # redraws the chart (12 rows of a few hundred columns) from these, restyling the cursor's column
        self._rows: tuple[tuple, dict[int, list[Segment]]] | None = None
        self._data_generation = 0

    # data ---------------------------------------------------------------------------------------------

    def set_data(self, points: list[TimelinePoint], scale: TimelineScale, cursor: int | None = None) -> None:
        self.points = points
        self.scale = scale
        self._data_generation += 1
        self._peak = max((max(p.prompt_tokens, p.recorded_tokens or 0) for p in points), default=0)
        self._buckets = None
        if cursor is not None:
            self.set_reactive(TimelineChart.cursor, max(0, min(cursor, len(points) - 1)) if points else 0)
        elif self.cursor >= len(points):
            self.set_reactive(TimelineChart.cursor, max(0, len(points) - 1))
        self._scroll_to_cursor()
        self.refresh()

    def mark_probe(self, index: int | None) -> None:
        """Mark (⊘) the request where a probed text disappears; None removes the mark."""
        self.probe_mark = index
        self.refresh()

    @property
    def vmax(self) -> int:
        """The top of the chart: the window or the highest bar, whichever is larger (cached per data set)."""
        return max(self.scale.window, self._peak, 1)

    def _plot_width(self) -> int:
        return max(1, self.size.width - GUTTER)

    def column_width(self) -> int:
        n = len(self.points)
        if not n:
            return 1
        return max(1, min(3, self._plot_width() // n))

    def visible_count(self) -> int:
        return max(1, self._plot_width() // self.column_width())

    def bucket_size(self) -> int:
        """Requests per column: 1, or in overview mode enough to fit the whole thread."""
        if not self.overview or not self.points:
            return 1
        return max(1, -(-len(self.points) // self._plot_width()))

    def _bucketed(self, size: int) -> list[TimelinePoint]:
        if self._buckets is None or self._buckets[0] != size:
            out = []
            for start in range(0, len(self.points), size):
                chunk = self.points[start:start + size]
                recorded = [p.recorded_tokens for p in chunk if p.recorded_tokens is not None]
                out.append(TimelinePoint(
                    prompt_tokens=max(p.prompt_tokens for p in chunk),
                    recorded_tokens=max(recorded) if recorded else None,
                    compaction=any(p.compaction for p in chunk),
                    failed=any(p.failed for p in chunk),
                    changed=any(p.changed for p in chunk),
                    recorded_compaction=any(p.recorded_compaction for p in chunk),
                    recorded_event=any(p.recorded_event for p in chunk),
                    guessed=any(p.guessed for p in chunk),
                ))
            self._buckets = (size, out)
        return self._buckets[1]

    def _columns(self) -> tuple[list[TimelinePoint], int, int, int, int]:
        """(points drawn, first, end, column width, cursor column) for the current mode."""
        if self.overview and self.points:
            size = self.bucket_size()
            cols = self._bucketed(size)
            return cols, 0, len(cols), 1, self.cursor // size
        end = min(len(self.points), self._start + self.visible_count())
        return self.points, self._start, end, self.column_width(), self.cursor

    def action_toggle_overview(self) -> None:
        self.overview = not self.overview
        self._scroll_to_cursor()
        self.refresh()

    def _scroll_to_cursor(self) -> None:
        count = self.visible_count()
        if self.cursor < self._start:
            self._start = self.cursor
        elif self.cursor >= self._start + count:
            self._start = self.cursor - count + 1
        self._start = max(0, min(self._start, max(0, len(self.points) - count)))

    def watch_cursor(self, old: int, new: int) -> None:
        self._scroll_to_cursor()
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        self._buckets = None
        self._scroll_to_cursor()
        self.post_message(self.Resized(self))

    # actions ------------------------------------------------------------------------------------------

    def move_to(self, index: int) -> None:
        if not self.points:
            return
        index = max(0, min(index, len(self.points) - 1))
        if index != self.cursor:
            self.cursor = index
            self.post_message(self.CursorMoved(self, index))

    def action_step(self, delta: int) -> None:
        self.move_to(self.cursor + delta)

    def action_jump_to(self, index: int) -> None:
        self.move_to(index if index >= 0 else len(self.points) - 1)

    def on_click(self, event: events.Click) -> None:
        x = event.x - GUTTER
        if x >= 0:
            if self.overview:
                self.move_to(x * self.bucket_size())
            else:
                self.move_to(self._start + x // self.column_width())

    # rendering ----------------------------------------------------------------------------------------

    def _row_of(self, tokens: int | None, plot_height: int) -> int | None:
        """Row (from the top) where a horizontal line at `tokens` is drawn."""
        if tokens is None or tokens <= 0:
            return None
        level = tokens / self.vmax * plot_height
        return max(0, min(plot_height - 1, plot_height - 1 - int(level - 1e-9) if level >= 1 else plot_height - 1))

    def _tick(self, y: int, plot_height: int, line_rows: set[int | None]) -> str:
        """The y axis: the top value, 0 at the bottom row, and the value at the middle row, where no
        line's label (or one next to it) is drawn."""
        if y == 0:
            return compact_number(self.vmax)
        if y == plot_height - 1:
            return "0"
        middle = plot_height // 2
        if y == middle and plot_height >= 5 and not ({y - 1, y, y + 1} & line_rows):
            return compact_number(self.vmax * (plot_height - y) / plot_height)
        return ""

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        height = self.size.height
        plot_height = max(1, height - 1)
        styles = self.styles_by_key
        if not self.points:
            text = "no requests" if y == plot_height // 2 else ""
            return Strip([Segment(text.center(width), styles["gutter"])]).crop(0, width)
        if y == height - 1:
            return self._marker_line(width)
        cols, start, end, col_w, cursor = self._columns()
        key = (width, height, start, end, col_w, self.overview, self._data_generation, self.scale, id(styles))
        if self._rows is None or self._rows[0] != key:
            self._rows = (key, {})
        rows = self._rows[1]
        segments = rows.get(y)
        if segments is None:
            segments = rows[y] = self._plot_row(y, width, plot_height, styles, cols, start, end, col_w)
        if start <= cursor < end:  # the cursor's column: the row's own character on the cursor's background
            segments = segments.copy()
            at = 1 + cursor - start
            segment = segments[at]
            segments[at] = Segment(segment.text, (segment.style or Style()) + styles["cursor_bg"])
        return Strip(segments).crop(0, width)

    def _plot_row(self, y: int, width: int, plot_height: int, styles: dict[str, Style],
                  cols: list[TimelinePoint], start: int, end: int, col_w: int) -> list[Segment]:
        """Row `y` of the plot, the gutter first, then a segment per column (the cursor not drawn)."""
        lines = {
            "window": self._row_of(self.scale.window, plot_height),
            "threshold": self._row_of(self.scale.threshold, plot_height),
            "budget": self._row_of(self.scale.budget, plot_height),
        }
        label = ""
        for key, row in lines.items():
            if row == y:
                value = {"window": self.scale.window, "threshold": self.scale.threshold, "budget": self.scale.budget}[key]
                label = compact_number(value or 0)
                line_key = key
                break
        else:
            line_key = None
        if not label:
            label = self._tick(y, plot_height, set(lines.values()))
        tick = "┤" if label else "│"
        segments = [Segment(label.rjust(GUTTER - 1)[: GUTTER - 1] + tick, styles["gutter"])]
        base_level = (plot_height - 1 - y) * 8
        scale = plot_height * 8 / self.vmax
        line_char = "─" if line_key else " "
        line_style = styles[line_key] if line_key else Style()
        for i in range(start, end):
            point = cols[i]
            fill = int(round(point.prompt_tokens * scale)) - base_level
            fill = max(0, min(8, fill))
            recorded_here = (
                point.recorded_tokens is not None
                and self._row_of(point.recorded_tokens, plot_height) == y
            )
            if recorded_here:
                char, style = "•", styles["recorded"]
            elif fill:
                char = BAR_CHARS[fill]
                if point.failed:
                    style = styles["bar_failed"]
                elif self.scale.threshold and point.prompt_tokens >= self.scale.threshold:
                    style = styles["bar_over"]
                elif point.changed:
                    style = styles["bar_changed"]
                elif point.guessed:
                    style = styles["bar_guessed"]
                else:
                    style = styles["bar"]
            else:
                char, style = line_char, line_style
            segments.append(Segment(char * col_w, style))
        used = GUTTER + (end - start) * col_w
        if used < width:
            segments.append(Segment(line_char * (width - used), line_style))
        return segments

    def shown_requests(self) -> tuple[int, int]:
        """The first and last request (0-based) the chart shows."""
        if not self.points:
            return 0, -1
        if self.overview:
            return 0, len(self.points) - 1
        return self._start, min(len(self.points), self._start + self.visible_count()) - 1

    def _marker_line(self, width: int) -> Strip:
        """The x axis: a mark per request (▲ selected, ⊘ probe, ✗ failed, ◆ ◇ compactions, ○ event),
        and request numbers (from 1) written on the axis where no mark is, every few columns."""
        styles = self.styles_by_key
        cols, start, end, col_w, cursor = self._columns()
        probe = None
        if self.probe_mark is not None:
            probe = self.probe_mark // self.bucket_size() if self.overview else self.probe_mark
        cells: list[tuple[str, Style]] = []
        for i in range(start, end):
            point = cols[i]
            if i == cursor:
                char, style = "▲", Style(bold=True)
            elif i == probe:
                char, style = "⊘", styles["probe"]
            elif point.failed:
                char, style = "✗", styles["failed"]
            elif point.compaction:
                char, style = "◆", styles["compaction"]
            elif point.recorded_compaction:
                char, style = "◇", styles["compaction"]
            elif point.recorded_event:
                char, style = "○", styles["compaction"]
            else:
                char, style = "─", styles["axis"]
            for k, c in enumerate(char.ljust(col_w, "─" if char == "─" else " ")):
                cells.append((c, style if k == 0 or char != "─" else styles["axis"]))
        self._number_axis(cells, start, col_w)
        segments = [Segment(" " * (GUTTER - 1) + "└", styles["gutter"])]
        segments.extend(Segment(c, st) for c, st in cells)
        used = GUTTER + len(cells)
        if used < width:
            segments.append(Segment("─" * (width - used), styles["axis"]))
        return Strip(segments).simplify().crop(0, width)

    AXIS_STEPS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000)

    def _number_axis(self, cells: list[tuple[str, Style]], start: int, col_w: int) -> None:
        """Request numbers (from 1) on the axis at round steps, each left-aligned on its request's column,
        where the axis is bare (no mark) under it and one column either side."""
        per = self.bucket_size()
        columns = len(cells) // col_w if col_w else 0
        if not columns:
            return
        widest = len(str((start + columns) * per))
        step = next((s for s in self.AXIS_STEPS if s / per * col_w >= widest + 3), self.AXIS_STEPS[-1])
        style = self.get_component_rich_style(self.STYLE_CLASSES["gutter"], partial=True)
        for col in range(columns):
            lo = (start + col) * per + 1  # the requests of this column (1-based): lo .. lo + per - 1
            multiple = -(-lo // step) * step
            if lo == 1:
                label = "1"
            elif multiple <= lo + per - 1:
                label = str(multiple)
            else:
                continue
            at = col * col_w
            span = range(max(0, at - 1), min(len(cells), at + len(label) + 1))
            if at + len(label) > len(cells) or any(cells[x][0] != "─" for x in span):
                continue
            for k, ch in enumerate(label):
                cells[at + k] = (ch, style)
