"""Issue 14 item 9: one request numbering, one error code, one column name; counts in the text timeline;
the palette's request numbers; the thread filter's Enter; a failed import leaves no file; paths said."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner
from textual.widgets import Static

from inspector.cli import main
from inspector.config import Config
from inspector.examples import (
    HARNESS_ID,
    OVERFLOW_ID,
    WALKTHROUGH_ID,
    demo_threads,
    harness_thread,
    overflow_thread,
    roleplay_thread,
    walkthrough_thread,
)
from inspector.importers.native import export_native
from inspector.screens.source import MemorySource
from inspector.service import run_simulation
from tests.paths import ROOT
from tests.tui.app_support import SIZE, make_app, plain, settle


def _db(tmp_path: Path, threads) -> Path:
    src = tmp_path / "threads.json"
    src.write_text(json.dumps(export_native(list(threads))), encoding="utf-8")
    db = tmp_path / "db.sqlite"
    result = CliRunner().invoke(main, ["import", str(src), "--db", str(db)])
    assert result.exit_code == 0, result.output
    return db


def test_simulate_timeline_text_shows_the_block_counts_of_the_json(tmp_path):
    db = _db(tmp_path, [walkthrough_thread()])
    runner = CliRunner()
    args = ["simulate", "--thread", WALKTHROUGH_ID, "--db", str(db), "--timeline"]
    data = json.loads(runner.invoke(main, [*args, "--json"]).output)
    text = runner.invoke(main, args).output.splitlines()
    header = next(i for i, line in enumerate(text) if line.split()[:2] == ["N", "INDEX"])
    columns = text[header].split()
    rows = [line.split() for line in text[header + 2:] if line.strip()]
    assert len(rows) == len(data["requests"])
    for row, request in zip(rows, data["requests"], strict=True):
        counts = request["block_counts"]
        got = {k: int(row[columns.index(k)]) for k in ("KEPT", "PRUNED", "EXCL", "SUMM")}
        assert got == {"KEPT": counts.get("kept", 0), "PRUNED": counts.get("pruned", 0),
                       "EXCL": counts.get("excluded", 0) + counts.get("truncated", 0),
                       "SUMM": counts.get("summarized", 0)}
        assert (int(row[0]), int(row[1])) == (request["index"] + 1, request["index"])
    assert any(int(row[columns.index("SUMM")]) > 0 for row in rows)


def test_cli_and_tui_say_the_same_request_numbering(tmp_path):
    db = _db(tmp_path, [walkthrough_thread()])
    text = CliRunner().invoke(main, ["simulate", "--thread", WALKTHROUGH_ID, "--db", str(db),
                                     "--request", "40"]).output
    assert "request 41 (index 40," in text
    assert "requests are numbered from 1" in text and "INDEX counts from 0" in text


async def test_tui_label_gives_the_request_number_and_its_index(tmp_path):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.main_screen.jump_to_request(40)
        await pilot.pause()
        assert "request 41/44 (index 40)" in plain(app.query_one("#timeline-label", Static))


def test_every_profile_fails_with_the_seeds_error_code():
    failing = {
        "iris": (overflow_thread(), {}),
        "harness": (harness_thread(), {"context.window": 60}),
        "shifting": (roleplay_thread(), {"context.window": 1100}),
    }
    for profile, (thread, values) in failing.items():
        sim = run_simulation(thread, Config.for_profile(profile, {"context.window": thread.window or 200_000,
                                                                  **values}))
        codes = {r.error.code for r in sim.requests if r.error is not None}
        assert codes == {"TOKEN_BUDGET_EXCEEDED"}, (profile, codes)


def test_threads_text_names_the_recorded_compactions_as_the_tui_does(tmp_path):
    db = _db(tmp_path, [walkthrough_thread()])
    header = CliRunner().invoke(main, ["threads", "--db", str(db)]).output.splitlines()[0].split()
    assert header == ["ID", "SOURCE", "MSGS", "REQS", "COMP", "TITLE"]


async def test_a_failed_request_says_what_it_needs_not_prompt_0(tmp_path):
    app = make_app(tmp_path, thread_id=OVERFLOW_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f")
        await settle(app, pilot)
        request = app.main_screen.current_request
        assert request.failed and request.budget.needed_tokens
        label = plain(app.query_one("#timeline-label", Static))
        assert "prompt 0" not in label and f"needs {request.budget.needed_tokens:,}" in label
        budget = plain(app.query_one("#budget-view", Static))
        assert f"not sent (needs {request.budget.needed_tokens:,})" in budget


async def test_palette_number_finds_the_request_before_titles_with_that_number(tmp_path):
    threads = demo_threads()
    extra = [replace(walkthrough_thread(), id=f"t21-{n}", title=f"airline task 21 trial {n}") for n in range(3)]
    app = make_app(tmp_path, source=MemorySource([*threads, *extra]), thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press("2", "1")
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        await pilot.pause(0.3)
        options = app.screen.query_one("CommandList")
        assert "airline task 21" in str(options.get_option_at_index(1).prompt)
        assert str(options.get_option_at_index(0).prompt).startswith("Request 21")
        await pilot.press("enter")
        await pilot.pause()
        assert app.main_screen.request_index == 20


async def test_filter_and_enter_open_the_highlighted_thread(tmp_path):
    app = make_app(tmp_path, thread_id=OVERFLOW_ID)  # the current thread matches the filter too
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", *"demo")
        await pilot.pause()
        table = app.query_one("#threads-table")
        assert table.row_count == 4 and table.cursor_row == 0  # the first match, not the current thread
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.main_screen.view.thread.id == WALKTHROUGH_ID
        await pilot.press("slash", "ctrl+a", "ctrl+k", *"demo", "down", "down")
        await pilot.pause()
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.main_screen.view.thread.id == HARNESS_ID


def test_a_failed_import_leaves_no_database_file(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a transcript\n", encoding="utf-8")
    db = tmp_path / "new.sqlite"
    result = CliRunner().invoke(main, ["import", str(bad), "--db", str(db)])
    assert result.exit_code != 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]
    (tmp_path / "kept").mkdir()
    existing = _db(tmp_path / "kept", [walkthrough_thread()])
    before = existing.read_bytes()
    CliRunner().invoke(main, ["import", str(bad), "--db", str(existing)])
    assert existing.exists() and existing.read_bytes() == before  # an existing database stays


async def test_export_and_screenshot_say_the_whole_path(tmp_path):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("e")
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        notes = [n.message for n in app._notifications]
    exported = next(re.search(r"audit exported to (\S+)", n) for n in notes if "audit exported" in n)
    shot = next(re.search(r"screenshot saved to (\S+)", n) for n in notes if "screenshot saved" in n)
    for match in (exported, shot):
        path = Path(match.group(1))
        assert path.is_absolute() and path.is_file() and path.parent == tmp_path


# The TUI house (issue 25): a small App, workers that post messages, keys that can be rebound, colours
# from the theme. Each check reads the source (`ast`), and each finder is shown to find what it looks for.

PACKAGE_DIRS = (ROOT / "inspector", ROOT / "widgets")
HEX_COLOUR = re.compile(r"(?<![\w&])#(?:[0-9a-fA-F]{8}|[0-9a-fA-F]{6}|[0-9a-fA-F]{3})(?![0-9a-zA-Z_])")


def _sources() -> dict[str, str]:
    return {str(path.relative_to(path.parents[1])): path.read_text(encoding="utf-8")
            for root in PACKAGE_DIRS for path in sorted(root.rglob("*.py"))}


def _hex_colours(source: str) -> list[str]:
    """Hex colour literals in the module's string constants (comments are not strings)."""
    return [m.group(0) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            for m in HEX_COLOUR.finditer(node.value)]


