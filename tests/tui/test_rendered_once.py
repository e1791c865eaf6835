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


def _lines(console: Console, renderable, width: int) -> list[str]:
    options = console.options.update_width(width)
    return ["".join(s.text for s in line) for line in console.render_lines(renderable, options, pad=False)]


def test_side_by_side_keeps_the_left_width_and_wraps_the_right_in_what_remains():
    from widgets.rendered import SideBySide

    console = _console(60)
    legend = Table(box=None, show_header=False)
    legend.add_column()
    legend.add_column(justify="right")
    for label, value in (("System prompt", "9,598"), ("Kept history", "55,124"), ("Free", "114,731")):
        legend.add_row(label, value)
    facts = Text("a long fact that has to wrap in the columns left beside the legend " * 2)
    both = _lines(console, SideBySide(legend, facts, gap=4), 60)
    left = _lines(console, legend, 60)
    width = max(len(x) for x in left)
    right = _lines(console, facts, 60 - width - 4)
    assert len(both) == max(len(left), len(right)) and len(right) > len(left)
    for k, line in enumerate(both):
        expected = (left[k] if k < len(left) else "").ljust(width) + " " * 4 + right[k]
        assert line.rstrip() == expected.rstrip()
    assert all(len(line.rstrip()) <= 60 for line in both)


def test_same_height_as_compares_lines_at_the_previous_render_s_width():
    console = _console(40)
    short = RenderedOnce(Text("one line"))
    console.render_lines(short, console.options)  # shown: its render is the reference
    assert RenderedOnce(Text("another line")).same_height_as(short)
    assert not RenderedOnce(Text("two\nlines")).same_height_as(short)
    assert not RenderedOnce(Text("x " * 30)).same_height_as(short)  # wraps at 40 columns
    assert not RenderedOnce(Text("never compared")).same_height_as(RenderedOnce(Text("never shown")))
    assert not RenderedOnce(Text("x")).same_height_as(None)


async def test_the_panes_updated_without_a_layout_have_a_fixed_height_and_the_budget_its_lines(tmp_path):
    """The status line and the timeline label are updated without a layout of the screen (their CSS
    fixes their height); the Budget pane skips it only where it keeps its number of lines: after
    stepping through requests, it is as tall as what it shows."""
    from textual.css.scalar import Unit

    from inspector.examples import demo_threads
    from inspector.screens.source import MemorySource
    from tests.tui.app_support import make_app, settle
    from widgets.budget import BudgetView

    app = make_app(tmp_path, MemorySource(demo_threads()), thread_id="demo-iris-walkthrough")
    for size in ((80, 24), (160, 48)):
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            for selector in ("#status", "#timeline-label"):
                height = app.query_one(selector).styles.height
                assert height is not None and height.unit is Unit.CELLS, selector
            budget = app.query_one(BudgetView)
            heights = set()
            for key in ("home", "right", "right", "p", "right", "end"):
                await pilot.press(key)
                await settle(app, pilot)
                lines = app.console.render_lines(budget.render_budget(budget.request_count),
                                                 app.console.options.update_width(budget.content_size.width))
                assert budget.content_size.height >= len(lines)
                heights.add(len(lines))
            assert len(heights) > 1  # the steps changed its number of lines: both paths were taken
        app = make_app(tmp_path, MemorySource(demo_threads()), thread_id="demo-iris-walkthrough")


async def test_the_chart_drawn_from_its_row_cache_is_the_chart_drawn_afresh(tmp_path):
    from inspector.examples import demo_threads
    from inspector.screens.source import MemorySource
    from tests.tui.app_support import make_app, settle
    from widgets.timeline import TimelineChart

    app = make_app(tmp_path, MemorySource(demo_threads()), thread_id="demo-iris-walkthrough")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        chart = app.query_one(TimelineChart)
        for key in ("home", "right", "right", "p", "end", "o", "left", "o"):
            await pilot.press(key)
            await settle(app, pilot)
            cached = [chart.render_line(y) for y in range(chart.size.height)]
            chart._rows = None
            chart._styles = None
            assert [chart.render_line(y) for y in range(chart.size.height)] == cached, key


async def test_the_diff_panel_is_laid_out_again_only_where_its_lines_change(tmp_path, monkeypatch):
    """The diff panel (an edit shows it for the replay, then for its prices and losses, and again on each
    step) keeps its size without a layout of the screen where its text has as many lines as before; it is
    always as tall as what it shows."""
    from textual.widgets import TabbedContent

    from inspector.examples import demo_threads
    from inspector.screens.source import MemorySource
    from inspector.screens.status import DiffPanel
    from tests.tui.app_support import make_app, settle

    layouts: list[bool] = []
    update = DiffPanel.update

    def recorded(self, content="", *, layout: bool = True) -> None:
        layouts.append(layout)
        update(self, content, layout=layout)

    monkeypatch.setattr(DiffPanel, "update", recorded)
    app = make_app(tmp_path, MemorySource(demo_threads()), thread_id="demo-iris-walkthrough")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.query_one(TabbedContent).active = "config"
        await settle(app, pilot)
        panel = app.query_one(DiffPanel)
        for step in ("edit", "home", "right", "right", "edit", "end", "left"):
            if step == "edit":
                threshold = app.main_screen.view.config["context.compaction_threshold"]
                app.main_screen.set_config_value("context.compaction_threshold", round(threshold - 0.05, 2))
            else:
                app.main_screen.query_one("#timeline").focus()
                await pilot.press(step)
            await settle(app, pilot)
            lines = app.console.render_lines(panel._shown, app.console.options.update_width(panel.content_size.width))
            assert panel.content_size.height == len(lines)
    assert True in layouts and False in layouts  # both paths were taken


