"""Pilot tests of the inspector app: every interaction, asserting on app state and rendered text."""

from __future__ import annotations

import json
from types import SimpleNamespace

from textual.widgets import Input, Select, Static

from inspector.config import Config
from inspector.model import Message, Role
from inspector.screens.help import HelpScreen
from inspector.screens.source import MemorySource
from tests.tui.app_support import SIZE, coding_thread, demo_source, make_app, plain, settle
from widgets.blocks import BlocksView
from widgets.budget import BudgetView
from widgets.linetable import LineTable
from widgets.timeline import TimelineChart

WALKTHROUGH = "demo-iris-walkthrough"
OVERFLOW = "demo-iris-overflow"


async def test_opens_first_thread_at_its_newest_request(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view is not None
        assert app.main_screen.view.thread.id == WALKTHROUGH
        assert app.main_screen.request_index == len(app.main_screen.view.requests) - 1 == 43
        status = plain(app.query_one("#status", Static))
        assert "Iris walkthrough" in status and "44 requests" in status and "1 compaction ·" in status
        assert "baseline config" in status
        chart = app.query_one(TimelineChart)
        assert len(chart.points) == 44 and chart.cursor == 43
        table = app.query_one("#threads-table", LineTable)
        assert table.row_count == 4
        budget = plain(app.query_one(BudgetView))
        assert "Request 44/44" in budget and "chars4 (approximate)" in budget
        assert "Saved by pruning" in budget and "Free" in budget and "Response reserve" in budget


async def test_thread_filter_as_you_type_and_choose(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash")
        assert isinstance(app.focused, Input) and app.focused.id == "thread-filter"
        await pilot.press(*"overfl")
        table = app.query_one("#threads-table", LineTable)
        assert table.row_count == 1
        assert "Overflow" in str(table.get_row_at(0)[0])
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.main_screen.view.thread.id == OVERFLOW
        assert "Overflow" in plain(app.query_one("#status", Static))
        # Clearing the filter shows every thread again, the current one marked.
        app.query_one("#thread-filter", Input).value = ""
        await pilot.pause()
        assert table.row_count == 4
        assert any(str(table.get_row_at(r)[0]).startswith("▶ Overflow") for r in range(4))


async def test_timeline_steps_with_left_right_home_end(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.query_one(TimelineChart).focus()
        await pilot.press("left", "left")
        assert app.main_screen.request_index == 41
        assert "Request 42/44" in plain(app.query_one(BudgetView))
        assert "request 42/44" in plain(app.query_one("#timeline-label", Static))
        await pilot.press("home")
        assert app.main_screen.request_index == 0 and app.query_one(TimelineChart).cursor == 0
        await pilot.press("right")
        assert app.main_screen.request_index == 1
        await pilot.press("end")
        assert app.main_screen.request_index == 43
        await pilot.press("comma")
        assert app.main_screen.request_index == 42
        await pilot.press("z")
        assert app.query_one(TimelineChart).overview
        assert "overview: 1 request per column" in plain(app.query_one("#timeline-label", Static))


async def test_compaction_and_failure_jumps(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("p")
        assert app.main_screen.request_index == 40
        assert app.main_screen.current_request.compaction is not None
        assert "◆ compaction" in plain(app.query_one("#timeline-label", Static))
        budget = plain(app.query_one(BudgetView))
        assert "Compaction" in budget and "token_threshold" in budget
        await pilot.press("p")  # no earlier compaction: stays
        assert app.main_screen.request_index == 40
        await pilot.press("home", "n")
        assert app.main_screen.request_index == 40
        app.main_screen.load_thread(OVERFLOW)
        await settle(app, pilot)
        await pilot.press("home", "f")
        assert app.main_screen.request_index == 8 and app.main_screen.current_request.failed
        assert "FAILED" in plain(app.query_one("#timeline-label", Static))
        budget = plain(app.query_one(BudgetView))
        assert "FAILED" in budget and "Would need" in budget


async def test_blocks_pane_lists_every_block_and_shows_pruned_original(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await pilot.pause()
        request = app.main_screen.current_request
        table = app.query_one("#blocks-table", LineTable)
        assert table.row_count == len(request.blocks)
        pruned = next(i for i, b in enumerate(request.blocks) if str(b.status) == "pruned")
        app.query_one(BlocksView).select_block(pruned)
        await pilot.pause()
        detail = plain(app.query_one("#block-detail", Static))
        assert "Sent instead:" in detail and "[Tool output cleared]" in detail and "Original:" in detail
        message = app.main_screen.view.messages[request.blocks[pruned].message_id]
        assert message.content.splitlines()[0] in detail
        # The row shows status and reason.
        row = [str(c) for c in table.get_row_at(pruned)]
        assert "pruned" in row[6] and "tool_output_cleared" in row[7]


async def test_blocks_pane_summarized_block_shows_its_summary_and_group_partners(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await pilot.pause()
        request = app.main_screen.current_request
        view = app.query_one(BlocksView)
        summarized = next(i for i, b in enumerate(request.blocks) if str(b.status) == "summarized")
        view.select_block(summarized)
        await pilot.pause()
        detail = plain(app.query_one("#block-detail", Static))
        summary_id = request.blocks[summarized].summary_id
        assert f"Covered by summary {summary_id}" in detail
        assert app.main_screen.view.summaries[summary_id].summary[:30] in detail.replace("\n", " ")
        grouped = next(i for i, b in enumerate(request.blocks)
                       if b.role == "tool" and str(b.status) != "summarized")
        view.select_block(grouped)
        await pilot.pause()
        detail = plain(app.query_one("#block-detail", Static))
        assert "Tool group partners:" in detail
        tool_message = app.main_screen.view.messages[request.blocks[grouped].message_id]
        owner = next(m for m in app.main_screen.view.thread.messages
                     if any(c.id == tool_message.tool_call_id for c in m.tool_calls))
        assert owner.id in detail.split("Tool group partners:")[1]
        # Moving the table cursor with the keyboard updates the detail too.
        app.query_one("#blocks-table", LineTable).focus()
        await pilot.press("ctrl+home")
        await pilot.pause()
        assert request.blocks[0].message_id in plain(app.query_one("#block-detail", Static))


async def test_summary_chain_pane(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("3")
        await pilot.pause()
        summaries = app.main_screen.view.simulation.summaries
        table = app.query_one("#summaries-table", LineTable)
        assert table.row_count == len(summaries) == 1
        summary = summaries[0]
        stats = app.main_screen.view.summary_stats[summary.id]
        assert stats.messages == 67 and stats.covered_tokens > stats.summary_tokens > 0
        row = [str(c) for c in table.get_row_at(0)]
        assert row[1] == summary.id and row[5] == "✓"  # injected into the selected (last) request
        assert row[4] == f"{stats.covered_tokens / stats.summary_tokens:.1f}x"
        assert row[2] == "67"
        detail = plain(app.query_one("#summary-detail", Static))
        assert "injected into the selected request" in detail and "compression" in detail
        # Before the compaction nothing is injected.
        app.main_screen.jump_to_request(0)
        await pilot.pause()
        assert str(table.get_row_at(0)[5]) == ""
        assert "not injected" in plain(app.query_one("#summary-detail", Static))


async def test_config_edit_replays_and_shows_diff_then_reset(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        baseline_compaction = [r.index for r in app.main_screen.view.requests if r.compaction]
        await pilot.press("4")
        await pilot.pause()
        field = app.query_one("#cfg-context-window", Input)
        field.focus()
        field.value = "100000"
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.main_screen.view.config["context.window"] == 100_000
        assert app.main_screen.view.diff is not None
        new_compaction = [r.index for r in app.main_screen.view.requests if r.compaction]
        assert new_compaction != baseline_compaction
        assert new_compaction[0] < baseline_compaction[0]
        diff_text = plain(app.query_one("#diff", Static))
        assert "context.window: 200000 → 100000" in diff_text
        assert "earlier" in diff_text
        # The selected request's changed blocks are listed with their old and new status.
        app.main_screen.jump_to_request(new_compaction[0] + 1)
        await pilot.pause()
        diff_text = plain(app.query_one("#diff", Static))
        assert "kept → summarized" in diff_text or "pruned → summarized" in diff_text
        status = plain(app.query_one("#status", Static))
        assert "what-if" in status and "context.window 200000→100000" in status
        # Reset goes back to the baseline.
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert app.main_screen.view.diff is None and app.main_screen.view.config == app.main_screen.view.baseline_config
        assert app.query_one("#cfg-context-window", Input).value == "200000"


async def test_invalid_value_shows_one_line_error_and_does_not_replay(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        field = app.query_one("#cfg-context-compaction-threshold", Input)
        field.focus()
        field.value = "1.5"
        await pilot.pause()
        error = plain(app.query_one("#cfg-context-compaction-threshold-error", Static))
        assert "context.compaction_threshold must be in (0, 1]" in error
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.main_screen.view.diff is None and app.main_screen.view.config["context.compaction_threshold"] == 0.75
        field.value = "abc"
        await pilot.pause()
        assert "must be a number" in plain(app.query_one("#cfg-context-compaction-threshold-error", Static))
        field.value = "0.5"
        await pilot.pause()
        assert plain(app.query_one("#cfg-context-compaction-threshold-error", Static)).strip() == ""


async def test_reset_clears_text_that_was_never_applied(tmp_path):
    """Garbage typed into a field is not an edit (nothing replays), but reset must still bring
    the form back to the baseline values, errors gone."""
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        field = app.query_one("#cfg-context-compaction-threshold", Input)
        field.focus()
        field.value = "0.7/oops"
        await pilot.press("enter")
        await settle(app, pilot)
        assert not app.main_screen.view.is_what_if
        assert "must be a number" in plain(app.query_one("#cfg-context-compaction-threshold-error", Static))
        app.set_focus(None)
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert field.value == "0.75"
        assert plain(app.query_one("#cfg-context-compaction-threshold-error", Static)).strip() == ""


async def test_selects_switch_profile_and_strategy(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.main_screen.load_thread("demo-shifting-roleplay")
        await settle(app, pilot)
        await pilot.press("4")
        app.query_one("#cfg-profile", Select).value = "shifting"
        await settle(app, pilot)
        assert app.main_screen.view.config.profile == "shifting"
        # The form now has the shifting keys, including the strategy select.
        strategy = app.query_one("#cfg-context-strategy", Select)
        assert strategy.value == "truncate"
        excluded = sum(r.block_counts().get("excluded", 0) for r in app.main_screen.view.requests)
        assert excluded > 0
        assert any(str(b.status) == "excluded" for b in app.main_screen.current_request.blocks)
        strategy.value = "summarize"
        await settle(app, pilot)
        assert app.main_screen.view.config["context.strategy"] == "summarize"
        assert any(b.message_id is None for b in app.main_screen.current_request.blocks)  # extractive summary block
        tokenizer = app.query_one("#cfg-context-tokenizer", Select)
        tokenizer.value = "cl100k_base"
        await settle(app, pilot)
        assert app.main_screen.view.simulation.tokenizer == "cl100k_base" and not app.main_screen.view.simulation.approximate
        assert "cl100k_base (exact)" in plain(app.query_one(BudgetView))


async def test_save_config_writes_toml(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.main_screen.set_config_value("context.prune_protect_turns", 3)
        await settle(app, pilot)
        await pilot.press("4")  # focus is in a config field: the save key still works there
        await pilot.pause()
        assert isinstance(app.focused, Input)
        await pilot.press("ctrl+o")
        await settle(app, pilot)
        text = (tmp_path / "config.toml").read_text()
        assert "prune_protect_turns = 3" in text and "window" not in text  # only the edit


async def test_command_palette_jumps_to_request_and_thread(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"request 7")
        await pilot.pause(0.3)  # the palette searches in its own worker; wait for its results
        await app.workers.wait_for_complete()
        await pilot.press("enter")
        await pilot.pause()
        assert app.main_screen.request_index == 6
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Thread: Port Veyra")
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.main_screen.view.thread.id == "demo-shifting-roleplay"


async def test_command_palette_switches_strategy_and_exports(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Strategy: manual")
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.main_screen.view.config.profile == "shifting" and app.main_screen.view.config["context.strategy"] == "manual"
        await pilot.press("e")
        await settle(app, pilot)
        index = app.main_screen.request_index + 1
        path = tmp_path / f"audit-{WALKTHROUGH}-request-{index}.json"
        data = json.loads(path.read_text())
        assert data["format"] == "context-inspector/simulation-v1"
        assert data["profile"] == "shifting"
        assert [r["index"] for r in data["requests"]] == [app.main_screen.request_index]
        assert len(data["requests"][0]["blocks"]) == len(app.main_screen.current_request.blocks)


async def test_help_screen_lists_bindings(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = plain(app.screen.query_one("#help-table", Static))
        for expected in ("Next compaction", "First failure", "Export JSON", "Reset config", "Save config",
                         "Screenshot", "left / right", "command palette"):
            assert expected in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)


async def test_screenshot_binding_writes_svg(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        shots = list(tmp_path.glob("*.svg"))
        assert len(shots) == 1 and "<svg" in shots[0].read_text()[:2000]


async def test_live_mode_follows_newest_request(tmp_path):
    thread = coding_thread(turns=3)
    source = MemorySource([thread])
    app = make_app(tmp_path, source=source, live=True, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert len(app.main_screen.view.requests) == 6 and app.main_screen.request_index == 5
        grown = coding_thread(turns=4)
        source.replace(grown)
        app.main_screen.poll_live()
        await settle(app, pilot)
        assert len(app.main_screen.view.requests) == 8 and app.main_screen.request_index == 7
        assert "8 requests" in plain(app.query_one("#status", Static))
        # The user moves away: new rows no longer move the cursor.
        app.main_screen.jump_to_request(2)
        source.replace(coding_thread(turns=5))
        app.main_screen.poll_live()
        await settle(app, pilot)
        assert len(app.main_screen.view.requests) == 10 and app.main_screen.request_index == 2
        # Nothing changed: no reload.
        before = app.main_screen.view
        app.main_screen.poll_live()
        await settle(app, pilot)
        assert app.main_screen.view is before


async def test_live_mode_keeps_config_edits(tmp_path):
    source = MemorySource([coding_thread(turns=3)])
    app = make_app(tmp_path, source=source, live=True, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.main_screen.set_config_value("context.window", 9_000)
        await settle(app, pilot)
        source.replace(coding_thread(turns=4))
        app.main_screen.poll_live()
        await settle(app, pilot)
        assert len(app.main_screen.view.requests) == 8
        assert app.main_screen.view.config["context.window"] == 9_000 and app.main_screen.view.diff is not None


async def test_untrusted_text_is_literal(tmp_path):
    evil_title = "[bold red]pwn[/] \x1b]0;owned\x07 \x1b[2J"
    evil = "[link=http://x]click[/link] \x1b[31mred\x1b[0m"
    thread = coding_thread("evil")
    messages = list(thread.messages)
    messages[0] = Message("u1", Role.USER, evil)
    thread = type(thread)(id="evil", title=evil_title, messages=tuple(messages), requests=thread.requests,
                          window=thread.window)
    app = make_app(tmp_path, source=MemorySource([thread]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        status = plain(app.query_one("#status", Static))
        assert "[bold red]pwn[/] ␛]0;owned␇ ␛[2J" in status
        title_cell = app.query_one("#threads-table", LineTable).get_row_at(0)[0]
        assert "[bold red]pwn[/]" in str(title_cell) and "\x1b" not in str(title_cell)
        await pilot.press("2")
        app.query_one(BlocksView).select_block(0)
        await pilot.pause()
        detail = plain(app.query_one("#block-detail", Static))
        assert "[link=http://x]click[/link] ␛[31mred␛[0m" in detail
        assert "\x1b" not in detail


async def test_given_thread_id_and_fixed_config(tmp_path):
    config = Config.for_profile("iris", {"context.window": 50_000})
    app = make_app(tmp_path, thread_id=OVERFLOW, config=config)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view.thread.id == OVERFLOW
        assert app.main_screen.view.baseline_config["context.window"] == 50_000


async def test_unknown_thread_id_falls_back_to_first(tmp_path):
    app = make_app(tmp_path, thread_id="no-such-thread")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view.thread.id == WALKTHROUGH


async def test_empty_source_says_so(tmp_path):
    app = make_app(tmp_path, source=MemorySource([]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view is None
        assert "no threads" in plain(app.query_one("#status", Static))


async def test_replay_error_is_reported_not_fatal(tmp_path):
    calls = {"n": 0}

    def flaky(thread, config, *, compactions):
        from inspector.service import run_simulation

        calls["n"] += 1
        if config["context.window"] == 1234:
            raise RuntimeError("boom")
        return run_simulation(thread, config, compactions=compactions)

    app = make_app(tmp_path, source=demo_source(), simulator=flaky)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.main_screen.set_config_value("context.window", 1234)
        await settle(app, pilot)
        assert app.main_screen.view.config["context.window"] == 200_000  # the previous view stays
        assert calls["n"] == 2
        assert app.query_one("#cfg-context-window", Input).value == "200000"


async def test_recorded_and_replayed_tokens_both_on_timeline(tmp_path):
    thread = coding_thread(turns=3)
    app = make_app(tmp_path, source=MemorySource([thread]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        chart = app.query_one(TimelineChart)
        assert [p.recorded_tokens for p in chart.points] == [r.prompt_tokens for r in thread.requests]
        assert all(p.prompt_tokens > 0 for p in chart.points)
        label = plain(app.query_one("#timeline-label", Static))
        assert "recorded 3,500" in label and f"prompt {app.main_screen.current_request.budget.prompt_tokens:,}" in label


async def test_derived_requests_thread_has_no_recorded_line(tmp_path):
    thread = coding_thread(turns=2)
    thread = type(thread)(id="derived", title="derived", messages=thread.messages, window=20_000)
    app = make_app(tmp_path, source=MemorySource([thread]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        chart = app.query_one(TimelineChart)
        assert chart.points and all(p.recorded_tokens is None for p in chart.points)
        assert "recorded" not in plain(app.query_one("#timeline-label", Static)).split("•")[0]
        assert not app.main_screen.view.thread.requests
        assert all(r.request_id.startswith("derived-") for r in app.main_screen.view.requests)


async def test_clicking_a_thread_row_twice_opens_it(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = app.query_one("#threads-table", LineTable)
        # Row 2 is the third thread (y = 0 is the header line).
        await pilot.click("#threads-table", offset=(3, 3))
        assert table.cursor_row == 2 and app.main_screen.view.thread.id == WALKTHROUGH
        await pilot.click("#threads-table", offset=(3, 3))
        await settle(app, pilot)
        assert app.main_screen.view.thread.id == app.query_one("ThreadList").shown[2].id != WALKTHROUGH


async def test_held_arrow_key_updates_panes_at_the_trailing_edge(tmp_path, monkeypatch):
    # The throttle reads a clock the test holds still: two steps are "within the window" however slow
    # the machine is (on a loaded one, a real 0.05 s passed between them and both were leading edges).
    from inspector.controllers import panes

    clock = [1000.0]
    monkeypatch.setattr(panes, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    app = make_app(tmp_path, pane_throttle=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        clock[0] += 1.0  # the last update is long past
        app.main_screen.action_step(-1)  # leading edge: immediate
        assert "Request 43/44" in plain(app.query_one(BudgetView))
        app.main_screen.action_step(-1)  # within the throttle window: deferred
        assert app.main_screen.request_index == 41
        assert "request 42/44" in plain(app.query_one("#timeline-label", Static))  # the chart label is immediate
        assert "Request 43/44" in plain(app.query_one(BudgetView))
        assert app.main_screen.panes.timer is not None
        for _ in range(400):  # the trailing-edge timer (0.05 s) fires: bounded by its progress, not a deadline
            await pilot.pause(0.05)
            if app.main_screen.panes.timer is None:
                break
        assert "Request 42/44" in plain(app.query_one(BudgetView))


async def test_thread_list_toggle_and_focus_keys(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        left = app.query_one("#left")
        await pilot.press("b")
        assert not left.display
        await pilot.press("slash")
        assert left.display and app.focused.id == "thread-filter"
        app.main_screen.action_focus_timeline()
        await pilot.pause()
        assert isinstance(app.focused, TimelineChart)


async def test_keyboard_only_config_edit(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await pilot.pause()
        assert app.focused.id == "cfg-context-window"
        await pilot.press("ctrl+a", "ctrl+k", *"150000", "enter")
        await settle(app, pilot)
        assert app.main_screen.view.config["context.window"] == 150_000 and app.main_screen.view.diff is not None
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.focused, TimelineChart)
        await pilot.press("2")
        await pilot.pause()
        assert app.focused.id == "blocks-table"
        before = app.main_screen.request_index
        await pilot.press("down", "left")  # down moves in the table, left still steps requests
        assert app.main_screen.request_index == before - 1
        assert app.query_one(BlocksView).request.index == before - 1


async def test_thread_without_messages_shows_no_requests(tmp_path):
    from inspector.model import Thread

    app = make_app(tmp_path, source=MemorySource([Thread(id="empty", title="empty thread")]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view is not None and app.main_screen.view.requests == ()
        assert app.main_screen.current_request is None
        assert "no requests" in plain(app.query_one("#timeline-label", Static))
        assert "No request selected." in plain(app.query_one(BudgetView))
        await pilot.press("right", "n", "f", "e", "2", "3")
        await pilot.pause()
        assert app.main_screen.request_index == 0


async def test_harness_profile_budget_marks_both_thresholds(tmp_path):
    app = make_app(tmp_path, thread_id="demo-harness-examples", profile="harness")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view.config.profile == "harness"
        budget = plain(app.query_one(BudgetView))
        window = app.main_screen.current_request.budget.window
        assert "compaction at 80%" in budget and "hard pruning at 90%" in budget
        assert f"{int(window * 0.8):,} (80% of window)" in budget and "Hard pruning at" in budget
        assert f"{int(window * 0.9):,} (90% of window)" in budget
        await pilot.press("4")
        await pilot.pause()
        assert app.query_one("#cfg-harness-keep-last", Input).value == "2"


async def test_notifications_are_literal(tmp_path):
    app = make_app(tmp_path, thread_id="[bold]nope[/bold]\x1b[2J")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        notes = list(app._notifications)
        assert notes, "a warning about the unknown thread id"
        note = notes[0]
        assert "[bold]nope[/bold]␛[2J" in note.message and not note.markup


async def test_live_toggle_stops_polling(tmp_path):
    source = MemorySource([coding_thread(turns=2)])
    app = make_app(tmp_path, source=source, live=True, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "● live" in plain(app.query_one("#status", Static))
        await pilot.press("l")
        assert not app.main_screen.live and "● live" not in plain(app.query_one("#status", Static))
        source.replace(coding_thread(turns=3))
        app.main_screen.poll_live()
        await settle(app, pilot)
        assert len(app.main_screen.view.requests) == 4  # not reloaded while live mode is off
        await pilot.press("l")
        app.main_screen.poll_live()
        await settle(app, pilot)
        assert len(app.main_screen.view.requests) == 6


async def test_budget_explains_a_recorded_count_above_a_transcript_without_system_prompt(tmp_path):
    from dataclasses import replace as replace_field

    from inspector.screens.source import MemorySource
    from tests.tui.app_support import coding_thread

    agent = replace_field(coding_thread("agent", turns=3), system_prompt="")  # like a Claude Code transcript
    app = make_app(tmp_path, MemorySource([agent, coding_thread("own", turns=3)]), thread_id="agent")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        request = app.main_screen.current_request
        b = request.budget
        assert b.recorded_prompt_tokens > b.prompt_tokens
        # the calibrated model gives the recorded count back and names the gap
        assert b.calibrated_prompt_tokens == b.recorded_prompt_tokens
        assert b.unaccounted_tokens == b.recorded_prompt_tokens - b.prompt_tokens
        text = plain(app.query_one(BudgetView))
        # the gap is split: the agent's own tokens (the fit's intercept) and the tokenizer difference (its ratio)
        rows = {}
        for line in text.splitlines():
            for label in ("Unaccounted (the agent's own)", "Unaccounted (calibrated - replayed)", "Tokenizer difference"):
                if label in line:
                    after = line.split(label, 1)[1]
                    after = after.split(")", 1)[1] if label == "Tokenizer difference" else after  # past "(x1.31)"
                    rows[label] = int(after.split()[0].replace(",", ""))
        assert sum(rows.values()) == b.unaccounted_tokens, (rows, text)
        fit = app.main_screen.view.calibration.fit
        # a poor fit has no figures to split by: one honest row, not "the agent's own"
        assert ("Unaccounted (calibrated - replayed)" in rows) == (fit.source in ("identity", "poor fit")), rows
        if "Tokenizer difference" in rows:
            assert f"Tokenizer difference (x{fit.segment_ratio[app.main_screen.view.calibration.segments[request.index]]:.2f})" in text
        assert "Prompt (calibrated)" in text and fit.short() in text
