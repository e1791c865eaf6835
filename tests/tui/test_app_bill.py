"""Issue 22 in the app (Pilot): numbers a user can check against the bill, on a real Claude Code
session opened in the TUI, checked against figures read from the JSONL here."""

from __future__ import annotations

import json

from inspector.screens.source import MemorySource
from inspector.screens.status import TimelineLabel
from tests.paths import REAL
from tests.tui.app_support import SIZE, make_app, plain, settle
from widgets.timeline import TimelineChart

SESSION = REAL / "claude-code-2.1.17-stop-hook-progress.jsonl"


def _session():
    from inspector.importers import parse_text

    _, result = parse_text(SESSION.read_text(encoding="utf-8"), SESSION.name)
    return max(result.threads, key=lambda t: len(t.requests))


def _session_app(tmp_path):
    thread = _session()
    return make_app(tmp_path, MemorySource([thread]), thread_id=thread.id)


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
    app = _session_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        chart = app.query_one(TimelineChart)
        window = app.main_screen.current_request.budget.window
        assert window == 200_000 and _largest_billed_prompt() < window
        for k in (0, len(app.main_screen.view.requests) // 2, len(app.main_screen.view.requests) - 1):
            app.main_screen.jump_to_request(k)
            await pilot.pause()
            assert chart.scale.budget == window, k
        assert "prompt ceiling 200k" in plain(app.query_one(TimelineLabel))


def test_a_derived_request_count_reads_tilde_n_also_where_the_import_left_something_out():
    """Item 17: the thread list showed `0!` where the README says `~N`."""
    from dataclasses import replace

    from inspector.model import ThreadInfo
    from widgets.threads import request_count

    info = ThreadInfo("t", "", "codex", 40, 0, 0, derived_requests=20, import_gaps={"calls": 3})
    assert request_count(info).plain == "~20!"
    assert request_count(replace(info, import_gaps=None)).plain == "~20"
    assert request_count(replace(info, requests=288)).plain == "288!"
    assert request_count(replace(info, requests=288, import_gaps=None)).plain == "288"


async def test_ctrl_o_makes_the_saved_values_the_running_baseline(tmp_path):
    """Item 17: ctrl+o saved, but the baseline stayed the old value until a restart."""
    from textual.widgets import Static

    from inspector.examples import WALKTHROUGH_ID

    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view.baseline_config["context.prune_protect_turns"] == 2
        app.main_screen.set_config_value("context.prune_protect_turns", 3)
        await settle(app, pilot)
        assert app.main_screen.view.is_what_if
        await pilot.press("ctrl+o")
        await settle(app, pilot)
        assert app.main_screen.view.baseline_config["context.prune_protect_turns"] == 3
        assert app.main_screen.view.config["context.prune_protect_turns"] == 3 and not app.main_screen.view.is_what_if
        assert "config file: context.prune_protect_turns 3" in plain(app.query_one("#status", Static))


async def test_a_profile_switch_keeps_the_thread_s_tokenizer(tmp_path):
    """Item 16: switching a Claude Code session to iris recounted it with chars4 (calibration x1.46 ->
    x1.69) without asking; the tokenizer is the user's to change."""
    app = _session_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view.config.profile == "claude-code" and app.main_screen.view.config["context.tokenizer"] == "o200k_base"
        ratio = app.main_screen.view.calibration.fit.ratio
        app.main_screen.set_profile("iris")
        await settle(app, pilot)
        assert app.main_screen.view.config.profile == "iris"
        assert app.main_screen.view.config["context.tokenizer"] == "o200k_base"
        assert app.main_screen.view.calibration.fit.ratio == ratio
        app.main_screen.set_config_value("context.tokenizer", "chars4")  # the user's own change stays theirs
        await settle(app, pilot)
        app.main_screen.set_profile("harness")
        await settle(app, pilot)
        assert app.main_screen.view.config["context.tokenizer"] == "chars4"


async def test_the_anthropic_summarizer_without_a_key_says_why_under_the_field_and_the_status_line_returns(
        tmp_path, monkeypatch):
    """Item 15: a 5-second toast, the select silently reverted, and the status line stayed the
    summarizer's progress until another request was selected."""
    from textual.widgets import Select, Static

    from inspector import service
    from inspector.examples import WALKTHROUGH_ID

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setattr(service, "_SUMMARIZERS", {})
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        before = plain(app.query_one("#status", Static))
        app.main_screen.set_config_value("summarization.summarizer", "anthropic")
        await settle(app, pilot)
        assert app.main_screen.view.config["summarization.summarizer"] == "extractive"
        assert app.query_one("#cfg-summarization-summarizer", Select).value == "extractive"
        error = plain(app.query_one("#cfg-summarization-summarizer-error", Static))
        assert error.startswith("not applied: ") and "ANTHROPIC_API_KEY" in error
        assert plain(app.query_one("#status", Static)) == before  # the header is back, unbroken
        app.main_screen.jump_to_request(0)
        await settle(app, pilot)
        assert "ANTHROPIC_API_KEY" in plain(app.query_one("#cfg-summarization-summarizer-error", Static))


def _usage_by_call() -> list[int]:
    """The billed prompt of each model call of the session, in file order (usage once per message.id)."""
    seen: dict[str, int] = {}
    for line in SESSION.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line) if line.strip() else {}
        msg = rec.get("message") if rec.get("type") == "assistant" else None
        usage = msg.get("usage") if isinstance(msg, dict) else None
        if isinstance(usage, dict) and msg.get("model") != "<synthetic>" and msg.get("id") not in seen:
            seen[msg["id"]] = (usage["input_tokens"] + usage["cache_creation_input_tokens"]
                               + usage["cache_read_input_tokens"])
    return list(seen.values())


