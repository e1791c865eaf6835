"""The main screen owns the view and the selection (issue 25): workers hand their results over as
messages the screen handles, the selected request is a reactive whose watcher fills the panes, the
palette's static commands are the App's and its dynamic ones the screen's."""

from __future__ import annotations

from textual._context import active_message_pump
from textual.app import SystemCommand

from inspector.examples import WALKTHROUGH_ID, walkthrough_thread
from inspector.screens.messages import LossesReady, ThreadsListed, ViewReady
from inspector.screens.source import MemorySource
from inspector.screens.sweep import SweepScreen
from inspector.tui.main_screen import MainScreen
from tests.tui.app_support import SIZE, make_app, plain, settle
from widgets.timeline import TimelineChart


async def test_workers_post_their_results_to_the_main_screen(tmp_path):
    seen: list[tuple[str, object]] = []
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)

    def hook(message) -> None:
        if isinstance(message, ThreadsListed | ViewReady | LossesReady | SweepScreen.RowReplayed
                      | SweepScreen.SweepDone):
            seen.append((type(message).__name__, active_message_pump.get()))  # the pump dispatching it

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await settle(app, pilot)
        screen = app.main_screen
        assert isinstance(app.screen, MainScreen) and app.screen is screen
        names = [name for name, _receiver in seen]
        assert names.index("ThreadsListed") < names.index("ViewReady") < names.index("LossesReady")
        assert {receiver for _name, receiver in seen} == {screen}  # never the App
        assert screen.view is not None and screen.view.thread.id == WALKTHROUGH_ID
        seen.clear()
        screen.set_config_value("context.compaction_threshold", 0.5)
        await settle(app, pilot)
        assert [name for name, _r in seen][:2] == ["ViewReady", "LossesReady"]
        assert screen.view.is_what_if
        seen.clear()
        app.call_later(screen.action_sweep)  # from the app's own task, whose context holds the hook
        await pilot.pause()
        sweep = app.screen
        assert isinstance(sweep, SweepScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        rows = [receiver for name, receiver in seen if name == "RowReplayed"]
        assert len(rows) == len(sweep.rows) > 1 and set(rows) == {sweep}
        assert [name for name, _r in seen][-1] == "SweepDone"


async def test_the_selected_request_is_reactive_and_its_watcher_fills_the_panes(tmp_path):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.main_screen
        last = len(screen.view.requests) - 1
        assert screen.request_index == last and screen.follow_latest
        screen.request_index = 7  # set directly: the watcher moves the chart and the label
        await pilot.pause()
        assert app.query_one(TimelineChart).cursor == 7
        assert f"request 8/{last + 1} (index 7)" in plain(app.query_one("#timeline-label"))
        assert screen.current_request.index == 7
        screen.jump_to_request(10_000)  # clamped, and following the newest request again
        await pilot.pause()
        assert screen.request_index == last and screen.follow_latest


async def test_static_commands_are_the_apps_and_offered_over_the_main_screen_only(tmp_path):
    app = make_app(tmp_path, source=MemorySource([walkthrough_thread()]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)

        def titles(screen) -> list[str]:
            return [c.title for c in app.get_system_commands(screen) if isinstance(c, SystemCommand)]

        over_main = titles(app.main_screen)
        assert {"Profile: iris", "Strategy: manual", "Sweep a config key", "Save config to TOML"} <= set(over_main)
        assert not any(t.startswith(("Thread: ", "Block: ", "Request ")) for t in over_main)  # the screen's own
        app.main_screen.action_sweep()
        await pilot.pause()
        assert isinstance(app.screen, SweepScreen)
        over_sweep = titles(app.screen)
        assert {"Theme", "Quit"} <= set(over_sweep)  # textual's own stay
        assert not any(t.startswith(("Profile: ", "Strategy: ", "Sweep ")) for t in over_sweep)
        await app.workers.wait_for_complete()
