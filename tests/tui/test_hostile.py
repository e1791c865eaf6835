"""Hostile content is shown literally in every pane: markup, escape sequences, controls, huge and wide text.

The thread below puts the same hostile strings in every field a pane can show. Each test visits panes and
checks that the literal text (after `safe_text`) is there, that no terminal control character reaches the
rendered output, and that `[@click=app.quit]` did nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from textual.widgets import Static

from inspector.cli import main as cli_main
from inspector.importers import export_native
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall, ToolDef
from inspector.screens.source import MemorySource
from inspector.terminal_safety import safe_line, safe_text
from tests.tui.app_support import SIZE, make_app, plain, settle
from widgets.blocks import BlocksView
from widgets.linetable import LineTable
from widgets.summaries import SummariesView

MARKUP = "[bold]x[/] [link=https://e.x]y[/link] [@click=app.quit]z[/] [/] ["
ESCAPES = "\x1b[2J \x1b]0;title\x07 \x9b31m \x00\x07\x08"
WIDE = "漢字🙂 \u202eevil \u200fmark\u200bzero\ufeff"  # bidi override and mark, zero-width space, BOM
HOSTILE = f"{MARKUP} {ESCAPES} {WIDE}"
LONG_LINE = "L" * 19_990 + "[bold]END[/]"  # a 20,000-character line
FORBIDDEN = ("\x1b", "\x9b", "\x07", "\x00", "\x08", "\u202e", "\u200f", "\u200b", "\ufeff")
THREAD_ID = "hostile"


def hostile(label: str) -> str:
    """The hostile string tagged with the field it sits in, so a test can tell fields apart."""
    return f"{label}: {HOSTILE}"


def hostile_thread() -> Thread:
    """Every displayed field hostile; a small window so the replay compacts and uses the recorded summary."""
    call = ToolCall("call-1", hostile("tool name"), {"path": hostile("argument"), "n": 1})
    messages = [
        Message("u1", Role.USER, hostile("user") + "\n" + LONG_LINE),
        Message("a1", Role.ASSISTANT, hostile("assistant"), tool_calls=(call,)),
        Message("t1", Role.TOOL, hostile("tool output") + "\n" + LONG_LINE, tool_call_id="call-1"),
        Message("a2", Role.ASSISTANT, hostile("answer")),
    ]
    for i in range(2, 8):
        messages.append(Message(f"u{i}", Role.USER, hostile(f"user {i}") + " more" * 200))
        messages.append(Message(f"b{i}", Role.ASSISTANT, hostile(f"reply {i}") + " words" * 200))
    requests = tuple(Request(f"r{i}", m.id, prompt_tokens=None) for i, m in enumerate(messages)
                     if m.role is Role.USER or m.role is Role.TOOL)
    summary = Summary(
        id="s1", first_message_id="u1", last_message_id="a2", summary=hostile("narrative"),
        before_request_id=requests[3].id,
        accomplishments=(hostile("accomplishment"),), key_decisions=(hostile("decision"),),
        relevant_files=(hostile("file"),), active_goals=(hostile("goal"),),
        emotional_thread=hostile("emotional thread"), key_facts=(hostile("fact"),),
    )
    return Thread(id=THREAD_ID, title=hostile("title"), source="native", system_prompt=hostile("system"),
                  tools=(ToolDef(hostile("tool def"), hostile("tool description"), {}),),
                  messages=tuple(messages), requests=requests, summaries=(summary,), window=6_000)


def benign_thread() -> Thread:
    messages = (Message("q", Role.USER, "hello"), Message("r", Role.ASSISTANT, "hi"))
    return Thread(id="benign", title="A benign thread", messages=messages, window=6_000)


def source() -> MemorySource:
    return MemorySource([hostile_thread(), benign_thread()])


def shown(label: str, limit: int | None = None) -> str:
    """What a pane shows for the hostile string of `label`: neutralized, cut to one line when `limit` is set."""
    return safe_text(hostile(label)) if limit is None else safe_line(hostile(label), limit)


def squeeze(text: str) -> str:
    """`text` without whitespace, to compare content across the pane's word wrapping."""
    return "".join(text.split())


def assert_clean(text: str) -> None:
    for char in FORBIDDEN:
        assert char not in text, f"{char!r} reached the rendered output"


