"""A new thread on screen before its replays (issue 28 item 5): its recorded counts first, then its
first replay, and the reproduction of its recorded compactions (a decide replay of its own) last.

The simulators here hold the replays at a gate the test opens, so each stage is seen on screen while
the next one is still running. The gates' waits have a generous safety net only: the tests follow
the app's progress (the simulator entered, the messages handled), never the clock."""

from __future__ import annotations

import asyncio
import threading

import pytest
from textual.widgets import Static

from inspector.importers import parse_text
from inspector.screens.source import MemorySource
from inspector.screens.view import default_simulator, recorded_points, timeline_points
from tests.paths import REAL
from tests.tui.app_support import SIZE, coding_thread, make_app, plain, settle
from widgets.timeline import TimelineChart

SESSION = "claude-code-session-with-compaction.jsonl"
SAFETY_NET = 120  # seconds: only a broken app waits this long at a gate


def _session():
    text = (REAL / SESSION).read_text(encoding="utf-8")
    return parse_text(text, SESSION)[1].threads[0]


class Gate:
    """A simulator that replays as the app does, but holds the replays `held` picks until opened."""

    def __init__(self, held) -> None:
        self.held = held
        self.entered = threading.Event()
        self.opened = threading.Event()
        self.fail: str | None = None
        self.modes: list[str] = []

    def __call__(self, thread, config, *, compactions):
        self.modes.append(compactions)
        if self.held(compactions):
            self.entered.set()
            self.opened.wait(SAFETY_NET)
            if self.fail is not None:
                raise RuntimeError(self.fail)
        return default_simulator(thread, config, compactions=compactions)

    async def reached(self, pilot) -> None:
        """Until a held replay is waiting at the gate, then until the UI has handled what came before."""
        assert await asyncio.to_thread(self.entered.wait, SAFETY_NET), "the replay never reached the gate"
        for _ in range(3):
            await pilot.pause()


async def _replayed(app, pilot) -> None:
    """Until the edits' replays (not the held reproduction) are done and their views shown."""
    await app.workers.wait_for_complete([w for w in app.workers if w.group == "engine"])
    for _ in range(3):
        await pilot.pause()


async def test_the_recorded_counts_are_on_the_chart_while_the_first_replay_runs(tmp_path):
    thread = _session()
    gate = Gate(lambda mode: True)
    app = make_app(tmp_path, MemorySource([thread]), thread_id=thread.id, simulator=gate)
    async with app.run_test(size=SIZE) as pilot:
        await gate.reached(pilot)
        screen = app.main_screen
        assert screen.view is None  # nothing replayed yet
        chart = app.query_one(TimelineChart)
        assert [p.recorded_tokens for p in chart.points] == [r.prompt_tokens for r in thread.requests]
        assert sum(p.recorded_compaction for p in chart.points) == len(thread.summaries) == 1
        assert chart.cursor == len(thread.requests) - 1
        status = plain(app.query_one("#status", Static))
        assert "recorded counts shown · replaying under claude-code…" in status
        assert f"{len(thread.messages):,} messages · {len(thread.requests):,} requests" in status
        assert screen.recorded_shown_at is not None and screen.first_view_at is None
        gate.opened.set()
        await settle(app, pilot)
        assert screen.view is not None and screen.first_view_at >= screen.recorded_shown_at
        assert chart.points == timeline_points(screen.view)  # the replay's bars now, with its compactions
        assert any(p.compaction for p in chart.points)
        assert "claude-code reproduces 1 of 1 recorded compaction" in plain(app.query_one("#status", Static))


