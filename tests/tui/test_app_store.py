"""The app on real databases: an imported Claude Code session, live recording, and the demo default."""

from __future__ import annotations

import hashlib
from pathlib import Path

from textual.widgets import Static

from inspector.app import create_app
from inspector.importers import import_paths
from inspector.recording import Recorder
from inspector.store import Store
from tests.paths import REAL
from tests.tui.app_support import SIZE, plain, settle
from widgets.budget import BudgetView
from widgets.linetable import LineTable

FIXTURE = REAL / ("claude-code-session-with-compaction.jsonl")
SESSION = "624a4a58-b34c-462d-a70d-13421c8125a8"


def _import(tmp_path: Path) -> str:
    db = tmp_path / "cc.sqlite"
    store = Store.open(str(db), read_only=False, create=True)
    try:
        import_paths([FIXTURE], store)
    finally:
        store.close()
    return "sqlite:///" + str(db)


async def test_real_claude_code_compaction_shows_what_it_removed_and_the_summary(tmp_path):
    url = _import(tmp_path)
    db = Path(url.removeprefix("sqlite:///"))
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    app = create_app(db_url=url, thread_id=SESSION, live=False, config_file=tmp_path / "c.toml",
                     export_dir=tmp_path, screenshot_dir=tmp_path, pane_throttle=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view.thread.id == SESSION
        recorded = app.main_screen.view.thread.summaries[0]
        assert recorded.meta.get("preTokens") == 155_979
        # Step back from the newest request to the recorded compaction with the compaction keys.
        for _ in range(5):
            if app.main_screen.current_request.request_id == recorded.before_request_id:
                break
            await pilot.press("p")
            await pilot.pause()
        request = app.main_screen.current_request
        assert request.request_id == recorded.before_request_id
        assert "◇ recorded compaction" in plain(app.query_one("#timeline-label", Static))
        budget = plain(app.query_one(BudgetView))
        assert "Recorded compaction" in budget and "155,979" in budget
        # The billed prompt falls across the compaction: about 155.7k before, 36.5k after.
        before = app.main_screen.view.requests[request.index - 1].budget.recorded_prompt_tokens
        assert before > 150_000 and request.budget.recorded_prompt_tokens < 40_000
        # What it removed: the messages before the compaction are not sent verbatim any more.
        await pilot.press("2")
        await pilot.pause()
        index = app.main_screen.view.thread.message_index()
        covered = [b for b in request.blocks if b.message_id in index
                   and index[b.message_id] <= index[recorded.last_message_id]]
        sent = sum(b.tokens_sent for b in covered)
        full = sum(b.tokens for b in covered)
        assert covered and sent < full / 4, (sent, full)
        assert any(str(b.status) == "summarized" for b in covered)
        # The summary that replaced it, listed in the chain with its text.
        await pilot.press("3")
        await pilot.pause()
        view = app.query_one("SummariesView")
        assert view.select_summary(recorded.id)
        await pilot.pause()
        detail = plain(app.query_one("#summary-detail", Static))
        assert recorded.summary.split()[0] in detail and recorded.id in detail
        assert app.query_one("#summaries-table", LineTable).row_count >= 1
    # Viewing never wrote to the database.
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("cc.sqlite")) == ["cc.sqlite"]


async def test_live_mode_picks_up_recorded_messages(tmp_path):
    url = "sqlite:///" + str(tmp_path / "live.sqlite")
    recorder = Recorder(url)
    thread = recorder.open_thread("live agent", "You are an agent.", thread_id="live-1", window=50_000)
    thread.append("user", "first question")
    thread.record_request(120)
    thread.append("assistant", "first answer")
    app = create_app(db_url=url, thread_id="live-1", live=True, poll_interval=0, config_file=tmp_path / "c.toml",
                     export_dir=tmp_path, screenshot_dir=tmp_path, pane_throttle=0)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            assert len(app.main_screen.view.requests) == 1 and app.main_screen.request_index == 0
            thread.append("user", "second question")
            thread.record_request(240)
            app.main_screen.poll_live()
            await settle(app, pilot)
            assert len(app.main_screen.view.requests) == 2 and app.main_screen.request_index == 1
            assert app.main_screen.current_request.budget.recorded_prompt_tokens == 240
            assert "2 requests" in plain(app.query_one("#status", Static))
    finally:
        recorder.close()


async def test_no_database_opens_the_demo(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXT_INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    app = create_app(live=False, config_file=tmp_path / "c.toml")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        ids = {t.id for t in app.main_screen.thread_infos}
        assert {"demo-iris-walkthrough", "demo-shifting-roleplay", SESSION} <= ids
        assert app.main_screen.view is not None and app.main_screen.loading_error is None


async def test_bad_database_is_a_message_not_a_crash(tmp_path):
    app = create_app(db_url=str(tmp_path / "missing" / "nothing.sqlite"), live=False, config_file=tmp_path / "c.toml")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view is None
        assert "cannot open the database" in plain(app.query_one("#status", Static))
