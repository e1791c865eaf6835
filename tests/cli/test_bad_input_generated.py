"""Bad input, round two (issue 15): generated inputs, special files, limits, config values, URLs,
export targets and the state database. Table-driven in the style of tests/cli/test_bad_input_corpus.py:
each case asserts its exit code, its one-line message naming the file, line or key, what still
imports, and that the source (and its directory) is byte-identical with nothing new beside it.
Databases opened for viewing are in tests/cli/test_bad_databases.py.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from inspector.store import Store
from tests.cli.test_bad_input_corpus import RAW_TERMINAL, Case, import_case, imported_db, run, sha256, snapshot
from tests.paths import BAD, ROOT

NATIVE = "context-inspector/v1"


def native(*threads: dict) -> str:
    return json.dumps({"format": NATIVE, "threads": list(threads)})


def chain(n: int) -> str:
    """A thread with `n` summaries, each linked to the one before (a 3,000-summary chain was cubic)."""
    messages = [{"id": f"m{i}", "role": "user" if i % 2 == 0 else "assistant", "content": f"t{i}"}
                for i in range(2 * n + 2)]
    summaries = [{"id": f"s{i}", "previous_summary_id": f"s{i - 1}" if i else None, "first_message_id": f"m{2 * i}",
                  "last_message_id": f"m{2 * i + 1}", "summary": f"part {i}"} for i in range(n)]
    return native({"id": "chain", "messages": messages, "summaries": summaries})


# ---- generated transcripts ------------------------------------------------------------------

@dataclass(frozen=True)
class Generated:
    name: str
    make: Callable[[], str | bytes]
    case: Case
    stored: Callable[[Store], None] | None = None
    """Checks on what was stored (nothing lost that the input held)."""
    limit_mb: str | None = None
    """$CONTEXT_INSPECTOR_MAX_INPUT_MB for the run (the real limit is 1 GiB)."""


def _dups_stored(store: Store) -> None:
    ids = [m.id for m in store.load_thread("dups").messages]
    assert ids[:3] == ["x", "x~2", "x~3"] and ids[-1] == "x~40000" and len(set(ids)) == 40_000


def _chain_stored(store: Store) -> None:
    summaries = store.load_thread("chain").summaries
    assert len(summaries) == 3000 and summaries[-1].previous_summary_id == "s2998"


def _loop_stored(store: Store) -> None:
    links = {s.id: s.previous_summary_id for s in store.load_thread("chain").summaries}
    # The walk from s0 goes s0 -> s2999 -> ... -> s1 -> s0: the link that closes the loop is s1's.
    assert links["s1"] is None and links["s0"] == "s2999" and links["s2999"] == "s2998" and len(links) == 3000


GENERATED = [
    Generated("dup-ids-40000.json",
              lambda: native({"id": "dups", "messages": [{"id": "x", "role": "user", "content": str(i)}
                                                         for i in range(40_000)]}),
              Case("dup-ids-40000.json", 0,
                   ("dup-ids-40000.json: thread dups: message id 'x' appears twice; the later one renamed 'x~2'",
                    "dup-ids-40000.json: 39799 more warning(s) not listed (39999 in all)", "39999 warning(s)"),
                   {"dups": 40_000}), _dups_stored),
    Generated("summary-chain-3000.json", lambda: chain(3000),
              Case("summary-chain-3000.json", 0, ("imported 1 thread(s) from 1 file(s); 0 warning(s)",), {"chain": 6002}),
              _chain_stored),
    Generated("summary-loop-3000.json", lambda: chain(3000).replace('"previous_summary_id": null', '"previous_summary_id": "s2999"', 1),
              Case("summary-loop-3000.json", 0,
                   ("summary-loop-3000.json: thread chain: summary 's1': previous_summary_id 's0' closes a cycle; "
                    "link dropped", "1 warning(s)"), {"chain": 6002}), _loop_stored),
    Generated("invalid-300000.jsonl",
              lambda: '{"role": "user", "content": "kept"}\n' + "{oops\n" * 300_000
              + '{"role": "assistant", "content": "also kept"}\n',
              Case("invalid-300000.jsonl", 0,
                   ("invalid-300000.jsonl:2: invalid JSON", "invalid-300000.jsonl:201: invalid JSON",
                    "invalid-300000.jsonl: 299800 more warning(s) not listed (300000 in all)", "300000 warning(s)"),
                   {"invalid-300000": 2})),
    Generated("bomb.jsonl.gz", lambda: gzip.compress(b'{"role": "user", "content": "' + b"0" * (3 << 20) + b'"}\n',
                                                     compresslevel=1),
              Case("bomb.jsonl.gz", 1, ("bomb.jsonl.gz: larger than 1 MiB once decompressed (the input limit; set "
                                        "CONTEXT_INSPECTOR_MAX_INPUT_MB to raise it)",)), limit_mb="1"),
    Generated("big-plain.jsonl", lambda: '{"role": "user", "content": "' + "0" * (2 << 20) + '"}\n',
              Case("big-plain.jsonl", 1, ("big-plain.jsonl: larger than 1 MiB (the input limit",)), limit_mb="1"),
    Generated("under-the-limit.jsonl.gz", lambda: gzip.compress(b'{"role": "user", "content": "' + b"0" * 500_000
                                                                + b'"}\n'),
              Case("under-the-limit.jsonl.gz", 0, ("imported 1 thread(s)",), {"under-the-limit": 1}), limit_mb="1"),
    Generated("openai-nulls.jsonl", lambda: 'null\n{"role": "user", "content": "q"}\nnull\n{"role": "assistant", "content": "a"}\n',
              Case("openai-nulls.jsonl", 0, ("openai-nulls.jsonl:1: not a JSON object",
                                             "openai-nulls.jsonl:3: not a JSON object", "2 warning(s)"),
                   {"openai-nulls": 2})),
    Generated("records-with-null.json",
              lambda: json.dumps([{"task_id": 1, "traj": [{"role": "user", "content": "q"}, None,
                                                           {"role": "assistant", "content": "a"}]}]),
              Case("records-with-null.json", 0, ("records-with-null.json: record 0: message 1: not a chat message",),
                   {"records-with-null/1": 2})),
    Generated("relevance-huge-one-of-many.json",
              lambda: native({"id": "ok1", "messages": [{"id": "u1", "role": "user", "content": "a"}]},
                             {"id": "bad", "messages": [{"id": "u1", "role": "user", "content": "a",
                                                         "relevance": 10 ** 400}]},
                             {"id": "ok2", "messages": [{"id": "u1", "role": "user", "content": "a"}]}),
              Case("relevance-huge-one-of-many.json", 0, ("thread bad: message 'u1': relevance", "1 warning(s)"),
                   {"ok1": 1, "bad": 1, "ok2": 1})),
]


@pytest.mark.parametrize("gen", GENERATED, ids=[g.name for g in GENERATED])
def test_generated_input_imports_as_expected(gen: Generated, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    if gen.limit_mb is not None:
        monkeypatch.setenv("CONTEXT_INSPECTOR_MAX_INPUT_MB", gen.limit_mb)
    src = tmp_path / "src"
    src.mkdir()
    data = gen.make()
    (src / gen.name).write_bytes(data if isinstance(data, bytes) else data.encode())
    db = tmp_path / "out.sqlite"
    if gen.case.exit_code == 1:  # a whole-file error: nothing imported, so there is no store to list
        before = snapshot(src)
        result = run("import", str(src / gen.name), "--db", str(db))
        assert snapshot(src) == before
        assert result.exit_code == 1
        [line] = result.stderr.strip().splitlines()
        assert line.startswith(f"error: {src / gen.name}: ") and all(m in line for m in gen.case.messages), line
        return
    result = import_case(src / gen.name, db, gen.case)
    assert len(result.stderr.splitlines()) <= 202  # the cap: 200 warnings and one counting line
    with Store.open(str(db)) as store:
        if gen.stored is not None:
            gen.stored(store)
        [record] = store.import_records()
        assert len(record["skipped"]) <= 201
    for thread_id in gen.case.threads:
        sim = run("simulate", "--thread", thread_id, "--db", str(db), "--timeline", "--json")
        assert sim.exit_code == 0, sim.stderr


# ---- special files never block ---------------------------------------------------------------

def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


SPECIAL = [
    ("fifo-input", lambda d: ["import", str(_fifo(d / "pipe.jsonl"))], 1,
     "error: {d}/pipe.jsonl: is a FIFO, not a regular file; only regular files are read"),
    ("dev-zero-input", lambda d: ["import", "/dev/zero"], 1,
     "error: /dev/zero: is a character device, not a regular file; only regular files are read"),
    ("dev-zero-format", lambda d: ["import", "/dev/zero", "--format", "openai"], 1,
     "error: /dev/zero: is a character device, not a regular file"),
    ("fifo-db", lambda d: ["threads", "--db", str(_fifo(d / "pipe.sqlite"))], 2,
     "context-inspector: error: {d}/pipe.sqlite: is a FIFO, not a regular file"),
    ("fifo-db-import", lambda d: ["import", str(d / "ok.json"), "--db", str(_fifo(d / "pipe.sqlite"))], 2,
     "context-inspector: error: {d}/pipe.sqlite: is a FIFO, not a regular file"),
    ("dev-zero-db", lambda d: ["simulate", "--thread", "t", "--db", "/dev/zero"], 2,
     "context-inspector: error: /dev/zero: is a character device, not a regular file"),
    ("fifo-export-target", lambda d: ["export", "--db", str(d / "store.sqlite"), "-o", str(_fifo(d / "out.json"))], 2,
     "context-inspector: error: {d}/out.json: exists and is not a regular file; refusing to write"),
    ("fifo-export-target-force",
     lambda d: ["export", "--db", str(d / "store.sqlite"), "-o", str(_fifo(d / "out.json")), "--force"], 2,
     "context-inspector: error: {d}/out.json: exists and is not a regular file; refusing to write"),
]


@pytest.mark.parametrize(("name", "args", "code", "message"), SPECIAL, ids=[s[0] for s in SPECIAL])
def test_special_files_are_refused_without_blocking(name, args, code, message, tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copyfile(BAD / "only-system.json", src / "ok.json")
    imported_db(src)
    argv = args(src)
    if argv[0] == "import" and "--db" not in argv:
        argv += ["--db", str(tmp_path / "out" / "s.sqlite")]
    before = snapshot(src)
    result = run(*argv)
    assert result.exit_code == code, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message.format(d=src)), lines
    assert snapshot(src) == before


def test_a_directory_walk_skips_fifos_and_imports_the_rest(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    os.mkfifo(src / "pipe.json")
    shutil.copyfile(BAD / "only-system.json", src / "ok.json")
    result = run("import", str(src), "--db", str(tmp_path / "s.sqlite"))
    assert result.exit_code == 0 and "imported 1 thread(s) from 1 file(s)" in result.stdout, result.stderr


# ---- untrusted text on every CLI line ----------------------------------------------------------

EVIL = "\x1b]0;owned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x9b2J\x00"


@pytest.mark.parametrize("where", ["file-name", "thread-id-arg", "db-path", "set-key", "title-in-table", "probe-text",
                                   "loss-thread-id"])
def test_no_cli_line_carries_a_raw_terminal_escape(where: str, tmp_path: Path):
    db = imported_db(tmp_path)
    evil = EVIL.replace("\x00", "")  # a path cannot hold NUL
    if where == "file-name":
        source = tmp_path / f"chat{evil}.jsonl"
        source.write_text('{"role": "user", "content": "q"}\n{oops\n')
        result = run("import", str(source), "--db", str(tmp_path / "other.sqlite"))
        assert result.exit_code == 0 and "invalid JSON" in result.stderr
    elif where == "thread-id-arg":
        result = run("simulate", "--thread", EVIL, "--db", str(db))
        assert result.exit_code == 2 and "no thread" in result.stderr
    elif where == "db-path":
        result = run("threads", "--db", str(tmp_path / f"missing{evil}.sqlite"))
        assert result.exit_code == 2 and "no such database file" in result.stderr
    elif where == "probe-text":
        result = run("probe", "--thread", "neg", "--db", str(db), evil + "b")
        assert result.exit_code == 0 and "\u241b" in result.stdout, result.stdout  # ESC shown as its picture
    elif where == "loss-thread-id":
        shutil.copyfile(BAD / "escapes-native.json", tmp_path / "esc.json")
        run("import", str(tmp_path / "esc.json"), "--db", str(tmp_path / "esc.sqlite"))
        result = run("loss", "--all", "--db", str(tmp_path / "esc.sqlite"))
        assert result.exit_code == 0, result.stderr
        as_json = run("loss", "--all", "--db", str(tmp_path / "esc.sqlite"), "--json")
        assert as_json.exit_code == 0 and not any(c in as_json.stdout for c in RAW_TERMINAL)
        assert json.loads(as_json.stdout)["threads"] == ["evil\x1b]0;owned\x07\x1b[2J"]  # the same value
    elif where == "set-key":
        result = run("simulate", "--thread", "neg", "--db", str(db), "--set", f"context.{EVIL}=1")
        assert result.exit_code == 2 and "unknown config key" in result.stderr
    else:
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE ci_threads SET title = ?", (EVIL + "title",))
        conn.close()
        result = run("threads", "--db", str(db))
        assert result.exit_code == 0 and "title" in result.stdout
        as_json = run("threads", "--db", str(db), "--json")
        assert json.loads(as_json.stdout)[0]["title"] == EVIL + "title"  # the same value, escaped as JSON
        assert not any(c in as_json.stdout for c in RAW_TERMINAL), as_json.stdout
        export = run("export", "--db", str(db))
        assert json.loads(export.stdout)["threads"][0]["title"] == EVIL + "title"
        assert not any(c in export.stdout for c in RAW_TERMINAL)
    assert not any(c in result.stdout + result.stderr for c in RAW_TERMINAL), repr(result.stdout + result.stderr)


# ---- configuration values ----------------------------------------------------------------------

TOML_CASES_2 = [
    ("bom.toml", "\ufeff[context]\nwindow = 4321\n".encode(), None),
    ("bom-profile.toml", '\ufeffprofile = "harness"\n'.encode(), None),
    ("deep-arrays.toml", ("x = " + "[" * 3000 + "]" * 3000 + "\n").encode(),
     "config.toml: TOML nested too deeply (tables or arrays inside each other)"),
    ("deep-inline.toml", ("x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n").encode(),
     "config.toml: TOML nested too deeply"),
    ("window-401-digits.toml", ("[context]\nwindow = " + "9" * 401 + "\n").encode(),
     "config.toml: context.window must be at most 9007199254740992: got 999999999999999999999999999999999999999…"
     " (401 characters)"),
    ("window-5000-digits.toml", ("[context]\nwindow = " + "9" * 5000 + "\n").encode(),
     "config.toml: Exceeds the limit (4300 digits) for integer string conversion"),
    ("timeout-1e308.toml", b"[summarization]\ntimeout = 1e308\n",
     "config.toml: summarization.timeout must be at most 86400.0: got 1e+308"),
    ("threshold-401-digits.toml", ("[harness]\npruning_threshold = " + "9" * 401 + "\n").encode(),
     "config.toml: harness.pruning_threshold must be a finite number: got " + "9" * 39 + "… (401 characters)"),
    ("timeout-401-digits.toml", ("[summarization]\ntimeout = " + "9" * 401 + "\n").encode(),
     "config.toml: summarization.timeout must be a finite number: got " + "9" * 39 + "… (401 characters)"),
    ("keep-last-huge.toml", ("[harness]\nkeep_last = 1" + "0" * 30 + "\n").encode(),
     "config.toml: harness.keep_last must be at most 9007199254740992"),
]


@pytest.mark.parametrize(("name", "data", "message"), TOML_CASES_2, ids=[c[0] for c in TOML_CASES_2])
def test_config_files_round_two(name: str, data: bytes, message: str | None, tmp_path: Path, isolated_dirs: Path):
    db = imported_db(tmp_path)
    config = isolated_dirs / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_bytes(data)
    before = snapshot(config.parent)
    result = run("simulate", "--thread", "neg", "--db", str(db), "--json")
    assert snapshot(config.parent) == before
    if message is None:
        assert result.exit_code == 0, result.stderr
        sim = json.loads(result.stdout)
        if name == "bom.toml":
            assert sim["config"]["context.window"] == 4321
        else:
            assert sim["profile"] == "harness"
        return
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"context-inspector: error: {config}: ") and message in line, line


@pytest.mark.parametrize(("setting", "message"), [
    ("context.window=" + "9" * 401, "context.window must be at most 9007199254740992: got '99999999999999999999999"),
    ("summarization.timeout=1e308", "summarization.timeout must be at most 86400.0: got '1e308'"),
    ("summarization.timeout=1e999", "summarization.timeout must be a finite number: got '1e999'"),
    ("context.prune_protect_turns=" + "1" * 401, "context.prune_protect_turns must be at most"),
    ("context.response_reserve=" + "9" * 5000, "context.response_reserve must be an integer: got '99999"),
], ids=["window-401", "timeout-1e308", "timeout-inf", "turns-401", "reserve-5000"])
def test_huge_set_values_name_the_key(setting: str, message: str, tmp_path: Path):
    db = imported_db(tmp_path)
    for profile in ("iris", "harness", "shifting"):
        result = run("simulate", "--thread", "neg", "--db", str(db), "--profile", profile, "--set", setting)
        assert result.exit_code == 2
        [line] = result.stderr.strip().splitlines()
        assert line.startswith("context-inspector: error: ") and message in line and len(line) < 300, line


# ---- URLs: checked before any connection, no part of a password printed ------------------------

BAD_URLS = [
    ("postgresql+psycopg://u:se@cr@t/x@127.0.0.1:1/db", ("se@", "cr@t", "t/x", "cr")),
    ("postgresql://u:p@ss@host/db", ("p@ss", "ss@")),
    ("postgresql+psycopg://u:hunter2@ho st:5432/db", ("hunter2",)),
    ("postgresql+psycopg://u:hunter2@host:notaport/db", ("hunter2",)),
    ("mysql+pymysql://root:a@b@c@localhost/db", ("a@b", "b@c")),
]


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Fails the test if a database engine (and so a connection or a DNS lookup) is ever made."""
    import inspector.store.engine as store_module

    made: list[str] = []

    def refuse(*args, **kwargs):
        made.append(str(args[:1]))
        raise AssertionError("an engine was created for a malformed URL")

    monkeypatch.setattr(store_module, "create_engine", refuse)
    return made