def test_keeps_size_where_the_lines_fit_what_the_widget_was_laid_out_to():
    """`keeps_size`: no layout where the widget is not laid out at all, or where its new lines need the
    height it has; a layout wherever the height it would get is unknown or different."""
    from types import SimpleNamespace

    from textual.geometry import Size

    console = _console(40)
    three = RenderedOnce(Text("a\nb\nc"))
    console.render_lines(three, console.options)  # shown: its render is the reference

    def widget(height: int, on_screen: bool = True):
        return SimpleNamespace(is_on_screen=on_screen, size=Size(40, height))

    # laid out to its own 3 lines (height: auto, no min-height at work)
    assert RenderedOnce(Text("x\ny\nz")).keeps_size(three, widget(3), same_width=True)
    assert not RenderedOnce(Text("x\ny")).keeps_size(three, widget(3), same_width=True)  # it would shrink
    assert not RenderedOnce(Text("1\n2\n3\n4")).keeps_size(three, widget(3), same_width=True)
    # laid out taller than its 3 lines (a min-height): anything up to that height keeps it
    assert RenderedOnce(Text("x\ny")).keeps_size(three, widget(5), same_width=True)
    assert RenderedOnce(Text("1\n2\n3\n4\n5")).keeps_size(three, widget(5), same_width=True)
    assert not RenderedOnce(Text("1\n2\n3\n4\n5\n6")).keeps_size(three, widget(5), same_width=True)
    # another width, or nothing rendered before: unknown
    assert not RenderedOnce(Text("x\ny\nz")).keeps_size(three, widget(3), same_width=False)
    assert not RenderedOnce(Text("x")).keeps_size(RenderedOnce(Text("never shown")), widget(5), same_width=True)
    assert not RenderedOnce(Text("x")).keeps_size(None, widget(5), same_width=True)
    # `shrinks_later`: any fewer lines keep the height it has (blank under them until the next layout)
    assert RenderedOnce(Text("x")).keeps_size(three, widget(3), same_width=True, shrinks_later=True)
    assert not RenderedOnce(Text("1\n2\n3\n4")).keeps_size(three, widget(3), same_width=True, shrinks_later=True)
    # not laid out (a hidden tab): showing it lays it out, whatever it shows by then
    assert RenderedOnce(Text("1\n2\n3\n4\n5\n6")).keeps_size(None, widget(0, on_screen=False), same_width=False)


async def test_an_edit_shown_in_the_budget_tab_lays_nothing_out_and_the_diff_shows_it_when_its_tab_opens(tmp_path):
    """On a tall screen the Budget pane's min-height holds its height through the edit's "pricing…" rows and
    its priced rows (a line fewer or more), and the diff panel sits in the hidden Config tab: an edit needs no layout of the screen
    (each costs 10-30 ms on a long thread). Opening the Config tab lays the diff out with the edit's text."""
    from textual.screen import Screen
    from textual.widgets import TabbedContent

    from inspector.examples import demo_threads
    from inspector.screens.source import MemorySource
    from inspector.screens.status import DiffPanel
    from tests.tui.app_support import make_app, plain, settle
    from widgets.budget import BudgetView

    layouts: list[str] = []
    original = Screen._refresh_layout

    def counted(self, *args, **kwargs):
        layouts.append(type(self).__name__)
        return original(self, *args, **kwargs)

    app = make_app(tmp_path, MemorySource(demo_threads()), thread_id="demo-iris-walkthrough")
    async with app.run_test(size=(160, 64)) as pilot:
        await settle(app, pilot)
        screen = app.main_screen
        screen.set_config_value("context.compaction_threshold", 0.5)  # the first edit builds the Config form
        await settle(app, pilot)
        budget = app.query_one(BudgetView)
        baseline = float(screen.view.baseline_config["context.compaction_threshold"])
        for step, value in enumerate((0.55, 0.6, 0.65)):
            if value == baseline:
                continue
            Screen._refresh_layout = counted
            try:
                screen.set_config_value("context.compaction_threshold", value)
                await settle(app, pilot)
            finally:
                Screen._refresh_layout = original
            assert screen.view.priced and screen.view.config["context.compaction_threshold"] == value
            lines = app.console.render_lines(budget.render_budget(budget.request_count),
                                             app.console.options.update_width(budget.content_size.width))
            assert budget.content_size.height >= len(lines), step  # every row of the pane is on screen
        assert layouts == []
        app.query_one(TabbedContent).active = "config"
        await settle(app, pilot)
        diff = app.query_one(DiffPanel)
        text = plain(diff)
        assert "context.compaction_threshold" in text and "0.65" in text
        shown = app.console.render_lines(diff.content, app.console.options.update_width(diff.content_size.width))
        assert diff.content_size.height == len(shown)  # laid out to the edit's text

