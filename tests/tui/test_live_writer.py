"""Live tailing under a writer: another process appends 2,000 messages while the app follows the thread."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from textual.widgets import Static

from inspector.app import create_app
from inspector.recording import Recorder
from tests.paths import ROOT
from tests.tui.app_support import SIZE, plain

THREAD = "tailed"
PAIRS = 1_000  # 2,000 messages, one transaction per message plus one per recorded request
# Bounded by progress, not wall time: the test fails only when neither the writer nor the app has moved
# for this long (a loaded 2-core machine writes slowly, but it writes).
STALL_S = 60.0

WRITER = textwrap.dedent(
    """
    import json, sys
    from inspector.recording import Recorder

    url, thread_id, pairs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    written, requests = [], []
    with Recorder(url) as rec:
        thread = rec.resume_thread(thread_id)
        for i in range(pairs):
            written.append(thread.append("user", f"question {i}", message_id=f"u{i:05d}"))
            requests.append(thread.record_request(100 + i, request_id=f"r{i:05d}"))
            written.append(thread.append("assistant", f"answer {i}", message_id=f"a{i:05d}"))
            if i % 100 == 99:
                print(f"written {i + 1}", flush=True)
    with open(sys.argv[4], "w", encoding="utf-8") as out:
        json.dump({"messages": written, "requests": requests}, out)
    """
)


async def test_app_tails_a_thread_another_process_is_writing(tmp_path: Path) -> None:
    db = tmp_path / "live.sqlite"
    url = f"sqlite:///{db}"
    with Recorder(url) as rec:
        rec.open_thread("Tailed while written", system_prompt="You help.", thread_id=THREAD)
    app = create_app(db_url=url, thread_id=THREAD, live=True, poll_interval=0.05, pane_throttle=0,
                     config_file=tmp_path / "config.toml", export_dir=tmp_path, screenshot_dir=tmp_path)
    notes: list[tuple[str, str]] = []
    original_notify = app.notify

    def recording_notify(message: str, **kwargs) -> None:
        notes.append((str(kwargs.get("severity", "information")), message))
        original_notify(message, **kwargs)

    app.notify = recording_notify  # type: ignore[method-assign]
    script = tmp_path / "writer.py"
    script.write_text(WRITER, encoding="utf-8")
    root = ROOT
    seen_counts: list[int] = []
    lagging: list[tuple[int, int]] = []  # (selected request, newest request) whenever they differed
    async with app.run_test(size=SIZE) as pilot:
        # The writer reports through a file: a pipe the test only reads at the end could fill and block it.
        report = tmp_path / "written.json"
        log = (tmp_path / "writer.log").open("w")
        writer = subprocess.Popen([sys.executable, str(script), url, THREAD, str(PAIRS), str(report)], cwd=root,
                                  stdout=log, stderr=subprocess.STDOUT)
        finished = False
        stalled = False
        log_size = 0
        last_progress = time.monotonic()
        while True:
            await pilot.pause(0.05)
            if app.main_screen.view is not None and (not seen_counts or seen_counts[-1] != len(app.main_screen.view.thread.messages)):
                seen_counts.append(len(app.main_screen.view.thread.messages))
                last_progress = time.monotonic()
                if app.main_screen.view.requests and app.main_screen.request_index != len(app.main_screen.view.requests) - 1:
                    lagging.append((app.main_screen.request_index, len(app.main_screen.view.requests) - 1))
            size = (tmp_path / "writer.log").stat().st_size
            if size != log_size:
                log_size, last_progress = size, time.monotonic()
            finished = writer.poll() is not None
            if finished and app.main_screen.view is not None and len(app.main_screen.view.thread.messages) >= 2 * PAIRS:
                break
            if time.monotonic() - last_progress > STALL_S:
                stalled = True
                break
        log.close()
        if not finished:
            writer.kill()
            writer.wait()
        output = (tmp_path / "writer.log").read_text()
        assert not stalled, (f"no progress for {STALL_S} s (writer finished: {finished}, app shows "
                             f"{seen_counts[-1:] or [0]} messages): {output[-2000:]}")
        assert writer.returncode == 0, output[-2000:]
        assert app.main_screen.view is not None and len(app.main_screen.view.thread.messages) == 2 * PAIRS, seen_counts[-5:]
        expected = json.loads(report.read_text())
        assert len(expected["messages"]) == 2 * PAIRS
        view = app.main_screen.view
        assert view is not None
        ids = [m.id for m in view.thread.messages]
        assert ids == expected["messages"], "the app must show exactly the written messages, each once, in order"
        assert len(set(ids)) == len(ids)
        assert [r.id for r in view.thread.requests] == expected["requests"]
        # The app followed the newest request while the writer appended: at every view seen, and at the end.
        assert lagging == []
        assert app.main_screen.request_index == len(view.requests) - 1
        assert app.main_screen.current_request is not None and app.main_screen.current_request.request_id == expected["requests"][-1]
        assert app.main_screen.loading_error is None
        assert notes == [], f"no notification expected, got {notes}"
        status = plain(app.query_one("#status", Static))
        assert "locked" not in status.lower() and "cannot" not in status.lower()
        assert f"{2 * PAIRS:,} messages" in status
        assert app.is_running
    # It tailed, rather than loading once at the end: several intermediate counts were shown.
    assert len(seen_counts) >= 3, seen_counts
    assert seen_counts == sorted(seen_counts)
