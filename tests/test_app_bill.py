"""Issue 22 in the app (Pilot): numbers a user can check against the bill, on a real Claude Code
session opened in the TUI, checked against figures read from the JSONL here."""

from __future__ import annotations

import json
from pathlib import Path

from inspector.screens.source import MemorySource
from inspector.screens.status import TimelineLabel
from tests.test_app_support import SIZE, make_app, plain, settle
from widgets.timeline import TimelineChart

REAL = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "real"
SESSION = REAL / "claude-code-2.1.17-stop-hook-progress.jsonl"


def _session():
    from inspector.importers import parse_text

    _, result = parse_text(SESSION.read_text(encoding="utf-8"), SESSION.name)
    return max(result.threads, key=lambda t: len(t.requests))


def _largest_billed_prompt() -> int:
    """The largest prompt the provider billed in the file (usage once per message.id)."""
    seen: dict[str, int] = {}
    for line in SESSION.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line) if line.strip() else {}
        msg = rec.get("message") if rec.get("type") == "assistant" else None
        usage = msg.get("usage") if isinstance(msg, dict) else None
        if isinstance(usage, dict) and msg.get("id") not in seen:
            seen[msg["id"]] = (usage["input_tokens"] + usage["cache_creation_input_tokens"]
                               + usage["cache_read_input_tokens"])
    return max(seen.values())


async def test_the_prompt_ceiling_is_the_window_in_billed_units(tmp_path):
    """Item 5: main drew the ceiling at the window plus the calibrated gap (241k on a 200k window)."""
    thread = _session()
    app = make_app(tmp_path, MemorySource([thread]), thread_id=thread.id)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        chart = app.query_one(TimelineChart)
        window = app.current_request.budget.window
        assert window == 200_000 and _largest_billed_prompt() < window
        for k in (0, len(app.view.requests) // 2, len(app.view.requests) - 1):
            app.jump_to_request(k)
            await pilot.pause()
            assert chart.scale.budget == window, k
        assert "prompt ceiling 200k" in plain(app.query_one(TimelineLabel))
