"""The Budget pane says when a calibrated prompt is a guess: a real Claude Code session whose later
half lost its billed counts, opened in the app (Pilot)."""

from __future__ import annotations

from dataclasses import replace

from inspector.screens.source import MemorySource
from inspector.screens.status import TimelineLabel
from tests.paths import REAL
from tests.tui.app_support import SIZE, make_app, plain, settle
from widgets.budget import BudgetView
from widgets.timeline import TimelineChart

SESSION = REAL / "claude-code-2.1.17-stop-hook-progress.jsonl"
GUESS = "a guess: nothing is recorded since the last compaction"


def _hidden_later_half():
    from inspector.importers import parse_text

    _, result = parse_text(SESSION.read_text(encoding="utf-8"), SESSION.name)
    thread = max(result.threads, key=lambda t: len(t.requests))
    half = len(thread.requests) // 2
    return replace(thread, requests=tuple(
        r if k < half else replace(r, prompt_tokens=None, cache_read_tokens=None, cache_write_tokens=None)
        for k, r in enumerate(thread.requests))), half


async def test_a_guess_after_an_unseen_compaction_is_labelled(tmp_path):
    thread, half = _hidden_later_half()
    app = make_app(tmp_path, MemorySource([thread]), thread_id=thread.id)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        last = len(app.main_screen.view.requests) - 1
        assert app.main_screen.request_index == last
        assert app.main_screen.view.calibration.basis(last) == "restarted"
        text = plain(app.query_one(BudgetView))
        assert "Prompt (calibrated)" in text and GUESS in text, text
        assert "calibrated: a guess" in plain(app.query_one(TimelineLabel))
        chart = app.query_one(TimelineChart)
        guessed = [k for k, p in enumerate(chart.points) if p.guessed]
        assert guessed == sorted(app.main_screen.view.calibration.guesses) and guessed[-1] == last and guessed[0] > half
        app.main_screen.jump_to_request(half - 1)  # a request with its own billed count: no guess
        await settle(app, pilot)
        assert app.main_screen.view.calibration.basis(half - 1) == "recorded"
        assert GUESS not in plain(app.query_one(BudgetView))
        assert "calibrated: a guess" not in plain(app.query_one(TimelineLabel))
