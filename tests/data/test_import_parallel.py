"""`import_paths(..., jobs=2)`: one parse child beside this process, against the one-process import of the
same files (copies of real transcripts, with bad files between them): the same report and rows, and
what a child's crash, a child's exception, a thread-id clash and Ctrl-C leave."""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest

from inspector import importers
from inspector.importers import _parallel, import_paths
from tests.data.test_bulk_rows import store_pair, table_rows
from tests.helpers import counted_forks
from tests.paths import REAL

SOURCES = ["codex-rollout.jsonl", "claude-code-session-with-sidechains.jsonl", "codex-desktop-0.128-rollout.jsonl",
           "claude-code-session-with-compaction.jsonl"]


@pytest.fixture(autouse=True)
def _any_size(monkeypatch):
    monkeypatch.setattr(importers, "PARALLEL_BYTES", 0)  # these few MiB parsed in children too


def _folder(tmp: Path) -> Path:
    """Real transcripts with a file that is not JSON, one of no known format and an empty one between them."""
    folder = tmp / "in"
    folder.mkdir()
    shutil.copy(REAL / SOURCES[0], folder / "a.jsonl")
    (folder / "b-not-json.jsonl").write_text("this is not json\n{\n")
    shutil.copy(REAL / SOURCES[1], folder / "c.jsonl")
    (folder / "d-unknown.jsonl").write_text('{"hello": "world"}\n{"x": 1}\n')
    shutil.copy(REAL / SOURCES[2], folder / "e.jsonl")
    (folder / "f-empty.json").write_text("")
    shutil.copy(REAL / SOURCES[3], folder / "g.jsonl")
    return folder


def _forks(monkeypatch, then=None) -> list[int]:
    """The pids of the children the import forks; `then()` runs in this process right after each fork."""
    return counted_forks(monkeypatch, _parallel, None if then is None else lambda _pids: then())


def _gone(pids: list[int]) -> bool:
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        return False
    return True


def test_bad_files_between_good_ones_give_what_one_process_gives(tmp_path, monkeypatch):
    folder = _folder(tmp_path)
    pids = _forks(monkeypatch)
    with store_pair("sqlite", tmp_path) as (parallel, serial):
        got = import_paths([folder], parallel, now="t1", jobs=2)
        assert len(pids) == 1
        expected = import_paths([folder], serial, now="t1", jobs=1)
        assert got == expected
        assert [e.split(":")[0] for e in got.errors] == [str(folder / n) for n in
                                                         ("b-not-json.jsonl", "d-unknown.jsonl", "f-empty.json")]
        assert [Path(f).name for f in got.files] == ["a.jsonl", "c.jsonl", "e.jsonl", "g.jsonl"]
        assert table_rows(parallel.url) == table_rows(serial.url)
    assert _gone(pids)


def test_a_child_that_dies_costs_its_file_one_line_and_the_others_land(tmp_path, monkeypatch):
    """The child is killed (SIGKILL, as the out-of-memory killer does) parsing the first file, which it
    is always given first: that file is one error line, the others are saved (parsed here once no
    child is left) as one process saves them without it."""
    folder = _folder(tmp_path)
    parent = os.getpid()
    parse = importers._parse_one

    def dying(path, *args):
        if os.getpid() != parent and path.name == "a.jsonl":
            os.kill(os.getpid(), signal.SIGKILL)
        return parse(path, *args)

    monkeypatch.setattr(importers, "_parse_one", dying)
    pids = _forks(monkeypatch)
    with store_pair("sqlite", tmp_path) as (parallel, serial):
        got = import_paths([folder], parallel, now="t1", jobs=2)
        rest = sorted(p for p in folder.iterdir() if p.name != "a.jsonl")
        expected = import_paths(rest, serial, now="t1", jobs=1)
        assert got.errors == [f"{folder / 'a.jsonl'}: the process parsing it was killed by SIGKILL; nothing of it "
                              "imported", *expected.errors]
        got.errors = expected.errors
        assert got == expected and len(got.threads) >= 3
        assert table_rows(parallel.url) == table_rows(serial.url)
    assert len(pids) == 1 and _gone(pids)


def test_a_parse_that_raises_in_the_child_is_done_again_here(tmp_path, monkeypatch):
    """What the child cannot send (here: its building the rows raised) is parsed again by this process at
    the file's turn, as one process parses it."""
    folder = _folder(tmp_path)
    parent = os.getpid()
    prebuilt = importers._prebuilt

    def failing(parsed, ascii):
        if os.getpid() != parent:
            raise RuntimeError("cannot send this")
        return prebuilt(parsed, ascii)

    monkeypatch.setattr(importers, "_prebuilt", failing)
    with store_pair("sqlite", tmp_path) as (parallel, serial):
        got = import_paths([folder], parallel, now="t1", jobs=2)
        expected = import_paths([folder], serial, now="t1", jobs=1)
        assert got == expected and len(got.threads) >= 4
        assert table_rows(parallel.url) == table_rows(serial.url)


def test_a_thread_id_another_file_gave_is_renamed_as_in_one_process(tmp_path, monkeypatch):
    """Two copies of one session (different text: a blank line more) in two folders: the second's threads
    are `~2`, their rows and sub-agent links renamed with them, whichever process parsed it."""
    root = tmp_path / "in"
    for name in ("one", "two", "three"):
        (root / name).mkdir(parents=True)
    shutil.copy(REAL / SOURCES[1], root / "one" / "s.jsonl")
    (root / "two" / "s.jsonl").write_text((REAL / SOURCES[1]).read_text(encoding="utf-8") + "\n", encoding="utf-8")
    shutil.copy(REAL / SOURCES[0], root / "three" / "x.jsonl")
    with store_pair("sqlite", tmp_path) as (parallel, serial):
        got = import_paths([root], parallel, now="t1", jobs=2)
        expected = import_paths([root], serial, now="t1", jobs=1)
        assert got == expected
        assert any(t.endswith("~2") for t in got.threads)
        assert any("both kept" in w for w in got.skipped)
        assert table_rows(parallel.url) == table_rows(serial.url)


