"""Colours come from the theme (issue 25): a theme change reaches the timeline, the tables, the panes'
text and the sweep screen's table, each drawn in the new theme's own colours."""

from __future__ import annotations

from rich.color import Color as RichColor
from textual.color import Color
from textual.widget import Widget
from textual.widgets import DataTable

from inspector.examples import WALKTHROUGH_ID, walkthrough_thread
from inspector.screens.source import MemorySource
from inspector.screens.sweep import SweepScreen
from tests.tui.app_support import SIZE, make_app, settle
from widgets.linetable import LineTable
from widgets.timeline import BAR_CHARS, TimelineChart


def _colours(widget: Widget, *, rows: range | None = None, chars: str | None = None) -> set[tuple]:
    """(foreground, background) of what `widget` draws on `rows` (the characters `chars` only)."""
    found = set()
    for y in rows if rows is not None else range(widget.size.height):
        for segment in widget.render_line(y):
            if segment.style is not None and segment.text.strip() and (chars is None or segment.text.strip()[0] in chars):
                found.add((segment.style.color, segment.style.bgcolor))
    return found


def _theme_colour(app, variable: str) -> RichColor:
    return Color.parse(app.get_css_variables()[variable]).rich_color


async def test_a_theme_change_reaches_the_timeline_the_tables_and_the_panes(tmp_path):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        chart = app.query_one(TimelineChart)
        table = app.query_one("#threads-table", LineTable)
        status = app.query_one("#status")
        drawn = {"bars": lambda: {fg for fg, _bg in _colours(chart, chars=BAR_CHARS[1:])},
                 "header": lambda: _colours(table, rows=range(1)),
                 "status": lambda: {fg for fg, _bg in _colours(status)}}
        before = {name: get() for name, get in drawn.items()}
        assert _theme_colour(app, "primary") in before["bars"]  # the default theme's own colours
        assert _theme_colour(app, "text-secondary") in before["status"]  # "N compactions" (the walkthrough has them)
        app.theme = "nord"
        await pilot.pause()
        await pilot.pause()
        after = {name: get() for name, get in drawn.items()}
        for name in drawn:
            assert after[name] != before[name], name
        assert _theme_colour(app, "primary") in after["bars"]
        assert any(bg == _theme_colour(app, "panel") for _fg, bg in after["header"])
        assert _theme_colour(app, "text-secondary") in after["status"]
        assert _theme_colour(app, "text-secondary") not in before["status"]


async def test_a_theme_change_reaches_the_sweep_screens_table(tmp_path):
    app = make_app(tmp_path, source=MemorySource([walkthrough_thread()]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.main_screen.action_sweep()
        await pilot.pause()
        sweep = app.screen
        assert isinstance(sweep, SweepScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = sweep.query_one(DataTable)
        assert table.row_count > 1
        marked = next(i for i in range(table.row_count) if str(table.get_row_at(i)[0]).endswith("*"))
        row_line = range(marked + 1, marked + 2)  # under the header line
        before = {fg for fg, _bg in _colours(table, rows=row_line)}
        assert _theme_colour(app, "text-accent") in before  # the thread's own value, in the recorded style
        app.theme = "nord"
        await pilot.pause()
        await pilot.pause()
        after = {fg for fg, _bg in _colours(table, rows=row_line)}
        assert _theme_colour(app, "text-accent") in after and after != before