@pytest.mark.parametrize(("url", "secrets"), BAD_URLS, ids=[f"url{i}" for i in range(len(BAD_URLS))])
def test_a_malformed_url_is_refused_before_any_connection(url: str, secrets: tuple[str, ...], no_engine, tmp_path):
    scheme = url.split("://")[0]
    for args in (["threads"], ["simulate", "--thread", "t"], ["import", str(tmp_path / "x.json")]):
        result = run(*args, "--db", url)
        assert result.exit_code == 2, result.stderr
        [line] = result.stderr.strip().splitlines()
        assert line.startswith(f"context-inspector: error: {scheme}://***: ")
        after_scheme = line.split("://", 1)[1]
        assert not any(s in after_scheme for s in secrets), line
        assert "hunter2" not in line
    assert no_engine == []


class SilentServer:
    """A local socket on 127.0.0.1 that accepts connections and never answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
                self.held.append(conn)
            except TimeoutError:
                continue
            except OSError:
                return

    def close(self) -> None:
        self._stop.set()
        self.thread.join(5)
        for c in self.held:
            c.close()
        self.sock.close()


@pytest.fixture
def silent_server() -> Iterator[SilentServer]:
    server = SilentServer()
    yield server
    server.close()


@pytest.mark.parametrize("command", [["threads"], ["simulate", "--thread", "t"], ["import", "{src}"]])
def test_a_server_that_never_answers_is_a_bounded_wait_and_one_line(command, silent_server: SilentServer,
                                                                     tmp_path: Path, monkeypatch):
    monkeypatch.setenv("CONTEXT_INSPECTOR_CONNECT_TIMEOUT", "2")
    shutil.copyfile(BAD / "only-system.json", tmp_path / "ok.json")
    url = f"postgresql+psycopg://ci:hunter2@127.0.0.1:{silent_server.port}/db"
    result = run(*(a.format(src=tmp_path / "ok.json") for a in command), "--db", url)
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"context-inspector: error: postgresql+psycopg://ci:***@127.0.0.1:{silent_server.port}/db:")
    assert "timeout" in line.lower() and "hunter2" not in line, line
    assert silent_server.held, "the client never reached the silent server"


# ---- export never overwrites the database, an import's source or a file it did not write -----------

EXPORT_TARGETS = [
    ("the-db", "store.sqlite", False, "is the database being read"),
    ("the-db-force", "store.sqlite", True, "is the database being read"),
    ("the-wal", "store.sqlite-wal", True, "is the database being read"),
    ("the-journal", "store.sqlite-journal", False, "is the database being read"),
    ("hard-link-to-db-force", "db-link.sqlite", True, "is the database being read"),
    ("symlink-to-db-force", "db-symlink.json", True, "is the database being read"),
    ("import-source", "neg.json", False, "is the file an import read threads from"),
    ("import-source-force", "neg.json", True, "is the file an import read threads from"),
    ("hard-link-to-source-force", "source-link.json", True, "is the file an import read threads from"),
    ("text-file", "notes.txt", False, "exists and is not a context-inspector export; refusing to overwrite it "
                                      "(use --force)"),
    ("text-file-force", "notes.txt", True, None),
    ("json-file", "old.json", False, "exists and is not a context-inspector export"),
    ("transcript-named-json", "session.jsonl", False, "exists and is not a context-inspector export"),
    ("own-export", "earlier-export.json", False, None),
    ("symlink", "link.json", False, "is a symbolic link; refusing to write through it"),
    ("new-file", "new.json", False, None),
    ("a-directory", "adir", False, "is a directory"),
]


@pytest.mark.parametrize(("name", "target", "force", "message"), EXPORT_TARGETS, ids=[t[0] for t in EXPORT_TARGETS])
def test_export_refuses_to_overwrite_what_it_should_not(name, target, force, message, tmp_path: Path):
    db = imported_db(tmp_path)
    (tmp_path / "notes.txt").write_text("my notes\n")
    (tmp_path / "old.json").write_text('{"old": true}\n')
    (tmp_path / "session.jsonl").write_text('{"type": "user", "sessionId": "s"}\n')
    (tmp_path / "earlier-export.json").write_text('{\n  "format": "context-inspector/v1",\n  "threads": []\n}\n')
    (tmp_path / "elsewhere.txt").write_text("the link's target\n")
    (tmp_path / "link.json").symlink_to(tmp_path / "elsewhere.txt")
    os.link(db, tmp_path / "db-link.sqlite")
    (tmp_path / "db-symlink.json").symlink_to(db)
    os.link(tmp_path / "neg.json", tmp_path / "source-link.json")
    (tmp_path / "adir").mkdir()
    before = snapshot(tmp_path)
    db_hash = sha256(db)
    result = run("export", "--db", str(db), "-o", str(tmp_path / target), *(["--force"] if force else []))
    assert sha256(db) == db_hash
    if message is not None:
        assert result.exit_code == 2
        [line] = result.stderr.strip().splitlines()
        assert line.startswith(f"context-inspector: error: {tmp_path / target}: ") and message in line, line
        assert snapshot(tmp_path) == before
        return
    assert result.exit_code == 0, result.stderr
    written = json.loads((tmp_path / target).read_text())
    assert written["format"] == NATIVE and [t["id"] for t in written["threads"]] == ["neg"]
    after = snapshot(tmp_path)
    assert {k: v for k, v in after.items() if k != target} == {k: v for k, v in before.items() if k != target}


def test_export_force_onto_a_symlink_replaces_the_link_not_its_target(tmp_path: Path):
    db = imported_db(tmp_path)
    (tmp_path / "elsewhere.txt").write_text("keep me\n")
    (tmp_path / "link.json").symlink_to(tmp_path / "elsewhere.txt")
    result = run("export", "--db", str(db), "-o", str(tmp_path / "link.json"), "--force")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "elsewhere.txt").read_text() == "keep me\n"
    assert not (tmp_path / "link.json").is_symlink()
    assert json.loads((tmp_path / "link.json").read_text())["format"] == NATIVE
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary file left


# ---- the state database (caches) ---------------------------------------------------------------

@pytest.mark.parametrize(("damage", "sets"), [
    (b"this is not a database at all" * 100, ("summarization.summarizer=anthropic",)),
    (b"SQLite format 3\x00" + b"\xff" * 4000, ("summarization.summarizer=anthropic",)),
    (b"this is not a database at all" * 100, ("context.tokenizer=cl100k_base",)),
], ids=["garbage-anthropic", "bad-header-anthropic", "garbage-cl100k"])
def test_a_corrupt_state_database_never_stops_a_replay(damage: bytes, sets: tuple[str, ...], tmp_path: Path,
                                                       isolated_dirs: Path):
    from inspector import service, state

    db = imported_db(tmp_path)
    state_file = isolated_dirs / "data" / state.STATE_FILE
    state_file.parent.mkdir(parents=True, exist_ok=True)
    state_file.write_bytes(damage)
    state.StateDB._shared.clear()
    state.PROBLEMS.clear()
    service._COUNTERS.clear()
    service._SUMMARIZERS.clear()
    try:
        args = [a for s in sets for a in ("--set", s)]
        result = run("simulate", "--thread", "neg", "--db", str(db), "--profile", "iris", "--json", *args)
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["thread_id"] == "neg"
        if "anthropic" in sets[0]:  # no key here: summaries are not asked for, so the state file is not opened
            assert state_file.read_bytes() == damage
        else:
            assert f"warning: {state_file}: state database unusable (file is not a database); caches kept in " \
                   "memory for this run (delete the file to start afresh)" in result.stderr
            assert state_file.read_bytes() == damage
    finally:
        state.StateDB._shared.clear()
        state.PROBLEMS.clear()
        service._COUNTERS.clear()
        service._SUMMARIZERS.clear()


def test_a_corrupt_state_database_with_the_anthropic_summarizer(tmp_path: Path, isolated_dirs: Path):
    """The summarizer's cache: opening the damaged file falls back to memory, reads and writes work."""
    from inspector import state

    path = isolated_dirs / "data" / "broken.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"garbage" * 1000)
    state.PROBLEMS.clear()
    try:
        db = state.StateDB(path)
        assert db.problem is not None and str(path) in db.problem
        db.put_summary("k", "model", {"summary": "s"})
        assert db.get_summary("k") == {"summary": "s"}
        db.close()
        assert path.read_bytes() == b"garbage" * 1000
    finally:
        state.PROBLEMS.clear()


