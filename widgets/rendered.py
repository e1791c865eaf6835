"""A Rich renderable rendered once per width.

Textual renders a Static's Rich renderable to measure its height (on every layout pass, also the
passes another widget caused) and again to paint it. For a pane of nested Rich tables, such as the
Budget pane, each of those renders measures every column of every nested table: tens of
milliseconds on each config edit. `RenderedOnce` keeps the segments of the last render per set of
options that can change them, so the measurements and the paint of one update share one render.
The segments are the wrapped renderable's own: what the pane shows is unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment

from widgets.palette import Palette

if TYPE_CHECKING:
    from textual.widget import Widget


class RenderedOnce:
    """Wraps `renderable` (which must not change afterwards) and reuses its renders."""

    __slots__ = ("renderable", "_segments", "_measures", "_last")

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable
        self._segments: dict[tuple, list[Segment]] = {}
        self._measures: dict[tuple, Measurement] = {}
        self._last: tuple[Console, ConsoleOptions, int] | None = None  # the last render's console, options, lines

    def same_height_as(self, previous: RenderedOnce | None) -> bool:
        """Whether this renders to as many lines as `previous` did at its last render (same console and
        options, so the paint that follows reuses this render): then the widget keeps its size and
        needs no layout of the screen. False where `previous` was never rendered."""
        last = previous._last if previous is not None else None
        if last is None:
            return False
        console, options, lines = last
        return _line_count(self._render(console, options)) == lines

    def keeps_size(self, previous: RenderedOnce | None, widget: Widget, *, same_width: bool,
                   shrinks_later: bool = False) -> bool:
        """Whether `widget` (height: auto), showing `previous` and about to show this, keeps its size, so that
        the update needs no layout of the screen (each costs 10-30 ms). It does where it is not laid out at
        all (in a hidden tab: showing the tab lays it out), or, at the same width, where this renders to as
        many lines as `previous`, or where both fit in what the widget was laid out to (a `min-height` made
        it taller than `previous`: what made it so does not depend on its lines). `shrinks_later`: fewer
        lines than the widget's height keep it too, the rest blank until the next layout of the screen
        (for the only child of a scrolling panel, whose text grows back within the same edit)."""
        if not widget.is_on_screen:
            return True
        last = previous._last if previous is not None else None
        if not same_width or last is None:
            return False
        console, options, lines = last
        new = _line_count(self._render(console, options))
        height = widget.size.height
        if shrinks_later:
            return new <= height
        return new == lines or (lines < height and new <= height)

    @staticmethod
    def _key(console: Console, options: ConsoleOptions) -> tuple:
        # The palette's generation is in it: a theme change restyles what is already rendered.
        # `height` is left out: the tables this wraps render at their natural height (rich.Table
        # renders its cells with height=None), so a paint of a given height reuses the measurement's.
        return (options.max_width, options.min_width, options.justify, options.overflow, options.no_wrap,
                options.highlight, options.markup, options.encoding, options.legacy_windows,
                options.is_terminal, console.color_system, id(console), Palette.generation)

    def _render(self, console: Console, options: ConsoleOptions) -> list[Segment]:
        key = self._key(console, options)
        segments = self._segments.get(key)
        if segments is None:
            if len(self._segments) >= 4:  # a few widths (a resize) at most
                self._segments.clear()
            segments = self._segments[key] = list(console.render(self.renderable, options))
        return segments

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        segments = self._render(console, options)
        self._last = (console, options, _line_count(segments))
        yield from segments

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        key = self._key(console, options)
        measure = self._measures.get(key)
        if measure is None:
            if len(self._measures) >= 4:
                self._measures.clear()
            measure = self._measures[key] = Measurement.get(console, options, self.renderable)
        return measure


def _line_count(segments: list[Segment]) -> int:
    return sum(segment.text.count("\n") for segment in segments)


class SideBySide:
    """Two renderables side by side: `left` at its natural width, `right` in what remains after `gap`.

    What a two-column `Table.grid` shows for a narrow legend beside a long list of facts, without its
    column allocation, which measures every cell of both (nested) tables on each render and again to
    render each cell: here each side is rendered once (a table, not expanded, renders at its own width,
    so the left side's lines give its width)."""

    __slots__ = ("left", "right", "gap")

    def __init__(self, left: RenderableType, right: RenderableType, gap: int = 4) -> None:
        self.left, self.right, self.gap = left, right, gap

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        left = Measurement.get(console, options, self.left)
        right = Measurement.get(console, options, self.right)
        return Measurement(left.minimum + self.gap + right.minimum,
                           left.maximum + self.gap + right.maximum).with_maximum(options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        most = max(1, options.max_width - self.gap - 1)  # the right side keeps a column at least
        left = console.render_lines(self.left, options.update(width=most, height=None), pad=False)
        left_width = max((Segment.get_line_length(line) for line in left), default=0)
        right_width = max(1, options.max_width - left_width - self.gap)
        right = console.render_lines(self.right, options.update(width=right_width, height=None), pad=False)
        blank_left = [Segment(" " * left_width)]
        gap = Segment(" " * self.gap)
        new_line = Segment.line()
        for k in range(max(len(left), len(right))):
            if k < len(left):
                yield from Segment.adjust_line_length(left[k], left_width)
            else:
                yield from blank_left
            if k < len(right):
                yield gap
                yield from right[k]
            yield new_line
