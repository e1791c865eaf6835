"""The TUI's what-if on a real Claude Code session: a no-op edit moves nothing, in both modes."""

from __future__ import annotations

from textual.widgets import Input, Static

from inspector.importers import parse_text
from inspector.screens.source import MemorySource
from tests.paths import REAL
from tests.tui.app_support import SIZE, make_app, plain, settle

SESSION = "claude-code-session-with-compaction.jsonl"


def _session():
    text = (REAL / SESSION).read_text(encoding="utf-8")
    return parse_text(text, SESSION)[1].threads[0]


async def _edit(app, pilot, field_id: str, value: str) -> None:
    await pilot.press("4")
    await pilot.pause()
    field = app.query_one(f"#{field_id}", Input)
    field.focus()
    field.value = value
    await pilot.press("enter")
    await settle(app, pilot)


async def test_a_no_op_edit_moves_nothing_in_either_mode(tmp_path):
    thread = _session()
    app = make_app(tmp_path, MemorySource([thread]), thread_id=thread.id)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        view = app.main_screen.view
        assert view.config.profile == "claude-code"  # a Claude Code thread replays as Claude Code
        assert view.compactions == "recorded"
        status = plain(app.query_one("#status", Static))
        assert "compactions recorded" in status
        assert "claude-code reproduces 1 of 1 recorded compaction" in status
        baseline = [r.timeline_json() for r in view.requests]
        # the timeline's bars are the calibrated counts (here: the billed ones), its dots the recorded
        from inspector.screens.view import timeline_points

        points = timeline_points(view)
        assert [p.prompt_tokens for p in points] == [r.budget.calibrated_prompt_tokens for r in view.requests]
        assert [p.recorded_tokens for p in points] == [r.budget.recorded_prompt_tokens for r in view.requests]
        assert [p.prompt_tokens for p in points] == [p.recorded_tokens for p in points]

        # a key the profile reads nothing of for this summarizer: a what-if, and nothing moves
        await _edit(app, pilot, "cfg-summarization-timeout", "121")
        assert app.main_screen.view.is_what_if and app.main_screen.view.diff is not None and app.main_screen.view.diff.empty
        assert [r.timeline_json() for r in app.main_screen.view.requests] == baseline
        diff_text = plain(app.query_one("#diff", Static))
        assert "summarization.timeout: 120.0 → 121.0" in diff_text
        assert "nothing: same compactions, failures and block statuses" in diff_text
        assert "compaction #" not in diff_text

        # the other mode: baseline and what-if both decided by the profile; still nothing moves
        await pilot.press("escape", "c")  # from the timeline (in a config field `c` is text)
        await settle(app, pilot)
        assert app.main_screen.view.compactions == "decide"
        assert "compactions decide" in plain(app.query_one("#status", Static))
        assert app.main_screen.view.is_what_if and app.main_screen.view.diff is not None and app.main_screen.view.diff.empty
        decided = [r.index for r in app.main_screen.view.baseline.requests if r.compaction is not None]
        assert decided == [r.index for r in app.main_screen.view.requests if r.compaction is not None]
        assert "nothing: same compactions, failures and block statuses" in plain(app.query_one("#diff", Static))

        # the window set to the value it has is no edit at all
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        await _edit(app, pilot, "cfg-context-window", str(app.main_screen.view.config["context.window"]))
        assert not app.main_screen.view.is_what_if
        assert "No edits: this is the baseline replay." in plain(app.query_one("#diff", Static))

        # and a key it reads does move something in decide mode
        await _edit(app, pilot, "cfg-claude-code-autocompact-pct-override", "50")
        assert app.main_screen.view.diff is not None and not app.main_screen.view.diff.empty
        assert "compaction #" in plain(app.query_one("#diff", Static))


async def test_a_baseline_set_on_the_command_line_is_not_called_the_profile(tmp_path):
    """`--set` makes the user's baseline: how well it reproduces the recorded compactions is said
    of that config, never of the profile (`simulate`'s text judges the profile's own config)."""
    thread = _session()
    app = make_app(tmp_path, MemorySource([thread]), thread_id=thread.id,
                   overrides={"claude_code.autocompact_pct_override": 60})
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view.baseline_config["claude_code.autocompact_pct_override"] == 60
        status = plain(app.query_one("#status", Static))
        assert "claude-code with 1 key changed reproduces" in status
        assert "· claude-code reproduces" not in status
