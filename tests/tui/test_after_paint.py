"""What waits for the main screen's paint (`controllers.after_paint`: an edit's prices and losses) runs
after its next paint, also one without a layout of the screen (a pane whose size the CSS fixes), and
after its wait at the latest where nothing is painted. The waits follow the app's progress: the queue's
own wait is set far beyond the test so that only a paint can run it in time."""

from __future__ import annotations

from rich.text import Text

from inspector.screens.status import StatusLine
from tests.tui.app_support import SIZE, make_app, settle

FAR = 120.0  # seconds: the queue's wait, where only a paint may run it


async def test_a_paint_without_a_layout_runs_what_waits_for_it(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.main_screen
        queue = screen.after_paint
        queue.wait = FAR
        layouts: list[object] = []
        screen.screen_layout_refresh_signal.subscribe(screen, layouts.append)
        before = queue.painted_runs
        ran: list[int] = []
        queue.queue(lambda: ran.append(len(layouts)))
        for _ in range(3):  # nothing changed: nothing painted, nothing run
            await pilot.pause()
        assert not ran and queue.pending
        screen.query_one(StatusLine).update(Text("a new status"))  # repainted in place: no layout
        for _ in range(20):
            await pilot.pause()
            if ran:
                break
        assert ran == [0] and not layouts and queue.painted_runs == before + 1 and not queue.pending


async def test_where_nothing_is_painted_the_wait_runs_it(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        queue = app.main_screen.after_paint
        queue.wait = 0.01
        before = queue.painted_runs
        ran: list[bool] = []
        queue.queue(lambda: ran.append(True))
        await queue.drained()
        assert ran == [True] and queue.painted_runs == before and not queue.pending
