"""widgets.rendered.RenderedOnce: the wrapped renderable's own segments, rendered once per width."""

from __future__ import annotations

import io

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from widgets.rendered import RenderedOnce


class Counted:
    """A table that counts its renders and measurements."""

    def __init__(self) -> None:
        self.renders = 0
        self.measures = 0
        self.table = Table(title="facts")
        self.table.add_column("key")
        self.table.add_column("value")
        self.table.add_row("Cost", Text("$1.25 = input 1,000 + cache read 9,000 " * 3, style="bold"))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        self.renders += 1
        yield from console.render(self.table, options)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        self.measures += 1
        return Measurement.get(console, options, self.table)


def _console(width: int) -> Console:
    return Console(width=width, file=io.StringIO(), color_system="truecolor")


def test_same_lines_as_the_wrapped_renderable_at_each_width():
    for width in (40, 80, 160):
        console = _console(width)
        inner = Counted()
        assert console.render_lines(RenderedOnce(inner), console.options) == \
            console.render_lines(inner.table, console.options)


def test_renders_once_per_width_and_again_at_another():
    inner = Counted()
    once = RenderedOnce(inner)
    console = _console(80)
    first = console.render_lines(once, console.options)
    # a layout pass measures the height, the paint renders at that height: one render of the table
    assert console.render_lines(once, console.options.update(height=len(first))) == first
    assert Measurement.get(console, console.options, once) == Measurement.get(console, console.options, once)
    assert (inner.renders, inner.measures) == (1, 1)
    narrow = console.options.update_width(50)
    assert console.render_lines(once, narrow) == console.render_lines(inner.table, narrow)
    assert inner.renders == 2


def test_inside_a_table_as_a_cell():
    console = _console(120)
    inner = Counted()
    outer, plain = Table.grid(padding=(0, 2)), Table.grid(padding=(0, 2))
    for grid, cell in ((outer, RenderedOnce(inner)), (plain, inner.table)):
        grid.add_column()
        grid.add_row(Text("Request 3/9", style="bold"))
        grid.add_row(cell)
    assert console.render_lines(outer, console.options) == console.render_lines(plain, console.options)