def _bindings_without_id(source: str) -> list[int]:
    """Lines of `Binding(...)` calls that give no `id=`."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Binding"
            and not any(k.arg == "id" for k in node.keywords)]


def _calls_from_thread(source: str) -> list[int]:
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Attribute) and node.attr == "call_from_thread"]


def test_the_finders_find_what_they_look_for():
    planted = ('from textual.binding import Binding\nB = [Binding("q", "quit", "Quit"), Binding("x", "y", id="ok")]\n'
               'STYLE = "bold #ff5f5f"\nOTHER = Style(color="#abc")\n# "#123456" in a comment is no literal\n'
               'def f(app):\n    app.call_from_thread(print)\n')
    assert _hex_colours(planted) == ["#ff5f5f", "#abc"]
    assert _bindings_without_id(planted) == [2]
    assert _calls_from_thread(planted) == [7]
    assert _hex_colours('NOT = "request #12 of issue #25"\n') == []


def test_the_app_module_is_at_most_200_lines():
    lines = (PACKAGE_DIRS[0] / "app.py").read_text(encoding="utf-8").count("\n")
    assert 50 < lines <= 200, lines


def test_no_call_from_thread_workers_post_messages():
    found = {name: lines for name, source in _sources().items() if (lines := _calls_from_thread(source))}
    assert found == {}


def test_every_binding_in_the_source_has_an_id():
    sources = _sources()
    assert sum(source.count("Binding(") for source in sources.values()) > 40
    found = {name: lines for name, source in sources.items() if (lines := _bindings_without_id(source))}
    assert found == {}


def test_no_hex_colour_literal_in_python_colours_come_from_the_theme():
    found = {name: colours for name, source in _sources().items() if (colours := _hex_colours(source))}
    assert found == {}
