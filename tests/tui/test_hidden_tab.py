"""widgets.hidden_tab: a pane in a hidden tab takes each update (what it shows is the new content), but
does not make the next paint arrange the whole screen again; shown, it is laid out to its new content."""

from __future__ import annotations

from textual._compositor import Compositor
from textual.widgets import Static, TabbedContent

from inspector.examples import demo_threads
from inspector.screens.source import MemorySource
from inspector.screens.status import DiffPanel
from tests.tui.app_support import make_app, plain, settle
from widgets.budget import BudgetView
from widgets.hidden_tab import QuietWhileHidden, in_hidden_tab


def _hidden_updates(monkeypatch) -> list[str]:
    """The widgets the screen was told to repaint while they were not displayed (what throws the
    compositor's map of the whole screen away)."""
    hidden: list[str] = []
    original = Compositor.update_widgets

    def update_widgets(self, widgets):
        visible = self.visible_widgets.keys()
        hidden.extend(type(w).__name__ for w in widgets if w not in visible)
        return original(self, widgets)

    monkeypatch.setattr(Compositor, "update_widgets", update_widgets)
    return hidden


async def test_an_edit_from_the_config_tab_leaves_the_hidden_budget_pane_quiet_until_shown(tmp_path, monkeypatch):
    app = make_app(tmp_path, MemorySource(demo_threads()), thread_id="demo-iris-walkthrough")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        tabs = app.query_one(TabbedContent)
        tabs.active = "config"
        await settle(app, pilot)
        budget = app.query_one(BudgetView)
        assert in_hidden_tab(budget) and not in_hidden_tab(app.query_one(DiffPanel))
        before = plain(budget)
        hidden = _hidden_updates(monkeypatch)
        window = int(app.main_screen.view.config["context.window"]) // 2
        app.main_screen.set_config_value("context.window", window)
        await settle(app, pilot)
        assert "BudgetView" not in hidden  # updated while hidden, and the screen was not told
        assert plain(budget) != before and f"{window:,}" in plain(budget)  # but it holds the edit's budget
        tabs.active = "budget"
        await settle(app, pilot)
        assert not in_hidden_tab(budget) and not budget._missed_refresh
        lines = app.console.render_lines(budget.render_budget(budget.request_count),
                                         app.console.options.update_width(budget.content_size.width))
        assert budget.content_size.height == len(lines)  # laid out to what it shows now
        painted = "\n".join(strip.text for strip in budget.render_lines(budget.size.region))
        assert f"{window:,}" in painted  # and painted from it, not from the lines cached before the edit


async def test_an_edit_from_the_budget_tab_leaves_the_hidden_diff_panel_quiet(tmp_path, monkeypatch):
    app = make_app(tmp_path, MemorySource(demo_threads()), thread_id="demo-iris-walkthrough")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        diff = app.query_one(DiffPanel)
        assert in_hidden_tab(diff)
        hidden = _hidden_updates(monkeypatch)
        app.main_screen.set_config_value("context.window", int(app.main_screen.view.config["context.window"]) // 2)
        await settle(app, pilot)
        assert "DiffPanel" not in hidden and "context.window" in plain(diff)
        app.query_one(TabbedContent).active = "config"
        await settle(app, pilot)
        painted = "\n".join(strip.text for strip in diff.render_lines(diff.size.region))
        assert "context.window" in painted


def test_a_widget_outside_any_hidden_ancestor_refreshes_as_textual_does():
    class Pane(QuietWhileHidden, Static):
        pass

    pane = Pane("x")
    assert not in_hidden_tab(pane)  # not mounted: no ancestor, displayed
    pane.display = False
    assert in_hidden_tab(pane)
    assert pane.refresh() is pane and not pane._missed_refresh  # not mounted: textual's own refresh
