"""A Rich renderable rendered once per width.

Textual renders a Static's Rich renderable to measure its height (on every layout pass, also the
passes another widget caused) and again to paint it. For a pane of nested Rich tables, such as the
Budget pane, each of those renders measures every column of every nested table: tens of
milliseconds on each config edit. `RenderedOnce` keeps the segments of the last render per set of
options that can change them, so the measurements and the paint of one update share one render.
The segments are the wrapped renderable's own: what the pane shows is unchanged.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment

from widgets.palette import Palette


class RenderedOnce:
    """Wraps `renderable` (which must not change afterwards) and reuses its renders."""

    __slots__ = ("renderable", "_segments", "_measures")

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable
        self._segments: dict[tuple, list[Segment]] = {}
        self._measures: dict[tuple, Measurement] = {}

    @staticmethod
    def _key(console: Console, options: ConsoleOptions) -> tuple:
        # The palette's generation is in it: a theme change restyles what is already rendered.
        # `height` is left out: the tables this wraps render at their natural height (rich.Table
        # renders its cells with height=None), so a paint of a given height reuses the measurement's.
        return (options.max_width, options.min_width, options.justify, options.overflow, options.no_wrap,
                options.highlight, options.markup, options.encoding, options.legacy_windows,
                options.is_terminal, console.color_system, id(console), Palette.generation)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        key = self._key(console, options)
        segments = self._segments.get(key)
        if segments is None:
            if len(self._segments) >= 4:  # a few widths (a resize) at most
                self._segments.clear()
            segments = self._segments[key] = list(console.render(self.renderable, options))
        yield from segments

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        key = self._key(console, options)
        measure = self._measures.get(key)
        if measure is None:
            if len(self._measures) >= 4:
                self._measures.clear()
            measure = self._measures[key] = Measurement.get(console, options, self.renderable)
        return measure