def assert_screen_clean(app) -> None:
    """Nothing a terminal would interpret in any Static of the screen, nor in the rendered screen."""
    for widget in app.screen.query(Static):
        assert_clean(plain(widget))
    for table in app.screen.query(LineTable):
        for row in range(table.row_count):
            assert_clean(" ".join(str(cell) for cell in table.get_row_at(row)))
    assert_clean(app.export_screenshot())


def assert_still_running(app) -> None:
    assert app.is_running and app.return_code is None


async def test_status_thread_list_timeline_and_budget_show_hostile_text_literally(tmp_path: Path) -> None:
    app = make_app(tmp_path, source=source())
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view is not None and app.main_screen.view.thread.id == THREAD_ID
        status = plain(app.query_one("#status", Static))
        assert shown("title", 60) in status
        assert "[bold]x[/] [link=https://e.x]y[/link] [@click=app.qu" in status
        table = app.query_one("#threads-table", LineTable)
        titles = [str(table.get_row_at(r)[0]) for r in range(table.row_count)]
        assert any("title: [bold]x[/]" in t for t in titles), titles
        label = plain(app.query_one("#timeline-label", Static))
        assert f"request {len(app.main_screen.view.requests)}/{len(app.main_screen.view.requests)}" in label
        budget = plain(app.query_one("#budget-view", Static))
        assert "Largest blocks" in budget and "System prompt" in budget
        assert_screen_clean(app)
        # Walk every request: the budget's largest blocks change, none lets a control character through.
        for index in range(len(app.main_screen.view.requests)):
            app.main_screen.jump_to_request(index)
            await pilot.pause()
            assert_clean(plain(app.query_one("#budget-view", Static)))
            assert_clean(plain(app.query_one("#timeline-label", Static)))
        # Clicking the title in the status line and the thread list, and hovering them, runs no action.
        await pilot.click("#status", offset=(12, 0))
        await pilot.hover("#status", offset=(40, 0))
        await pilot.click("#threads-table", offset=(20, 1))
        await pilot.pause()
        assert_still_running(app)


async def test_blocks_table_and_every_block_detail_are_literal(tmp_path: Path) -> None:
    app = make_app(tmp_path, source=source())
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await pilot.pause()
        view = app.query_one(BlocksView)
        checked = 0
        seen: set[tuple[str | None, str, str, str]] = set()
        for index in range(len(app.main_screen.view.requests)):
            app.main_screen.jump_to_request(index)
            await pilot.pause()
            request = app.main_screen.current_request
            table = app.query_one("#blocks-table", LineTable)
            assert table.row_count == len(request.blocks)
            for row, block in enumerate(request.blocks):
                assert_clean(" ".join(str(cell) for cell in table.get_row_at(row)))
                # A block's detail depends on its message, status, reason and kind: each such block once
                # (the same message's detail in every later request is the same text).
                key = (block.message_id, str(block.status), str(block.reason), str(block.kind))
                if key in seen:
                    continue
                seen.add(key)
                view.select_block(row)
                await pilot.pause()
                detail = plain(app.query_one("#block-detail", Static))
                assert_clean(detail)
                assert_clean(" ".join(str(cell) for cell in table.get_row_at(row)))
                message = app.main_screen.view.messages.get(block.message_id)
                if message is not None:
                    # The message's first line, literally (the pane wraps at 200 columns: compare without spaces).
                    first_line = safe_text(message.content.splitlines()[0])
                    assert squeeze(first_line) in squeeze(detail), (block.message_id, detail[:300])
                    if message.id in ("u1", "t1"):
                        # The 20,000-character line: shown up to the pane's cap, which says what it left out.
                        unwrapped = detail.replace("\n", "")
                        assert "L" * 5_000 in unwrapped
                        assert "[bold]END[/]" in unwrapped or "more characters not shown" in unwrapped
                    if message.tool_calls:
                        assert safe_line(hostile("tool name"), 40)[:30] in detail
                        assert "argument: [bold]x[/] [link=https://e.x]y[/link] [@click=app.quit]z[/]" in detail
                        assert "\\u001b[2J" in detail  # the arguments are JSON: escapes are spelled out
                if str(block.kind) == "summary":
                    assert shown("narrative") in detail
                checked += 1
            assert_screen_clean(app)
        assert checked > 30
        view.select_block(1)  # the tool call's name and arguments
        await pilot.pause()
        region = app.query_one("#block-detail-scroll").region
        for y in range(min(region.height, 12)):
            await pilot.click("#block-detail-scroll", offset=(min(20, region.width - 1), y))
            await pilot.hover("#block-detail-scroll", offset=(min(30, region.width - 1), y))
        await pilot.pause()
        assert_still_running(app)