# ---- long texts are tokenized in chunks, exactly -----------------------------------------------

def _long_text(n_chars: int) -> str:
    line = "The quick brown fox, jumping 12 times; naïve café über 漢字.\n"
    return (line * (n_chars // len(line) + 1))[:n_chars]


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("shape", ["lines", "one-line-of-words", "no-safe-cut"])
def test_long_texts_count_exactly_in_chunks(encoding: str, shape: str):
    from inspector import encodings

    tok = encodings.TiktokenTokenizer(encoding)
    base = {"lines": _long_text(3_000_000), "one-line-of-words": _long_text(3_000_000).replace("\n", " "),
            "no-safe-cut": "x" * 50_000 + "1" * 2_500_000}[shape]
    whole = len(tok.encoding.encode(base, disallowed_special=()))
    spans = encodings.split_points(base)
    assert spans[0][0] == 0 and spans[-1][1] == len(base)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
    if shape == "no-safe-cut":
        assert len(spans) == 1
    else:
        assert len(spans) >= 3
    assert tok.count_many([base]) == [whole]


def test_tokenizing_a_long_text_has_bounded_memory():
    """The extra memory to count a text does not grow with the text (chunks of 1 MiB characters)."""
    from inspector import encodings

    tok = encodings.TiktokenTokenizer("cl100k_base")
    tok.count_many(["warm up"])
    peaks = []
    for size in (2_000_000, 8_000_000):
        text = _long_text(size)
        tracemalloc.start()
        try:
            [count] = tok.count_many([text])
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert count > size // 8
        peaks.append(peak)
        del text
    # Unchunked, an 8 M-character text allocates a Python list of ~2 M ints (>50 MB); chunked, both
    # sizes allocate about one chunk's list.
    assert peaks[1] < 2 * peaks[0] + 5_000_000, peaks


# ---- two imports of one file at once --------------------------------------------------------

def test_two_concurrent_imports_of_one_file_both_succeed(tmp_path: Path):
    lines = [json.dumps({"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"}) for i in range(20_000)]
    source = tmp_path / "chat.jsonl"
    source.write_text("\n".join(lines) + "\n")
    db = tmp_path / "store.sqlite"
    cmd = [sys.executable, "-m", "inspector", "import", str(source), "--db", str(db)]
    procs = [subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert "Traceback" not in err and "UNIQUE" not in err, err
        assert "imported 1 thread(s)" in out
    with Store.open(str(db)) as store:
        assert [t.messages for t in store.list_threads()] == [20_000]
        assert len(store.import_records()) == 2


@pytest.mark.parametrize("wait_for_error", [False, True], ids=["q-at-once", "q-after-the-error"])
async def test_the_tui_quits_with_q_while_a_server_never_answers(wait_for_error: bool, silent_server: SilentServer,
                                                                 tmp_path: Path, monkeypatch):
    from inspector.app import create_app

    monkeypatch.setenv("CONTEXT_INSPECTOR_CONNECT_TIMEOUT", "2")
    url = f"postgresql+psycopg://ci:hunter2@127.0.0.1:{silent_server.port}/db"
    app = create_app(db_url=url, config_file=tmp_path / "config.toml", export_dir=tmp_path, screenshot_dir=tmp_path)
    async with app.run_test() as pilot:
        if wait_for_error:
            for _ in range(600):  # bounded by progress: the connect timeout ends the wait
                if app.main_screen.loading_error:
                    break
                await pilot.pause(0.05)
            message = app.main_screen.loading_error or ""
            assert message.startswith("cannot open the database: postgresql+psycopg://ci:***@127.0.0.1:"), message
            assert "timeout" in message.lower() and "hunter2" not in message
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running
