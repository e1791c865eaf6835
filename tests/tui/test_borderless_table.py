"""`widgets.borderless_table.BorderlessTable` writes Rich's own segments: every table it renders itself is held,
segment for segment and in its measurement, to the `rich.table.Table` it stands for."""

from __future__ import annotations

import io

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from rich.console import Console
from rich.errors import MarkupError
from rich.measure import Measurement
from rich.text import Text

from widgets.borderless_table import BorderlessColumn, BorderlessTable

STYLES = ["", "dim", "bold", "red", "bold dim", "italic blue"]
WORDS = st.text(alphabet="ab Z9 ,.:()-%漢[]", max_size=14)


@st.composite
def cells(draw):
    plain = draw(WORDS)
    if draw(st.booleans()):
        return plain
    text = Text(plain, style=draw(st.sampled_from(STYLES)))
    if plain and draw(st.booleans()):
        start = draw(st.integers(0, len(plain) - 1))
        text.stylize(draw(st.sampled_from(STYLES[1:])), start, draw(st.integers(start + 1, len(plain))))
    if draw(st.booleans()):
        text.append(draw(WORDS), style=draw(st.sampled_from(STYLES)))
    return text


@st.composite
def tables(draw):
    n = draw(st.integers(1, 4))
    columns = [BorderlessColumn(draw(WORDS), draw(st.sampled_from(["left", "right", "center"])), draw(st.sampled_from(STYLES)))
               for _ in range(n)]
    table = BorderlessTable(*columns, show_header=draw(st.booleans()), header_style=draw(st.sampled_from(STYLES)))
    for _ in range(draw(st.integers(0, 6))):
        table.add_row(*(draw(cells()) for _ in range(n)))
    return table


def _console(width: int) -> Console:
    return Console(width=width, file=io.StringIO(), color_system="truecolor", legacy_windows=False)


def _outcome(call):
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - a markup error must be the same error
        return type(exc)


def _path(table: BorderlessTable, console: Console, options) -> str:
    try:
        if table._plan(console, options, wrapped=False) is not None:
            return "every cell on one line"
        if table._plan(console, options) is not None:
            return "cells wrapped in Rich's column widths"
    except MarkupError:
        pass
    return "Rich's own table"


@given(tables(), st.integers(1, 90), st.booleans())
def test_a_borderless_table_renders_and_measures_as_the_rich_table_it_stands_for(table, width, markup):
    console = _console(width)
    options = console.options.update(markup=markup)
    event(_path(table, console, options))
    assert _outcome(lambda: list(console.render(table, options))) == \
        _outcome(lambda: list(console.render(table.table(), options)))
    assert _outcome(lambda: Measurement.get(console, options, table)) == \
        _outcome(lambda: Measurement.get(console, options, table.table()))


def test_the_fast_path_is_taken_where_the_table_fits_and_left_where_a_cell_would_wrap(monkeypatch):
    table = BorderlessTable(BorderlessColumn("Category"), BorderlessColumn("Tokens", justify="right"), show_header=True,
                      header_style="bold dim")
    table.add_row(Text("##", style="red"), "1,234")
    table.add_row("History sent", Text("12", style="bold"))
    rich_rendered = []
    original = BorderlessTable.table

    def counted(self):
        rich_rendered.append(1)
        return original(self)

    monkeypatch.setattr(BorderlessTable, "table", counted)
    wide = _console(80)
    segments = list(wide.render(table))
    assert not rich_rendered  # written by the fast path ...
    monkeypatch.undo()
    assert segments == list(wide.render(table.table()))  # ... as Rich writes it
    narrow = _console(12)  # "History sent" no longer fits: Rich's own table wraps it
    assert list(narrow.render(table)) == list(narrow.render(table.table()))
    assert len(narrow.render_lines(table)) > len(wide.render_lines(table))


def test_a_row_must_have_a_cell_per_column():
    table = BorderlessTable(BorderlessColumn("a"), BorderlessColumn("b"))
    with pytest.raises(ValueError, match="2 columns"):
        table.add_row("x")


@pytest.mark.parametrize("width", [12, 16, 24, 30])
def test_wrapped_headers_and_cells_are_aligned_as_rich_aligns_them(width):
    """A header that wraps sits at the bottom of its row, a body cell at the top (Rich's own rule):
    fixed tables narrow enough that both happen, beside one-line cells of every justification."""
    table = BorderlessTable(BorderlessColumn("a long header"), BorderlessColumn("x", "right", "dim"),
                            BorderlessColumn("mid", "center"), show_header=True, header_style="bold")
    table.add_row("a cell that wraps here", Text("9", style="red"), "c")
    table.add_row("b", "10", Text("a centered one", style="italic"))
    console = _console(width)
    assert table._plan(console, console.options) is not None  # our own rendering, not Rich's table
    assert list(console.render(table)) == list(console.render(table.table()))
    assert len(console.render_lines(table)) > 3  # rows of several lines: the alignment was exercised
