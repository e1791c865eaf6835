"""Snapshots of each main screen on the demo database at 160x48 (pytest-textual-snapshot, Textual pinned).

Regenerate after an intended UI change with `pytest tests/tui/test_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import textual

from inspector.app import InspectorApp, create_app
from inspector.demo import ensure_demo_db
from tests.tui.app_support import SIZE, settle

WALKTHROUGH = "demo-iris-walkthrough"
ROLEPLAY = "demo-shifting-roleplay"
OVERFLOW = "demo-iris-overflow"
CLAUDE_CODE = "624a4a58-b34c-462d-a70d-13421c8125a8"


def test_textual_version_is_pinned():
    assert textual.__version__ == "8.2.8"


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory) -> str:
    return ensure_demo_db(tmp_path_factory.mktemp("demo") / "demo.sqlite")


def _app(demo_url: str, tmp_path: Path, thread_id: str, **kwargs) -> InspectorApp:
    return create_app(
        db_url=demo_url, thread_id=thread_id, live=False, config_file=tmp_path / "config.toml",
        export_dir=tmp_path, screenshot_dir=tmp_path, pane_throttle=0, **kwargs,
    )


def test_budget_at_the_walkthrough_compaction(snap_compare, demo_url, tmp_path):
    app = _app(demo_url, tmp_path, WALKTHROUGH)

    async def run_before(pilot):
        await settle(app, pilot)
        await pilot.press("p")
        await pilot.pause()
        assert app.main_screen.current_request.compaction is not None

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_blocks_with_a_pruned_tool_output(snap_compare, demo_url, tmp_path):
    app = _app(demo_url, tmp_path, WALKTHROUGH)

    async def run_before(pilot):
        await settle(app, pilot)
        await pilot.press("2")
        await pilot.pause()
        request = app.main_screen.current_request
        pruned = next(i for i, b in enumerate(request.blocks) if str(b.status) == "pruned")
        app.query_one("BlocksView").select_block(pruned)
        app.query_one("#blocks-table").focus()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_shifting_request_with_excluded_blocks(snap_compare, demo_url, tmp_path):
    app = _app(demo_url, tmp_path, ROLEPLAY, profile="shifting")

    async def run_before(pilot):
        await settle(app, pilot)
        await pilot.press("2")
        await pilot.pause()
        assert any(str(b.status) == "excluded" for b in app.main_screen.current_request.blocks)
        app.query_one("#blocks-table").focus()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_summary_chain(snap_compare, demo_url, tmp_path):
    app = _app(demo_url, tmp_path, CLAUDE_CODE)

    async def run_before(pilot):
        await settle(app, pilot)
        await pilot.press("3")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_config_edit_with_diff(snap_compare, demo_url, tmp_path):
    app = _app(demo_url, tmp_path, WALKTHROUGH)

    async def run_before(pilot):
        await settle(app, pilot)
        await pilot.press("4")
        app.main_screen.set_config_value("context.window", 100_000)
        await settle(app, pilot)
        assert app.main_screen.view.diff is not None
        await pilot.press("escape")  # leave the field: a blinking text cursor would make the snapshot flaky
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_failed_request(snap_compare, demo_url, tmp_path):
    app = _app(demo_url, tmp_path, OVERFLOW)

    async def run_before(pilot):
        await settle(app, pilot)
        await pilot.press("f")
        await pilot.pause()
        assert app.main_screen.current_request.failed

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_help_screen(snap_compare, demo_url, tmp_path):
    app = _app(demo_url, tmp_path, WALKTHROUGH)

    async def run_before(pilot):
        await settle(app, pilot)
        await pilot.press("f1")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("size", [(80, 24), (120, 36), (160, 48)], ids=["80x24", "120x36", "160x48"])
def test_main_screen_at_common_sizes(snap_compare, demo_url, tmp_path, size):
    """The walkthrough's compaction at each common terminal size: the thread list collapses at 80, narrows
    at 120; every line ends in … where it is cut."""
    app = _app(demo_url, tmp_path, WALKTHROUGH)

    async def run_before(pilot):
        await settle(app, pilot)
        await pilot.press("p")
        await pilot.pause()
        assert app.main_screen.current_request.compaction is not None

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])
def test_blocks_and_since_previous_at_small_sizes(snap_compare, demo_url, tmp_path, size):
    app = _app(demo_url, tmp_path, WALKTHROUGH)

    async def run_before(pilot):
        await settle(app, pilot)
        await pilot.press("p", "5")
        await settle(app, pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


SIZES = [(80, 24), (120, 36), (160, 48)]
SIZE_IDS = ["80x24", "120x36", "160x48"]


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_budget_at_a_real_compaction_at_common_sizes(snap_compare, demo_url, tmp_path, size):
    """Issue 22: the bill first (the request's cost, its summarization call, the cache break named by
    its block), readable at each size."""
    app = _app(demo_url, tmp_path, CLAUDE_CODE)

    async def run_before(pilot):
        await settle(app, pilot)
        await pilot.press("p")
        await settle(app, pilot)
        assert app.main_screen.current_request.compaction is not None and app.main_screen.current_request.budget.summarization

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_lost_facts_at_common_sizes(snap_compare, demo_url, tmp_path, size):
    """Issue 22: the lost facts named by turn and kind, paths shortened from the left."""
    app = _app(demo_url, tmp_path, CLAUDE_CODE)

    async def run_before(pilot):
        await settle(app, pilot)
        await pilot.press("3")
        await settle(app, pilot)
        await app.workers.wait_for_complete()
        await settle(app, pilot)
        assert app.query_one("SummariesView").lost

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_sweep_screen_at_common_sizes(snap_compare, demo_url, tmp_path, size):
    """Issue 22 item 9: the sweep of `claude_code.autocompact_pct_override` over 0, 20 and 50, its
    table over the full width and its plot under it, unset plotted at 100."""
    app = _app(demo_url, tmp_path, CLAUDE_CODE)

    async def run_before(pilot):
        from textual.widgets import Input

        await settle(app, pilot)
        app.main_screen.action_sweep()
        await pilot.pause()
        await app.workers.wait_for_complete()  # the default values' run, before it is replaced
        app.screen.query_one("#sweep-values", Input).value = "0, 20, 50"
        app.screen.action_run()
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.screen.query_one("#sweep-rows").focus()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)
