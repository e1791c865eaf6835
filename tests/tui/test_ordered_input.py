"""widgets.ordered_input.OrderedInput: keys handed over at once (a busy app, a fast typist, tmux
send-keys) edit a field in the order they were typed."""

from __future__ import annotations

from textual import events
from textual.widgets import Input, TabbedContent

from tests.tui.app_support import make_app, settle
from widgets.config_form import widget_id


def _burst(app, keys: list[tuple[str, str | None]]) -> None:
    """What the terminal driver does with keys that came in one read: every one posted before any is handled."""
    for key, character in keys:
        app.post_message(events.Key(key, character))


async def test_a_burst_of_editing_keys_in_a_config_field_applies_in_order(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.query_one(TabbedContent).active = "config"
        await settle(app, pilot)
        key = "context.prune_protect_turns"
        field = app.query_one("#" + widget_id(key), Input)
        field.focus()
        await settle(app, pilot)
        assert field.value == "2" and app.main_screen.view.config[key] == 2
        # home, delete to the end, type 60, submit: Input's bindings ran after the digits (an empty field)
        _burst(app, [("ctrl+a", None), ("ctrl+k", None), ("6", "6"), ("0", "0"), ("enter", "\r")])
        await settle(app, pilot)
        assert field.value == "60" and app.main_screen.view.config[key] == 60
        # a cursor move between typed characters: "1" lands where the cursor was moved to
        _burst(app, [("end", None), ("left", None), ("1", "1"), ("enter", "\r")])
        await settle(app, pilot)
        assert field.value == "610" and app.main_screen.view.config[key] == 610
        # keys the field has no binding for still reach the app: escape gives the timeline the focus
        _burst(app, [("backspace", None), ("escape", None)])
        await settle(app, pilot)
        assert app.focused is not None and app.focused.id == "timeline"


async def test_a_burst_in_the_thread_filter_applies_in_order(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("slash")
        await settle(app, pilot)
        field = app.query_one("#thread-filter", Input)
        assert app.focused is field
        _burst(app, [(c, c) for c in "xyz"] + [("ctrl+a", None), ("ctrl+k", None), ("i", "i"), ("r", "r")])
        await settle(app, pilot)
        assert field.value == "ir"