def _reads() -> dict[str, str]:
    """tool_result id -> the file_path its Read call read, from the JSONL."""
    calls: dict[str, str] = {}
    for line in SESSION.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line) if line.strip() else {}
        content = rec.get("message", {}).get("content") if isinstance(rec.get("message"), dict) else None
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "tool_use" and block.get("name") == "Read":
                calls[block["id"]] = block["input"]["file_path"]
    return calls


async def _at_the_compaction(app, pilot, tab: str) -> int:
    """Settle, select the session's compaction request and open pane `tab`; its index."""
    await settle(app, pilot)
    k = next(r.index for r in app.main_screen.view.requests if r.compaction is not None)
    app.main_screen.jump_to_request(k)
    await pilot.press(tab)
    await settle(app, pilot)
    return k


async def test_since_n_1_says_the_billed_delta_and_names_blocks_by_tool(tmp_path):
    """Items 11 and 13 at the real compaction: the billed row (the provider's figures, read from the JSONL)
    beside the replayed one, and blocks named by tool and turn, the UUID in its own column."""
    from inspector.compare.between_requests import request_step
    from widgets.since_previous import RequestStepView

    billed = _usage_by_call()
    app = _session_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        k = await _at_the_compaction(app, pilot, "5")
        text = plain(app.query_one(RequestStepView))
        step = request_step(app.main_screen.view.audit(k - 1), app.main_screen.view.audit(k))
        assert step.billed_delta == billed[k] - billed[k - 1] < step.prompt_delta < 0
        assert f"Prompt tokens (billed)           {billed[k] - billed[k - 1]:+,}" in text
        assert f"Prompt tokens (replayed)          {step.prompt_delta:+,}" in text
        assert " result " in text and "Read(" in text and " id" in text


async def test_blocks_name_tool_results_by_their_call_and_s_and_clicks_move_the_cursor(tmp_path):
    """Item 13 in the Blocks pane: `Read(…/file.go) result` (the file read from the JSONL), the reason of a
    summarized row said, `s` to the top, a largest block's click scrolled into view."""
    from widgets.blocks import BlocksView

    reads = _reads()
    app = _session_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await _at_the_compaction(app, pilot, "2")
        view = app.query_one(BlocksView)
        table = view.table
        blocks = view.request.blocks
        row = next(i for i, b in enumerate(blocks) if b.message_id
                   and app.main_screen.view.messages[b.message_id].tool_call_id in reads)
        name = table.plain_row(row)[-1]
        path = reads[app.main_screen.view.messages[blocks[row].message_id].tool_call_id]
        assert name.startswith("Read(") and ") result" in name and path.rsplit("/", 1)[-1][:12] in name
        assert blocks[row].message_id not in name
        assert table.plain_row(row)[7].strip() == "summarized"  # said, as the CLI says it
        await pilot.press("s")
        await pilot.pause()
        assert table.cursor_row == 0 and blocks[view.block_index(0)].tokens == max(b.tokens for b in blocks)
        await pilot.press("s")
        await pilot.pause()
        far = len(blocks) - 2
        app.main_screen.action_open_block(far)
        await settle(app, pilot)
        top = round(table.scroll_offset.y)
        height = table.scrollable_content_region.height - 1
        assert far > height and top <= far < top + height