async def test_summaries_table_and_detail_show_every_field_literally(tmp_path: Path) -> None:
    app = make_app(tmp_path, source=source())
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("3")
        await pilot.pause()
        summaries = app.query_one(SummariesView)
        assert [s.id for s in summaries.ordered] == ["s1"]
        detail = plain(app.query_one("#summary-detail", Static))
        for label in ("narrative", "accomplishment", "decision", "file", "goal", "fact", "emotional thread"):
            assert shown(label) in detail, label
        assert_screen_clean(app)
        region = app.query_one("#summary-detail-scroll").region
        for y in range(min(region.height, 12)):  # the narrative's line included
            await pilot.click("#summary-detail-scroll", offset=(min(20, region.width - 1), y))
            await pilot.hover("#summary-detail-scroll", offset=(min(30, region.width - 1), y))
        await pilot.pause()
        assert_still_running(app)


async def test_config_help_and_notifications_stay_literal(tmp_path: Path) -> None:
    app = make_app(tmp_path, source=source(), thread_id=hostile("wanted id"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        notes = list(app._notifications)
        assert notes, "a warning about the unknown (hostile) thread id"
        for note in notes:
            assert not note.markup
            assert_clean(note.message + note.title)
        assert safe_line(hostile("wanted id"), 60)[:40] in notes[0].message
        await pilot.press("e")  # an export notification names the thread's file; the title goes in the JSON
        await settle(app, pilot)
        assert app.main_screen.files.last_export is not None
        assert json.loads(app.main_screen.files.last_export.read_text())["thread_title"] == hostile("title")
        for note in app._notifications:
            assert_clean(note.message + note.title)
        await pilot.press("4")
        await pilot.pause()
        assert_screen_clean(app)
        await pilot.press("escape")
        await pilot.press("f1")
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpScreen"
        assert_screen_clean(app)
        await pilot.press("escape")
        await pilot.pause()
        assert_still_running(app)


async def test_command_palette_finds_the_hostile_title_and_opens_it(tmp_path: Path) -> None:
    app = make_app(tmp_path, source=source(), thread_id="benign")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view.thread.id == "benign"
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Thread: title: [bold]x[/] [link")
        await pilot.pause(0.3)  # the palette searches in its own worker
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert_screen_clean(app)
        screenshot = app.export_screenshot()
        assert "[link=https://e.x]" in screenshot
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.main_screen.view.thread.id == THREAD_ID
        assert shown("title", 60) in plain(app.query_one("#status", Static))
        assert_screen_clean(app)
        assert_still_running(app)


def test_blocks_pane_snapshot_with_the_hostile_thread(snap_compare, tmp_path: Path) -> None:
    app = make_app(tmp_path, source=source())

    async def run_before(pilot) -> None:
        await settle(app, pilot)
        await pilot.press("2")
        await pilot.pause()
        app.query_one(BlocksView).select_block(1)  # the assistant message with the hostile tool call
        app.query_one("#blocks-table").focus()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_simulate_text_output_has_no_raw_escapes(tmp_path: Path) -> None:
    thread_file = tmp_path / "hostile.json"
    thread_file.write_text(json.dumps(export_native([hostile_thread()])), encoding="utf-8")
    db = tmp_path / "hostile.sqlite"
    runner = CliRunner()
    imported = runner.invoke(cli_main, ["import", "--db", str(db), "--format", "native", str(thread_file)])
    assert imported.exit_code == 0, imported.output
    assert_clean(imported.output)
    for extra in ([], ["--timeline"], ["--request", "3"]):
        result = runner.invoke(cli_main, ["simulate", "--thread", THREAD_ID, "--db", str(db), *extra])
        assert result.exit_code == 0, result.output
        assert_clean(result.output)
        assert "request" in result.output.lower()
    # The full audit names the hostile blocks and the summary, literally.
    full = runner.invoke(cli_main, ["simulate", "--thread", THREAD_ID, "--db", str(db)]).output
    assert "[@click=app.quit]" in full and "␛[2J" in full
