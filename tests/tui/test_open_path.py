"""`context-inspector PATH`: a Claude Code session opened where it is and followed while another
process appends to it (issue 26 item 6). Bounded by progress, never by wall time."""

from __future__ import annotations

import gzip
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from click.testing import CliRunner

from inspector.app import create_app
from inspector.cli import main
from inspector.cli.open_path import SessionFollower, main_thread
from inspector.demo_data import __file__ as DEMO_DATA
from tests.tui.app_support import SIZE

SESSION = Path(DEMO_DATA).parent / "claude-code-session-with-compaction.jsonl.gz"
STALL_S = 60.0  # fails only when neither the writer nor the app moved for this long

WRITER = textwrap.dedent(
    """
    import sys, time
    target, rest = sys.argv[1], open(sys.argv[2], encoding="utf-8").read().splitlines(keepends=True)
    for n, line in enumerate(rest, 1):
        with open(target, "a", encoding="utf-8") as out:
            out.write(line)
        if n % 20 == 0:
            print(f"appended {n}", flush=True)
            time.sleep(0.05)
    """
)


def _lines() -> list[str]:
    return gzip.decompress(SESSION.read_bytes()).decode("utf-8").splitlines(keepends=True)


def test_a_path_that_is_neither_a_file_nor_a_command_is_one_line(tmp_path: Path):
    result = CliRunner().invoke(main, [str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"context-inspector: error: {tmp_path / 'nope.jsonl'}: no such file or folder (and not a command; see --help)"]
    both = CliRunner().invoke(main, [str(tmp_path), "--db", str(tmp_path / "x.sqlite")])
    assert both.exit_code == 2 and "not both" in both.output


def test_the_follower_imports_again_when_the_file_grows_and_leaves_nothing_behind(tmp_path: Path):
    lines = _lines()
    src = tmp_path / "session.jsonl"
    src.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    before = sorted(p.name for p in tmp_path.iterdir())
    follower = SessionFollower(src, interval=0.05)
    try:
        thread = main_thread(follower.threads)
        assert thread is not None and "/" not in thread
        assert follower.check() is False, "nothing changed yet"
        with src.open("a", encoding="utf-8") as out:
            out.writelines(lines[len(lines) // 2:])
        assert follower.check() is True and follower.imports == 2
        folder = follower.folder
        assert folder.is_dir() and not folder.is_relative_to(tmp_path)
    finally:
        follower.close()
    assert not folder.exists(), "the private store is removed"
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "nothing written beside the source"


async def test_the_tui_follows_a_session_another_process_appends_to(tmp_path: Path):
    lines = _lines()
    half = len(lines) // 3
    src = tmp_path / "session.jsonl"
    src.write_text("".join(lines[:half]), encoding="utf-8")
    rest = tmp_path / "rest.jsonl.txt"
    rest.write_text("".join(lines[half:]), encoding="utf-8")
    full = tmp_path / "whole" / "session.jsonl"
    full.parent.mkdir()
    full.write_text("".join(lines), encoding="utf-8")
    with SessionFollower(full) as reference:  # what importing the whole file gives, for the end state
        from inspector.store import Store

        with Store.open(reference.url) as store:
            whole = len(store.load_thread(main_thread(reference.threads)).messages)
    follower = SessionFollower(src, interval=0.05)
    app = create_app(db_url=follower.url, thread_id=main_thread(follower.threads), live=True, poll_interval=0.05,
                     pane_throttle=0, config_file=tmp_path / "config.toml", export_dir=tmp_path / "out",
                     screenshot_dir=tmp_path / "out")
    counts: list[int] = []
    try:
        follower.start()
        async with app.run_test(size=SIZE) as pilot:
            while app.main_screen.view is None:
                await pilot.pause(0.05)
            counts.append(len(app.main_screen.view.thread.messages))
            log = (tmp_path / "writer.log").open("w")
            writer = subprocess.Popen([sys.executable, "-c", WRITER, str(src), str(rest)], stdout=log,
                                      stderr=subprocess.STDOUT)
            last, size = time.monotonic(), 0
            while True:
                await pilot.pause(0.05)
                shown = len(app.main_screen.view.thread.messages) if app.main_screen.view is not None else 0
                if shown != counts[-1]:
                    counts.append(shown)
                    last = time.monotonic()
                grown = (tmp_path / "writer.log").stat().st_size
                if grown != size:
                    size, last = grown, time.monotonic()
                if writer.poll() is not None and shown == whole:
                    break  # the writer is done and the app shows what the whole file gives
                assert time.monotonic() - last < STALL_S, f"no progress for {STALL_S} s: {counts[-5:]}"
            log.close()
            assert writer.returncode == 0
    finally:
        follower.close()
    assert counts[0] < counts[-1], "the appended lines appeared"
    assert len(counts) >= 2 and counts == sorted(counts)
    assert counts[-1] == whole, "the app ends with exactly what the whole file gives"
    assert follower.errors == []
