"""The sweep screen: rows fill in from a worker, the plot follows, the thread's own value is marked."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable, Input, Select
from textual_plotext import PlotextPlot

from inspector.examples import walkthrough_thread
from inspector.screens.source import MemorySource
from inspector.screens.sweep import SweepScreen, numeric_keys
from inspector.sweep import default_values
from tests.paths import REAL
from tests.tui.app_support import make_app, settle


async def _open_sweep(app, pilot) -> SweepScreen:
    await settle(app, pilot)
    app.main_screen.action_sweep()
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, SweepScreen)
    await app.workers.wait_for_complete()
    await pilot.pause()
    return screen


async def test_the_sweep_screen_replays_each_value_and_marks_the_baseline(tmp_path):
    thread = walkthrough_thread()
    app = make_app(tmp_path, source=MemorySource([thread]))
    async with app.run_test(size=(160, 44)) as pilot:
        screen = await _open_sweep(app, pilot)
        assert screen.compactions == "decide"
        values = default_values("context.compaction_threshold", screen.base["context.compaction_threshold"])
        assert [r.config["context.compaction_threshold"] for r in screen.rows] == values
        table = screen.query_one(DataTable)
        assert table.row_count == len(values)
        marked = [i for i in range(table.row_count) if str(table.get_row_at(i)[0]).endswith("*")]
        assert marked == [values.index(screen.base["context.compaction_threshold"])]
        assert [r.baseline for r in screen.rows].count(True) == 1
        plot = screen.query_one(PlotextPlot)
        drawn = Text.from_ansi(plot.plt.build()).plain
        assert "cost ($) vs context.compaction_threshold" in drawn and "baseline" in drawn
        lows = [r for r in screen.rows if r.config["context.compaction_threshold"] == values[0]]
        highs = [r for r in screen.rows if r.config["context.compaction_threshold"] == values[-1]]
        assert lows[0].compactions >= highs[0].compactions


async def test_a_new_key_and_values_run_again_and_a_bad_value_says_why(tmp_path):
    app = make_app(tmp_path, source=MemorySource([walkthrough_thread()]))
    async with app.run_test(size=(160, 44)) as pilot:
        screen = await _open_sweep(app, pilot)
        assert "context.prune_protect_turns" in numeric_keys(screen.base.profile)
        screen.query_one("#sweep-key", Select).value = "context.prune_protect_turns"
        await pilot.pause()
        values_input = screen.query_one("#sweep-values", Input)
        values_input.value = "1, 2, 3"
        screen.action_run()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [r.config for r in screen.rows] == [{"context.prune_protect_turns": v} for v in (1, 2, 3)]
        screen.query_one("#sweep-mode", Select).value = "recorded"
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.compactions == "recorded" and len(screen.rows) == 3
        assert "compaction keys change nothing" in str(screen.query_one("#sweep-title").render())
        values_input.value = "1, -4"
        screen.action_run()
        await pilot.pause()
        status = str(screen.query_one("#sweep-status").render())
        assert "context.prune_protect_turns must be >= 0" in status
        await pilot.press("escape")
        assert not isinstance(app.screen, SweepScreen)


def test_default_values_stay_valid_and_hold_the_current_value():
    ratios = default_values("context.compaction_threshold", 0.75)
    assert 0.75 in ratios and all(0 < v <= 1 for v in ratios) and ratios == sorted(ratios)
    turns = default_values("context.prune_protect_turns", 2)
    assert 2 in turns and all(isinstance(v, int) and v >= 0 for v in turns)
    pct = default_values("claude_code.autocompact_pct_override", 0)
    assert pct[0] == 0 and pct[1:] == list(range(50, 100, 5))
    windows = default_values("context.window", 200_000)
    assert 200_000 in windows and min(windows) > 0


async def test_the_status_line_and_the_budget_pane_show_what_the_thread_and_the_request_cost(tmp_path):
    from inspector.screens.status import StatusLine
    from tests.engine.test_cache import _turns_thread
    from widgets.budget import BudgetView
    from widgets.cost import cost_rows

    thread = _turns_thread()
    app = make_app(tmp_path, source=MemorySource([thread]))
    async with app.run_test(size=(180, 60)) as pilot:
        await settle(app, pilot)
        totals = app.main_screen.view.cost_totals
        assert totals is not None and totals.cost > 0
        status = str(app.query_one(StatusLine).render())
        assert f"${totals.cost:,.2f}" in status and f"{totals.cache_read_share:.0%} cache read" in status
        breaks = [r.index for r in app.main_screen.view.requests if app.main_screen.view.audit(r.index).budget.cache_break is not None]
        assert breaks, "iris prunes old tool outputs at each new turn: some request breaks the cache"
        app.main_screen.jump_to_request(breaks[0])
        await settle(app, pilot)
        budget = app.query_one(BudgetView)
        text = Text()
        wide = app.console.options.update(width=400)  # one line per row: the columns do not interleave
        for line in app.console.render_lines(budget.render_budget(len(app.main_screen.view.requests)), wide):
            for seg in line:
                text.append(seg.text)
        plain = " ".join(text.plain.split())
        assert "input" in plain and "cache write" in plain and "cache read" in plain and "output" in plain
        from widgets.names import names_of

        break_row = dict(cost_rows(app.main_screen.current_request, names_of(app.main_screen.view.thread)))["Cache break"].plain
        assert break_row.startswith("pruning: block ") and " was pruned or dropped; " in break_row
        assert " ".join(break_row.split()) in plain


def _claude_code_session():

    from inspector.importers import parse_text

    path = REAL / \
        "claude-code-session-with-compaction.jsonl"
    _, result = parse_text(path.read_text(encoding="utf-8"), path.name)
    return max(result.threads, key=lambda t: len(t.requests))


async def test_the_sweep_screen_is_readable_at_80x24_and_plots_unset_where_it_behaves(tmp_path):
    """Issue 22 item 9 (and 10 for its select): at 80x24 the values field was 4-6 characters wide, the
    cost columns lay under the plot, digits ran into the axis, and `0 (unset)` was drawn at x=0."""
    from inspector.screens.sweep import key_label
    from inspector.sweep import plot_x

    thread = _claude_code_session()
    app = make_app(tmp_path, source=MemorySource([thread]))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.main_screen.action_sweep()
        await pilot.pause()
        await app.workers.wait_for_complete()  # the default values' run, before it is replaced
        screen = app.screen
        assert screen.key == "claude_code.autocompact_pct_override"
        values = screen.query_one("#sweep-values", Input)
        assert values.size.width >= 20
        values.value = "0, 50, 90"
        screen.action_run()
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = screen.query_one(DataTable)
        assert table.region.width >= 76 and table.region.bottom <= screen.query_one(PlotextPlot).region.y
        labels = [str(c.label) for c in table.columns.values()]
        assert labels[-3:] == ["cost", "summ.", "lost"] and "b2b" in labels
        assert sum(c.get_render_width(table) for c in table.columns.values()) <= table.region.width
        assert str(table.get_row_at(0)[0]).startswith("0 (unset)")
        drawn = Text.from_ansi(screen.query_one(PlotextPlot).plt.build()).plain.splitlines()
        ticks = [line for line in drawn if "┤" in line]
        assert ticks and all(line[line.index("┤") - 1] == " " for line in ticks)  # a space before the axis
        assert any("unset 0 at 100" in line for line in drawn)
        tooltip = screen.query_one(PlotextPlot).tooltip
        assert [c.header for c in tooltip.columns][-3:] == ["summarization", "compactions", "back-to-back"]
        assert tooltip.row_count == 3
    assert plot_x("claude_code.autocompact_pct_override", 0) == 100 and plot_x("codex.auto_compact_token_limit", 0) is None
    assert key_label("claude_code.autocompact_pct_override") == "claude_code.autocompact_pct_override"
    assert key_label("context_editing.clear_tool_inputs_and_more_words") == "ce.clear_tool_inputs_and_more_words"


async def test_the_sweep_screen_says_its_pace_and_ctrl_x_cancels_it(tmp_path, monkeypatch):
    """Issue 27 item 4: while the rows fill in the status says how many, the rate and the time left;
    ctrl+x (also from the values field, whose own ctrl+x is cut) stops the worker, the rows so far stay."""
    import threading

    from inspector import sweep

    real = sweep.sweep_thread
    calls: list[object] = []
    go_on = threading.Event()

    def second_waits(*args, **kwargs):  # the real replay; the second value waits for the test
        calls.append(args[2])
        if len(calls) == 2:
            go_on.wait(timeout=60)
        return real(*args, **kwargs)

    monkeypatch.setattr(sweep, "sweep_thread", second_waits)
    app = make_app(tmp_path, source=MemorySource([walkthrough_thread()]))
    async with app.run_test(size=(160, 44)) as pilot:
        await settle(app, pilot)
        app.main_screen.action_sweep()
        screen = app.screen
        assert isinstance(screen, SweepScreen)
        while len(screen.rows) < 1 or len(calls) < 2:
            await pilot.pause(0.02)
        status = str(screen.query_one("#sweep-status").render())
        total = len(screen.values)
        assert f"1 of {total} configs replayed · " in status and "configs/s" in status and "left" in status
        assert "ctrl+x cancels" in status
        screen.query_one("#sweep-values", Input).focus()
        await pilot.press("ctrl+x")
        go_on.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(screen.rows) == 1 and screen.query_one(DataTable).row_count == 1
        assert len(calls) == 2  # nothing replayed after the cancel
        assert str(screen.query_one("#sweep-status").render()).startswith(f"cancelled after 1 of {total} configs")
        assert screen.query_one("#sweep-values", Input).value  # the field's text was not cut
