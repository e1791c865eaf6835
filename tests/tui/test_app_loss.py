"""The TUI side of issue 13: the Summaries pane lists what each compaction lost (each line jumps to
its source block), "Probe: ..." marks where a text disappears, the what-if diff says how loss changed."""

from __future__ import annotations

from textual.widgets import Static, TabbedContent

from inspector.model import Message, Request, Role, Summary, Thread, ToolCall
from inspector.screens.source import MemorySource
from tests.tui.app_support import SIZE, make_app, plain, settle
from widgets.blocks import BlocksView
from widgets.summaries import SummariesView
from widgets.timeline import TimelineChart

LOSSY06 = "- inspected app.py\n- pending work remains"
CORRECTION06 = "never edit the test fixtures"


def seed_thread() -> Thread:
    """Seed 002's loss probe with its lossy summary recorded before the second request."""
    return Thread(
        "seed06", title="planted correction", window=200,
        messages=(
            Message("m0", Role.SYSTEM, "system contract"),
            Message("m1", Role.USER, "Correction: never edit the test fixtures."),
            Message("m2", Role.ASSISTANT, "I will keep that correction in mind."),
            Message("m3", Role.TOOL, "The failing test is test_parser.py::test_fixture."),
            Message("m4", Role.USER, "Continue with the smallest safe change."),
        ),
        requests=(Request("r0", "m1", prompt_tokens=170), Request("r1", "m4")),
        summaries=(Summary("s06", "m1", "m3", LOSSY06, before_request_id="r1"),),
    )


def commands_thread() -> Thread:
    """Eight turns that each run a command; the recorded prompts reach 1,200 of a 2,000-token window."""
    messages = [Message("s0", Role.SYSTEM, "contract")]
    requests = []
    for turn in range(1, 9):
        messages += [
            Message(f"u{turn}", Role.USER, f"Step {turn}, please."),
            Message(f"a{turn}", Role.ASSISTANT, "", tool_calls=(
                ToolCall(f"c{turn}", "Bash", {"command": f"pytest tests/test_{turn}.py -k case{turn}"}),)),
            Message(f"t{turn}", Role.TOOL, "ok", tool_call_id=f"c{turn}"),
        ]
        requests.append(Request(f"r{turn}", f"u{turn}", prompt_tokens=150 * turn))
    return Thread("cmds", title="commands", window=2000, messages=tuple(messages), requests=tuple(requests))


def _app(tmp_path, thread: Thread):
    return make_app(tmp_path, MemorySource([thread]), thread_id=thread.id, profile="iris")


async def test_the_summaries_pane_lists_what_the_compaction_lost_and_jumps_to_its_source(tmp_path):
    app = _app(tmp_path, seed_thread())
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("3")
        await settle(app, pilot)
        view = app.query_one(SummariesView)
        assert [(str(f.kind), f.text, f.message_id) for f in view.lost] == [
            ("path", "test_parser.py", "m3"),
            ("error", "test_parser.py::test_fixture", "m3"),
            ("instruction", CORRECTION06, "m1"),
        ]
        detail = plain(app.query_one("#summary-detail", Static))
        assert "Lost 3 of 3 facts of the 3 messages it replaced" in detail
        assert "instruction 1/1" in detail
        lost_table = app.query_one("#lost-facts")
        # named by turn and kind, not by message id (issue 22 item 13)
        assert [c.strip() for c in lost_table.plain_row(2)] == ["instruction", CORRECTION06, "req 1 turn 1 user"]
        lost_table.focus()
        lost_table.move_cursor(row=2)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.query_one(TabbedContent).active == "blocks"
        assert app.main_screen.request_index == 1  # the compaction's request
        blocks = app.query_one(BlocksView)
        assert blocks.request.blocks[blocks.table.cursor_row].message_id == "m1"
        assert str(blocks.request.blocks[blocks.table.cursor_row].status) == "summarized"
        # the fact is marked in the block's detail
        detail = app.query_one("#block-detail", Static).content
        marked = [detail.plain[s.start:s.end] for s in detail.spans if app.console.get_style(s.style).reverse]
        assert marked and all(m.casefold() == CORRECTION06.casefold() for m in marked)


async def test_a_probe_from_the_palette_marks_where_the_correction_disappears(tmp_path):
    app = _app(tmp_path, seed_thread())
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.main_screen.jump_to_request(0)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*f"Probe: {CORRECTION06}")
        await pilot.pause(0.3)  # the palette searches in its own worker; wait for its results
        await app.workers.wait_for_complete()
        await pilot.press("enter")
        await settle(app, pilot)
        chart = app.query_one(TimelineChart)
        assert app.main_screen.loss.probe_result is not None and app.main_screen.loss.probe_result.lost_at == 1
        assert chart.probe_mark == 1 and app.main_screen.request_index == 1
        notes = " ".join(n.message for n in app._notifications)
        assert f'"{CORRECTION06}" stops being visible at request 2' in notes
        # A text the summary keeps is never lost: the mark goes.
        app.main_screen.probe_text("app.py")
        await settle(app, pilot)
        assert app.main_screen.loss.probe_result.lost_at is None and chart.probe_mark is None


async def test_the_what_if_diff_says_how_loss_changed(tmp_path):
    app = _app(tmp_path, commands_thread())
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view.diff is None and not app.main_screen.loss.losses  # the baseline never compacts
        app.main_screen.set_config_value("context.compaction_threshold", 0.3)
        await settle(app, pilot)
        assert app.main_screen.loss.losses, "the what-if compacts"
        lost = sum(loss.counts()[kind].lost for loss in app.main_screen.loss.losses.values() for kind in loss.counts()
                   if str(kind) == "command")
        assert lost > 0
        assert [(c.kind, c.before, c.after) for c in app.main_screen.view.diff.loss if c.kind == "command"] == [
            ("command", 0, lost)]
        await pilot.press("4")
        await settle(app, pilot)
        diff = " ".join(plain(app.query_one("#diff", Static)).split())
        assert f"context.compaction_threshold=0.3: {lost} commands lost" in diff


async def test_hostile_facts_are_shown_literally_in_the_lost_list(tmp_path):
    hostile = "Never run \x1b[2J\x1b]0;pwned\x07 rm -rf /tmp/\x1b[31mx.py[/bold] now."
    thread = seed_thread()
    thread = Thread(thread.id, title=thread.title, window=thread.window, requests=thread.requests,
                    summaries=thread.summaries,
                    messages=thread.messages[:1] + (Message("m1", Role.USER, hostile),) + thread.messages[2:])
    app = _app(tmp_path, thread)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("3")
        await settle(app, pilot)
        view = app.query_one(SummariesView)
        assert any(f.message_id == "m1" and str(f.kind) == "instruction" for f in view.lost)
        table = app.query_one("#lost-facts")
        cells = [c for i in range(table.row_count) for c in table.plain_row(i)]
        assert cells and not any(ch in cell for cell in cells for ch in "\x1b\x07")
        assert any("[/bold]" in cell for cell in cells)  # markup shown, not parsed