async def test_the_reproduction_is_filled_in_after_the_first_view(tmp_path):
    thread = _session()
    gate = Gate(lambda mode: mode == "decide")  # only the reproduction's decide replay waits
    app = make_app(tmp_path, MemorySource([thread]), thread_id=thread.id, simulator=gate)
    async with app.run_test(size=SIZE) as pilot:
        await gate.reached(pilot)
        first = app.main_screen.view
        assert first is not None and first.compactions == "recorded" and first.requests
        assert first.reproduction is not None and not first.reproduction.known
        status = plain(app.query_one("#status", Static))
        assert "does claude-code reproduce the 1 recorded compaction? replaying…" in status
        assert "reproduces 1 of 1" not in status
        # an edit made meanwhile shares the one result
        app.main_screen.set_config_value("context.window", 190_000)
        await _replayed(app, pilot)
        edited = app.main_screen.view
        assert edited is not first and edited.diff is not None and edited.reproduction is first.reproduction
        app.main_screen.set_config_value("context.window", first.config["context.window"])  # back to baseline
        await _replayed(app, pilot)
        assert "replaying…" in plain(app.query_one("#status", Static))
        gate.opened.set()
        await settle(app, pilot)
        assert first.reproduction.known and first.reproduction.result == (1, 1)
        assert "claude-code reproduces 1 of 1 recorded compaction" in plain(app.query_one("#status", Static))
        assert gate.modes.count("decide") == 1  # the reproduction replayed once for the three views


async def test_a_failed_reproduction_is_said_unknown_not_zero(tmp_path):
    thread = _session()
    gate = Gate(lambda mode: mode == "decide")
    gate.fail = "decide replay exploded"
    gate.opened.set()
    app = make_app(tmp_path, MemorySource([thread]), thread_id=thread.id, simulator=gate)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        view = app.main_screen.view
        assert view is not None and view.reproduction.known and view.reproduction.result is None
        status = plain(app.query_one("#status", Static))
        assert "whether claude-code reproduces the recorded compaction is unknown: decide replay exploded" in status
        assert "reproduces 0" not in status


def test_recorded_points_are_the_recorded_counts_or_nothing():
    thread = coding_thread(turns=3)
    points = recorded_points(thread)
    assert [p.prompt_tokens for p in points] == [r.prompt_tokens for r in thread.requests]
    assert not any(p.compaction or p.failed for p in points)
    derived = type(thread)(id="derived", title="derived", messages=thread.messages, window=20_000)
    assert recorded_points(derived) == []  # nothing recorded: no chart of zeros


async def test_the_config_form_is_not_composed_beside_the_first_replay(tmp_path):
    """Its rows (about half of the app's widgets) are made after the first replay is painted, or when
    the Config tab is shown before: then with the keys the form had (the default profile's), the
    focus on its first field, and the thread's own once its first view arrives."""
    from textual.widgets import Input

    from inspector.config import PROFILE_KEYS, Config
    from widgets.config_form import ConfigForm, format_value, widget_id

    thread = _session()
    gate = Gate(lambda mode: True)
    app = make_app(tmp_path, MemorySource([thread]), thread_id=thread.id, simulator=gate)
    async with app.run_test(size=SIZE) as pilot:
        await gate.reached(pilot)
        form = app.query_one(ConfigForm)
        assert app.main_screen.view is None and not form.built and not form.query("*")
        await pilot.press("4")
        await pilot.pause()
        default = Config()
        assert form.built and app.focused.id == widget_id(PROFILE_KEYS[default.profile][0])
        gate.opened.set()
        await settle(app, pilot)
        view = app.main_screen.view
        assert view is not None and view.config.profile == "claude-code" != default.profile
        for key in PROFILE_KEYS["claude-code"]:
            field = form.query_one("#" + widget_id(key))
            shown = format_value(view.config[key]) if isinstance(field, Input) else view.config[key]
            assert field.value == shown, key
        assert app.query_one("#cfg-profile").value == "claude-code"


@pytest.mark.parametrize("prebuild", [True, False])
async def test_the_config_form_is_built_after_the_first_replay_unless_told_to_wait_for_its_tab(tmp_path, prebuild):
    """The app's default: the form's rows are made once the first replay is painted, so the Config tab
    opens at once. `prebuild_config_form=False` (what the other app tests use): made when the tab opens."""
    from widgets.config_form import ConfigForm

    thread = _session()
    app = make_app(tmp_path, MemorySource([thread]), thread_id=thread.id, prebuild_config_form=prebuild)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        form = app.query_one(ConfigForm)
        assert app.main_screen.view is not None
        assert form.built is prebuild and bool(form.query("*")) is prebuild
        await pilot.press("4")
        await settle(app, pilot)
        assert form.built and form.query("*")