def test_ctrl_c_during_the_import_leaves_no_child_and_no_file(tmp_path, monkeypatch):
    folder = _folder(tmp_path)
    pids = _forks(monkeypatch)
    calls = []

    def interrupted(path, done, total):
        calls.append(done)
        if len(calls) == 3:
            raise KeyboardInterrupt

    with store_pair("sqlite", tmp_path) as (parallel, _):
        with pytest.raises(KeyboardInterrupt):
            import_paths([folder], parallel, now="t1", jobs=2, progress=interrupted)
        assert parallel.list_threads() == []  # nothing committed: the batch was rolled back
    assert len(pids) == 1 and _gone(pids)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fast.sqlite", "in", "reference.sqlite"]


def test_a_ctrl_c_just_as_a_child_is_forked_leaves_no_child(tmp_path, monkeypatch):
    """SIGINT right after the fork returns, before this process has noted the child: held until it has,
    then the import ends and the child with it."""
    folder = _folder(tmp_path)
    # to this thread, as the terminal's Ctrl-C reaches the command's one thread (a test runner's other
    # threads could take a signal sent to the whole process, and Python runs its handler all the same)
    pids = _forks(monkeypatch, then=lambda: signal.pthread_kill(threading.main_thread().ident, signal.SIGINT))
    with store_pair("sqlite", tmp_path) as (parallel, _), pytest.raises(KeyboardInterrupt):
        import_paths([folder], parallel, now="t1", jobs=2)
    assert len(pids) == 1 and _gone(pids)


def test_a_commit_while_waiting_for_the_child_that_fails_stops_the_run(tmp_path, monkeypatch):
    """The batch committed while this process waits for the child's file (here at once), and the commit
    fails (a full disk): the files saved are error lines, the awaited file is not saved, the rest are
    one line, as when a save fails; the child is ended."""
    from inspector.store import StoreError, native

    folder = _folder(tmp_path)
    parent = os.getpid()
    parse = importers._parse_one
    failed = tmp_path / "commit-failed"

    def slow(path, *args):
        if os.getpid() != parent and path.name == "b-not-json.jsonl":  # the child's second file: held
            for _ in range(120_000):  # until this process's commit while waiting for it has failed
                if failed.exists():
                    break
                time.sleep(0.001)
        return parse(path, *args)

    def full(batch):
        failed.touch()
        raise StoreError("disk full")

    monkeypatch.setattr(importers, "_parse_one", slow)
    monkeypatch.setattr(importers, "WAITING_COMMIT", 0.0)
    monkeypatch.setattr(native.ImportBatch, "commit", full)
    pids = _forks(monkeypatch)
    with store_pair("sqlite", tmp_path) as (parallel, _):
        report = import_paths([folder], parallel, now="t1", jobs=2)
        assert parallel.list_threads() == []
    assert report.errors == [f"{folder / 'a.jsonl'}: not saved (disk full); nothing of it imported",
                             f"{folder / 'b-not-json.jsonl'}: not saved (disk full); nothing of it imported",
                             "5 more file(s) not imported: the database stopped accepting writes"]
    assert report.threads == [] and report.files == []
    assert len(pids) == 1 and _gone(pids)


def test_one_file_or_one_job_forks_nothing(tmp_path, monkeypatch):
    folder = _folder(tmp_path)
    pids = _forks(monkeypatch)
    with store_pair("sqlite", tmp_path) as (one, two):
        import_paths([folder / "a.jsonl"], one, now="t1", jobs=4)
        import_paths([folder], two, now="t1", jobs=1)
    assert pids == []
    monkeypatch.setattr(importers, "PARALLEL_BYTES", 1 << 40)  # too little to parse
    (tmp_path / "more").mkdir()
    with store_pair("sqlite", tmp_path / "more") as (three, _):
        import_paths([folder], three, now="t1", jobs=4)
    assert pids == []
    monkeypatch.setattr(importers, "PARALLEL_BYTES", 0)
    with store_pair("sqlite", tmp_path / "more") as (_, four):
        import_paths([folder], four, now="t1", jobs=2)
    assert len(pids) == 1  # the same files, with enough to parse


@pytest.mark.parametrize(("sizes", "budget", "most"), [({}, 1 << 30, None), ({n: 10 for n in range(9)}, 25, 2),
                                                      ({n: 100 for n in range(9)}, 25, 1)])
def test_the_files_parsed_ahead_stay_within_the_window_and_the_budget(sizes, budget, most):
    """One child (the window: `(DEPTH + 2) * 2` files), sizes against the budget (a file larger than it alone):
    the files given out or parsed here and not yet taken never pass either bound, and every answer is
    the file's own, in order."""
    seen: list[int] = []
    children = _parallel.ParseChildren(1, lambda number, progress: number * 10, range(9), progress=False,
                                       sizes=sizes, budget=budget)

    def ahead() -> None:
        seen.append(len(children._owner) + len(children._results))

    feed, steal = children._feed, children._steal
    children._feed = lambda: (feed(), ahead())
    children._steal = lambda: (steal(), ahead())
    with children:
        answers = [children.take(number, None) for number in range(9)]
    assert answers == [("ok", number * 10) for number in range(9)]
    assert children.window == (_parallel.DEPTH + 2) * 2
    assert 1 <= max(seen) <= (most or children.window)
