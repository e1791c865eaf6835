"""Binding ids and the config file's `[keys]` and `[tui]` tables: a keymap rebinds a key, settings
reach the app, a bad table is one line and the defaults."""

from __future__ import annotations

import inspect

import inspector.screens.help
import inspector.screens.keys
import inspector.screens.sweep
import widgets.blocks
import widgets.config_form
import widgets.linetable
import widgets.threads
import widgets.timeline
from inspector.screens.help import HelpScreen
from inspector.screens.keys import APP_BINDINGS, MAIN_BINDINGS, binding_ids
from tests.tui.app_support import SIZE, make_app, plain, settle


def test_every_binding_has_an_id_and_ids_are_unique():
    modules = (inspector.screens.keys, inspector.screens.help, inspector.screens.sweep, widgets.blocks,
               widgets.config_form, widgets.linetable, widgets.threads, widgets.timeline)
    bindings = [*APP_BINDINGS, *MAIN_BINDINGS]
    for module in modules:
        for _, owner in inspect.getmembers(module, inspect.isclass):
            if owner.__module__ == module.__name__:
                bindings += list(owner.__dict__.get("BINDINGS", ()))
    assert len(bindings) > 40
    assert [b for b in bindings if not b.id] == []
    ids = [b.id for b in bindings]
    assert len(ids) == len(set(ids)) and set(ids) == set(binding_ids())


async def test_a_keymap_in_the_config_file_rebinds_a_key(tmp_path):
    (tmp_path / "config.toml").write_text('[keys]\nprevious-compaction = "P"\nhelp = "f2"\n')
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        last = app.main_screen.request_index
        assert last > 40
        await pilot.press("p")  # no longer bound
        assert app.main_screen.request_index == last
        await pilot.press("P")
        assert app.main_screen.request_index == 40 and app.main_screen.current_request.compaction is not None
        await pilot.press("f2")
        assert isinstance(app.screen, HelpScreen)
        assert "f2" in plain(app.screen.query_one("#help-table")).lower()


async def test_tui_settings_reach_the_app_and_arguments_win(tmp_path):
    (tmp_path / "config.toml").write_text('[tui]\ntheme = "textual-light"\npoll_interval = 2.5\npane_throttle = 0.2\n')
    app = make_app(tmp_path, pane_throttle=None)
    async with app.run_test(size=SIZE):
        screen = app.main_screen
        assert (app.theme, screen.live_tail.interval, screen.panes.throttle) == ("textual-light", 2.5, 0.2)
    app = make_app(tmp_path, pane_throttle=0, poll_interval=0.5)
    async with app.run_test(size=SIZE):
        assert (app.main_screen.live_tail.interval, app.main_screen.panes.throttle) == (0.5, 0)


async def test_a_bad_keys_table_is_one_line_and_the_defaults(tmp_path):
    (tmp_path / "config.toml").write_text('[keys]\nno-such-binding = "x"\n')
    app = make_app(tmp_path)
    notes: list[str] = []
    app.notify = lambda message, **kw: notes.append(message)  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("p")
        assert app.main_screen.current_request.compaction is not None  # the default binding still works
    [note] = [n for n in notes if "keys.no-such-binding" in n]
    assert "\n" not in note and "config.toml" in note
