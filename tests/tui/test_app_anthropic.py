"""The TUI with the anthropic summarizer: progress and tokens spent, and cancel (local fake API)."""

from __future__ import annotations

import pytest

from inspector import service
from inspector.examples import WALKTHROUGH_ID
from tests.fake_anthropic import VALID_SUMMARY_INPUT, FakeAnthropic, Scripted, message_response
from tests.tui.app_support import SIZE, make_app, settle


@pytest.fixture
def fake_api(monkeypatch):
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setattr(service, "_SUMMARIZERS", {})  # a summarizer bound to this server
        yield fake


async def test_llm_summaries_show_progress_and_tokens_spent(tmp_path, fake_api):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view.config["summarization.summarizer"] == "extractive"
        app.main_screen.set_config_value("summarization.summarizer", "anthropic")
        await settle(app, pilot)
        assert app.main_screen.view.config["summarization.summarizer"] == "anthropic"
        assert len(fake_api.message_requests) == 1  # the walkthrough's one compaction
        assert "1 request(s), 1,200 tokens in / 350 out, 0 from the cache" in app.main_screen.llm_progress_text
        [summary] = [s for s in app.main_screen.view.simulation.summaries]
        assert summary.source == "anthropic" and summary.emotional_markers[0].intensity == 0.6


async def test_x_cancels_the_llm_summaries_and_keeps_the_previous_view(tmp_path, fake_api):
    slow = Scripted(body=message_response(VALID_SUMMARY_INPUT), delay=1.5)
    fake_api.script_messages(slow)
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        before = app.main_screen.view
        # many compactions: the first summary is slow, the cancel lands before the second
        app.main_screen.set_config_value("context.compaction_threshold", 0.2)
        await settle(app, pilot)
        app.main_screen.set_config_value("summarization.summarizer", "anthropic")
        for _ in range(200):
            await pilot.pause(0.01)
            if fake_api.message_requests:
                break
        await pilot.press("x")
        await settle(app, pilot)
        assert len(fake_api.message_requests) == 1
        assert app.main_screen.view.config["summarization.summarizer"] == "extractive"
        assert app.main_screen.view.config["context.compaction_threshold"] == 0.2
        assert before is not app.main_screen.view
        messages = [n.message for n in app._notifications]
        assert any("cancel" in m for m in messages)