async def test_the_timeline_numbers_its_requests_and_says_the_part_of_a_long_session_it_shows(tmp_path):
    """Item 14: no request numbers on the axis, no sign of which part of the 288 requests was shown."""
    from inspector.screens.status import TimelineLabel

    app = _session_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        chart = app.query_one(TimelineChart)
        first, last = chart.shown_requests()
        assert last == len(app.main_screen.view.requests) - 1 and first > 0  # the end of a session wider than the chart
        assert f"showing {first + 1}-{last + 1}" in plain(app.query_one(TimelineLabel))
        axis = chart.render_line(chart.size.height - 1).text
        numbers = [int(n) for n in __import__("re").findall(r"\d+", axis)]
        assert len(numbers) >= 3 and all(first + 1 <= n <= last + 1 for n in numbers)
        steps = {b - a for a, b in zip(numbers, numbers[1:], strict=False)}
        assert min(steps) > 0 and all(s % min(steps) == 0 for s in steps)  # round, evenly spaced numbers
        app.main_screen.jump_to_request(3)  # the start: request 1 is numbered where no mark is
        await settle(app, pilot)
        first, last = chart.shown_requests()
        assert first <= 3 <= last and f"showing {first + 1}-{last + 1}" in plain(app.query_one(TimelineLabel))


async def test_a_recorded_compaction_is_drawn_filled_where_the_replay_compacts_there_hollow_where_not(tmp_path):
    """Item 17: the README said ◇ where recorded mode draws ◆."""
    app = _session_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        chart = app.query_one(TimelineChart)
        k = next(r.index for r in app.main_screen.view.requests if r.compaction is not None)
        assert app.main_screen.view.compactions == "recorded" and chart.points[k].compaction
        app.main_screen.jump_to_request(k + 1)  # k in view, not under the cursor's ▲
        await settle(app, pilot)
        line = chart.render_line(chart.size.height - 1).text
        assert line[7 + (k - chart.shown_requests()[0]) * chart.column_width()] == "◆"
        await pilot.press("c")  # decide, then a lower threshold: the replay compacts elsewhere
        await settle(app, pilot)
        app.main_screen.set_config_value("claude_code.autocompact_pct_override", 40)
        await settle(app, pilot)
        assert not app.main_screen.view.requests[k].compaction
        line = chart.render_line(chart.size.height - 1).text
        assert line[7 + (k - chart.shown_requests()[0]) * chart.column_width()] == "◇"


def test_lost_paths_are_shortened_from_the_left_keeping_their_file_name():
    """Item 12: `/Users/alex/workspace/cli/.worktrees/alex/t…`, every row the same."""
    from inspector.pipeline.facts import Fact, FactKind
    from widgets.names import short_path
    from widgets.summaries import FACT_WIDTH, lost_cells

    long = "/Users/alex/workspace/cli/.worktrees/alex/team-sync/cmd/entire/cli/strategy/manual_commit.go"
    kind, text, _ = lost_cells(Fact(FactKind.PATH, long, "m1"), None)
    assert text.plain.endswith("/strategy/manual_commit.go") and len(text.plain) <= FACT_WIDTH
    assert text.plain.startswith("/…/")
    assert short_path("cmd/entire/cli/strategy/manual_commit.go", 24) == "cmd/…/manual_commit.go"
    assert short_path("/w/cli/cmd/x.go", 40, cwd="/w/cli") == "cmd/x.go"
    other = lost_cells(Fact(FactKind.PATH, long.replace("manual_commit", "auto_commit"), "m1"), None)[1]
    assert other.plain != text.plain  # the rows differ where the paths do
