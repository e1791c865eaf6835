"""Bad databases, round two (issue 15), table-driven: WAL-mode and journaled SQLite files viewed
without creating or changing anything beside them (and on read-only media), damaged cells of the
store's own tables and of an Iris-style database repaired with a warning naming row and column,
and PostgreSQL column limits (with CONTEXT_INSPECTOR_TEST_PG, as tests/pg.py says).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from inspector.model import Message, Request, Role, Thread
from inspector.store import Store
from tests.cli.test_bad_input_corpus import BAD_DIR, RAW_TERMINAL, imported_db, run, snapshot
from tests.paths import ROOT
from tests.pg import backends, fresh_pg_database

WRITER = textwrap.dedent(
    """
    import os, sys
    from inspector.recording import Recorder

    rec = Recorder(sys.argv[1])
    with rec.store.engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_autocheckpoint=0")
    thread = rec.resume_thread("neg")
    thread.append("user", "written by the writer", message_id="w1")
    if sys.argv[2] == "kill":
        os._exit(9)
    print("ready", flush=True)
    sys.stdin.readline()
    """
)

HOT_JOURNAL = textwrap.dedent(
    """
    import os, sqlite3, sys

    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("PRAGMA cache_size=1")
    conn.execute("BEGIN IMMEDIATE")
    for i in range(300):
        conn.execute("INSERT INTO ci_messages (thread_id, seq, id, role, kind, content, pinned, required, meta) "
                     "VALUES ('neg', ?, ?, 'user', 'message', ?, 0, 0, '{}')", (100 + i, f"x{i}", "y" * 3000))
    os._exit(9)  # killed in the middle of the transaction: the journal is hot
    """
)


def python(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, *args], cwd=ROOT, text=True, **kwargs)


def to_wal(db: Path) -> None:
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    conn.close()
    assert sorted(p.name for p in db.parent.iterdir() if p.name.startswith(db.name)) == [db.name]


def killed_writer(db: Path) -> None:
    to_wal(db)
    script = db.parent.parent / "writer.py"
    script.write_text(WRITER)
    proc = python(str(script), f"sqlite:///{db}", "kill")
    assert proc.wait(timeout=120) == 9
    assert (db.parent / (db.name + "-wal")).stat().st_size > 0


def hot_journal(db: Path) -> None:
    script = db.parent.parent / "hot.py"
    script.write_text(HOT_JOURNAL)
    proc = python(str(script), str(db))
    assert proc.wait(timeout=120) == 9
    journal = db.parent / (db.name + "-journal")
    assert journal.read_bytes()[:8] == bytes.fromhex("d9d505f920a163d7"), "no hot journal was left"


@dataclass(frozen=True)
class View:
    name: str
    prepare: str
    """How the file was left: `wal-clean`, `wal-killed`, `hot-journal`, `plain`, `foreign-wal`."""
    access: str
    messages: int | None
    """Messages of thread `neg` the view must show (None: not a store of ours)."""


VIEWS = [
    View("plain-store", "plain", "read-only", 2),
    View("wal-clean-store", "wal-clean", "immutable", 2),
    View("wal-killed-writer", "wal-killed", "snapshot", 3),
    View("hot-journal", "hot-journal", "snapshot", 2),
    View("foreign-wal-database", "foreign-wal", "immutable", None),
]

NOTES = {
    "immutable": "WAL-mode database no process has open: opened immutable (nothing written beside it)",
    "snapshot-wal": "WAL-mode database in use or left by a killed writer: reading a private snapshot copy "
                    "(nothing written beside it)",
    "snapshot-journal": "a hot journal (store.sqlite-journal) from an interrupted write is beside it: reading a "
                        "private snapshot rolled back to the last commit; to recover the file itself, run one "
                        "write-mode command on it",
}


def prepare(view: View, tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    db = imported_db(folder)
    (folder / "neg.json").unlink()
    if view.prepare == "wal-clean":
        to_wal(db)
    elif view.prepare == "wal-killed":
        killed_writer(db)
    elif view.prepare == "hot-journal":
        hot_journal(db)
    elif view.prepare == "foreign-wal":
        db.unlink()
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE t (x)")
        conn.commit()
        conn.close()
    return db


def note_for(view: View) -> str | None:
    if view.access == "immutable":
        return NOTES["immutable"]
    if view.access == "snapshot":
        return NOTES["snapshot-journal" if view.prepare == "hot-journal" else "snapshot-wal"]
    return None


@pytest.mark.parametrize("view", VIEWS, ids=[v.name for v in VIEWS])
@pytest.mark.parametrize("command", ["threads", "simulate", "export"])
def test_viewing_never_creates_or_changes_anything_beside_the_file(view: View, command: str, tmp_path: Path):
    db = prepare(view, tmp_path)
    before = snapshot(db.parent)
    args = {"threads": ["threads", "--json"], "simulate": ["simulate", "--thread", "neg", "--json"],
            "export": ["export", "neg"]}[command]
    result = run(*args, "--db", str(db))
    assert snapshot(db.parent) == before, "a file beside the database was created or changed"
    note = note_for(view)
    lines = result.stderr.strip().splitlines()
    if note is not None and view.messages is not None:  # a store that fails to open prints its error only
        assert lines[0] == f"note: {db}: {note}" or lines[0].startswith(f"note: {db}: {note}"), lines
    if view.messages is None:
        assert result.exit_code == 2 and lines[-1].endswith("not a context-inspector database (no ci_schema_version "
                                                            "table)"), lines
        return
    assert result.exit_code == 0, result.stderr
    if command == "threads":
        assert [t["messages"] for t in json.loads(result.stdout)] == [view.messages]
    elif command == "simulate":
        assert json.loads(result.stdout)["thread_id"] == "neg"
    else:
        assert len(json.loads(result.stdout)["threads"][0]["messages"]) == view.messages
    with Store.open(str(db)) as store:
        assert store.access == view.access


@pytest.mark.parametrize("view", [v for v in VIEWS if v.messages is not None], ids=lambda v: v.name)
def test_a_store_on_read_only_media_still_opens(view: View, tmp_path: Path):
    """The directory is remounted read-only in a private mount namespace (util-linux `unshare`)."""
    db = prepare(view, tmp_path)
    before = snapshot(db.parent)
    folder = str(db.parent)
    shell = (f"mount --bind -o ro {folder} {folder} && touch {folder}/probe 2>/dev/null && echo writable; "
             f"exec {sys.executable} -m inspector threads --json --db {db}")
    proc = subprocess.run(["unshare", "-m", "sh", "-c", shell], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "writable" not in proc.stdout, "the mount is not read-only"
    assert proc.returncode == 0, proc.stderr
    assert [t["messages"] for t in json.loads(proc.stdout)] == [view.messages]
    assert "Traceback" not in proc.stderr
    assert snapshot(db.parent) == before


def test_a_live_writer_is_read_through_a_snapshot_that_follows_it(tmp_path: Path):
    folder = tmp_path / "data"
    folder.mkdir()
    db = imported_db(folder)
    to_wal(db)
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    writer = python(str(script), f"sqlite:///{db}", "wait", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert writer.stdout.readline().strip() == "ready"
        before = snapshot(folder)
        with Store.open(str(db)) as store:
            assert store.access == "snapshot"
            version = store.data_version("neg")
            assert [m.id for m in store.load_thread("neg").messages] == ["u1", "a1", "w1"]
            # The writer appends again: the next data_version re-reads a fresh snapshot.
            probe = sqlite3.connect(db)
            probe.execute("INSERT INTO ci_messages (thread_id, seq, id, role, kind, content, pinned, required, meta) "
                          "VALUES ('neg', 9, 'w2', 'user', 'message', 'later', 0, 0, '{}')")
            probe.commit()
            probe.close()
            before = snapshot(folder)
            assert store.data_version("neg") != version
            assert [m.id for m in store.load_thread("neg").messages] == ["u1", "a1", "w1", "w2"]
        assert snapshot(folder) == before
    finally:
        writer.communicate("\n", timeout=120)


# ---- damaged cells of the store's own tables ---------------------------------------------------

CELLS = [
    ("thread-meta-list", "UPDATE ci_threads SET meta = '[1, 2]'",
     "ci_threads row (id neg) column meta: a JSON list, not an object; kept as meta.stored_meta"),
    ("thread-meta-not-json", "UPDATE ci_threads SET meta = '{broken'",
     "ci_threads row (id neg) column meta: text that is not JSON; kept as meta.stored_meta"),
    ("message-meta-list", "UPDATE ci_messages SET meta = '[\"x\"]' WHERE id = 'a1'",
     "ci_messages row (thread neg, seq 1) column meta: a JSON list, not an object; kept as meta.stored_meta"),
    ("message-meta-not-json", "UPDATE ci_messages SET meta = '{broken' WHERE id = 'a1'",
     "ci_messages row (thread neg, seq 1) column meta: text that is not JSON; kept as meta.stored_meta"),
    ("prompt-tokens-text", "UPDATE ci_requests SET prompt_tokens = 'lots'",
     "ci_requests row (thread neg, seq 0) column prompt_tokens: 'lots' is not an integer; value dropped"),
    ("prompt-tokens-real", "UPDATE ci_requests SET prompt_tokens = 12.5",
     "ci_requests row (thread neg, seq 0) column prompt_tokens: 12.5 is not an integer; value dropped"),
    ("prompt-tokens-digits-blob", "UPDATE ci_requests SET prompt_tokens = X'313233'",
     "ci_requests row (thread neg, seq 0) column prompt_tokens: a BLOB '123', not an integer; read as 123"),
    ("title-blob", "UPDATE ci_threads SET title = X'CAFE41'",
     "ci_threads row (id neg) column title: a BLOB, not text; decoded as UTF-8"),
    ("content-blob", "UPDATE ci_messages SET content = X'68690A' WHERE id = 'u1'",
     "ci_messages row (thread neg, seq 0) column content: a BLOB, not text; decoded as UTF-8"),
    ("system-prompt-blob", "UPDATE ci_threads SET system_prompt = X'7379730A'",
     "ci_threads row (id neg) column system_prompt: a BLOB, not text; decoded as UTF-8"),
    ("relevance-text", "UPDATE ci_messages SET relevance = 'high' WHERE id = 'a1'",
     "ci_messages row (thread neg, seq 1) column relevance: 'high' is not a finite number; value dropped"),
    ("pinned-text", "UPDATE ci_messages SET pinned = 'yes' WHERE id = 'u1'",
     "ci_messages row (thread neg, seq 0) column pinned: 'yes' is not 0 or 1; read as true"),
    ("window-text", "UPDATE ci_threads SET window = 'big'",
     "ci_threads row (id neg) column window: 'big' is not an integer; value dropped"),
    ("window-huge-real", "UPDATE ci_threads SET window = 1e30",
     "ci_threads row (id neg) column window: 1000000000000000019884624838656 is not a token count; value dropped"),
    ("prompt-tokens-negative", "UPDATE ci_requests SET prompt_tokens = -7",
     "ci_requests row (thread neg, seq 0) column prompt_tokens: -7 is not a token count; value dropped"),
    ("relevance-infinite", "UPDATE ci_messages SET relevance = 9e999 WHERE id = 'a1'",
     "ci_messages row (thread neg, seq 1) column relevance: inf is not a finite number; value dropped"),
    ("tools-object", "UPDATE ci_threads SET tools = '{\"name\": \"x\"}'",
     "ci_threads row (id neg) column tools: a JSON object, not a list; value dropped"),
    ("tools-bad-entry", "UPDATE ci_threads SET tools = '[{\"description\": \"no name\"}]'",
     "ci_threads row (id neg) column tools: entry 0: a tool needs a string 'name'; entry dropped"),
    ("name-blob", "UPDATE ci_messages SET name = X'6E616D65' WHERE id = 'u1'",
     "ci_messages row (thread neg, seq 0) column name: a BLOB, not text; decoded as UTF-8"),
    ("meta-blob-json", "UPDATE ci_messages SET meta = CAST('{\"k\": 1}' AS BLOB) WHERE id = 'u1'", None),
]


@pytest.mark.parametrize(("name", "sql", "warning"), CELLS, ids=[c[0] for c in CELLS])
def test_a_damaged_cell_is_repaired_with_a_warning_naming_row_and_column(name, sql, warning, tmp_path: Path):
    db = imported_db(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute(sql)
    conn.commit()
    conn.close()
    before = snapshot(tmp_path)
    for profile in ("iris", "harness", "shifting"):
        result = run("simulate", "--thread", "neg", "--db", str(db), "--profile", profile, "--json")
        assert result.exit_code == 0, result.stderr
        if warning is None:  # JSON in a BLOB is still JSON: read, nothing to say
            assert result.stderr == "", result.stderr
        else:
            assert f"warning: sqlite:///{db}: {warning}" in result.stderr.splitlines(), result.stderr
        assert json.loads(result.stdout)["thread_id"] == "neg"
    listing = run("threads", "--db", str(db), "--json")
    assert listing.exit_code == 0 and [t["messages"] for t in json.loads(listing.stdout)] == [2]
    if name == "thread-meta-not-json":
        assert listing.stderr == (f"warning: sqlite:///{db}: ci_threads column meta: a row holds text that is not "
                                  "JSON; import gaps not listed\n")
    export = run("export", "--db", str(db))
    assert export.exit_code == 0, export.stderr
    messages = json.loads(export.stdout)["threads"][0]["messages"]
    assert [m["id"] for m in messages] == ["u1", "a1"]  # nothing lost
    if name == "content-blob":
        assert messages[0]["content"] == "hi\n"
    if name == "meta-blob-json":
        assert messages[0]["meta"] == {"k": 1}
    if name == "message-meta-list":
        assert messages[1]["meta"] == {"stored_meta": ["x"]}
    assert not any(c in export.stdout + export.stderr for c in RAW_TERMINAL)
    assert snapshot(tmp_path) == before


def test_a_summary_with_damaged_markers_and_lists_loads(tmp_path: Path):
    db = imported_db(tmp_path)
    shutil.copyfile(BAD_DIR / "summary-dangling.json", tmp_path / "s.json")
    assert run("import", str(tmp_path / "s.json"), "--db", str(db)).exit_code == 0
    conn = sqlite3.connect(db)
    conn.execute("UPDATE ci_summaries SET emotional_markers = '[{\"moment\": \"m\", \"intensity\": \"x\"}, 7]', "
                  "accomplishments = '\"not a list\"'")
    conn.commit()
    conn.close()
    result = run("simulate", "--thread", "sdangle", "--db", str(db), "--json")
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    prefix = f"warning: sqlite:///{db}: ci_summaries row (thread sdangle, seq 0) column"
    assert f"{prefix} accomplishments: a JSON string, not a list; value dropped" in lines
    assert f"{prefix} emotional_markers: entry 0: intensity 'x' is not a finite number; set to 0" in lines
    assert f"{prefix} emotional_markers: entry 1 is not an object; entry dropped" in lines


# ---- Iris-style databases: one bad cell never makes a thread unloadable ------------------------

IRIS_SCHEMA = """
CREATE TABLE threads (id INTEGER PRIMARY KEY, title TEXT);
CREATE TABLE conversations (id INTEGER PRIMARY KEY, thread_id {thread_type}, role TEXT, content TEXT,
    prompt_tokens {tokens_type}, relevance REAL, created_at TEXT);
CREATE TABLE conversation_summaries (id INTEGER PRIMARY KEY, thread_id {thread_type}, summary TEXT,
    first_conversation_id INTEGER, last_conversation_id INTEGER, emotional_markers TEXT, created_at TEXT);
INSERT INTO threads VALUES (1, 'Iris thread');
"""

IRIS_CASES = [
    ("tokens-lots", "INTEGER", "INTEGER", "UPDATE conversations SET prompt_tokens = 'lots' WHERE id = 2",
     "conversations row 2 column prompt_tokens: 'lots' is not a number; value dropped", 3),
    ("tokens-text-digits", "INTEGER", "INTEGER", "UPDATE conversations SET prompt_tokens = '77' WHERE id = 2",
     None, 3),
    ("relevance-text", "INTEGER", "INTEGER", "UPDATE conversations SET relevance = 'very' WHERE id = 1",
     "conversations row 1 column relevance: 'very' is not a number; value dropped", 3),
    ("marker-intensity", "INTEGER", "INTEGER",
     "UPDATE conversation_summaries SET emotional_markers = '[{\"moment\": \"m\", \"intensity\": \"x\"}]'",
     "conversation_summaries row 1 column emotional_markers: 'x' is not a number; value dropped", 3),
    ("untyped-thread-id", "", "INTEGER", None, None, 3),
    ("untyped-thread-id-text", "", "INTEGER", "UPDATE conversations SET thread_id = '1' WHERE id = 3", None, 3),
    ("untyped-tokens-blob", "INTEGER", "", "UPDATE conversations SET prompt_tokens = X'00FF' WHERE id = 2",
     "conversations row 2 column prompt_tokens:", 3),
    # Round three (issue 24): a role Iris does not have is kept (its text counted) and said, never silently `user`.
    ("role-unknown", "INTEGER", "INTEGER", "UPDATE conversations SET role = 'wizard' WHERE id = 3",
     "conversations row 3 column role: 'wizard' is not a role (user, assistant, system, tool, developer); read as "
     "user", 3),
    ("role-null", "INTEGER", "INTEGER", "UPDATE conversations SET role = NULL WHERE id = 1",
     "conversations row 1 column role: NULL is not a role (user, assistant, system, tool, developer); read as user",
     3),
]


def build_iris(path: Path, thread_type: str, tokens_type: str) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(IRIS_SCHEMA.format(thread_type=thread_type, tokens_type=tokens_type))
    conn.executemany("INSERT INTO conversations VALUES (?, 1, ?, ?, ?, NULL, ?)", [
        (1, "user", "hello", None, "2026-01-01 00:00:01"),
        (2, "assistant", "hi there", 120, "2026-01-01 00:00:02"),
        (3, "user", "thanks", None, "2026-01-01 00:00:03"),
    ])
    conn.execute("INSERT INTO conversation_summaries VALUES (1, 1, 'greeting', 1, 2, NULL, '2026-01-01 00:00:04')")
    conn.commit()
    conn.close()


@pytest.mark.parametrize(("name", "thread_type", "tokens_type", "sql", "warning", "messages"), IRIS_CASES,
                         ids=[c[0] for c in IRIS_CASES])
def test_an_iris_database_with_a_bad_cell_still_loads(name, thread_type, tokens_type, sql, warning, messages,
                                                     tmp_path: Path):
    db = tmp_path / "iris.sqlite"
    build_iris(db, thread_type, tokens_type)
    if sql:
        conn = sqlite3.connect(db)
        conn.execute(sql)
        conn.commit()
        conn.close()
    before = snapshot(tmp_path)
    listing = run("threads", "--db", str(db), "--json")
    assert listing.exit_code == 0, listing.stderr
    assert [t["messages"] for t in json.loads(listing.stdout)] == [messages]
    with Store.open(str(db)) as store:
        thread = store.load_thread("1")
    assert len(thread.messages) == messages and len(thread.summaries) == 1
    tokens = [r.prompt_tokens for r in thread.requests]
    if name == "tokens-text-digits":
        assert tokens == [77]
    elif name in ("tokens-lots", "untyped-tokens-blob"):
        assert tokens == [None]
    else:
        assert tokens == [120]
    result = run("simulate", "--thread", "1", "--db", str(db), "--json")
    assert result.exit_code == 0, result.stderr
    if warning is not None:
        assert any(line.startswith(f"warning: sqlite:///{db}: thread 1: {warning}") for line in
                   result.stderr.splitlines()), result.stderr
    assert snapshot(tmp_path) == before


# ---- PostgreSQL: column types hold what the sanitizer allows; one bad thread never takes the others down

@pytest.fixture(params=backends())
def any_db(request: pytest.FixtureRequest, tmp_path: Path):
    if request.param == "sqlite":
        yield str(tmp_path / "store.sqlite")
    else:
        with fresh_pg_database() as url:
            yield url


def test_values_past_postgresql_integer_and_varchar_limits_import(any_db: str, tmp_path: Path):
    shutil.copyfile(BAD_DIR / "column-limits.json", tmp_path / "limits.json")
    result = run("import", str(tmp_path / "limits.json"), "--db", any_db)
    assert result.exit_code == 0, result.stderr
    assert "imported 6 thread(s) from 1 file(s); 0 warning(s)" in result.stdout
    with Store.open(any_db) as store:
        assert store.load_thread("bigtokens").requests[0].prompt_tokens == 3_000_000_000
        assert store.load_thread("bigtokens").window == 5_000_000_000
        assert store.load_thread("longname").messages[1].tool_calls[0].name == "t" * 300
        assert store.load_thread("longdate").messages[0].created_at.endswith("000Z")
        assert store.load_thread("m" * 300).messages[0].id == "x" * 300


def test_one_thread_the_database_refuses_never_takes_the_others_down(any_db: str):
    good = Thread(id="good", messages=(Message(id="u1", role=Role.USER, content="a"),))
    bad = Thread(id="bad", messages=(Message(id="u1", role=Role.USER, content="a"),),
                 requests=(Request(id="r1", after_message_id="u1", prompt_tokens=2**70),))
    also = Thread(id="also", messages=(Message(id="u1", role=Role.USER, content="b"),))
    with Store.open(any_db, create=True) as store:
        flags = store.save_threads([good, bad, also], now="2026-01-01T00:00:00Z")
        assert flags == [False, None, False]
        [error] = store.save_errors
        assert error.startswith("thread bad: cannot be saved (") and error.endswith("; thread skipped")
        assert sorted(store.thread_ids()) == ["also", "good"]


def test_an_import_reports_the_thread_the_database_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Through the CLI: the refused thread is one error line naming the file and thread; the rest imports."""
    from inspector import thread_repair as _sanitize

    monkeypatch.setattr(_sanitize, "MAX_TOKENS", 2**80)  # let a value through that SQLite cannot hold
    source = tmp_path / "two.json"
    source.write_text(json.dumps({"format": "context-inspector/v1", "threads": [
        {"id": "ok", "messages": [{"id": "u1", "role": "user", "content": "a"}]},
        {"id": "huge", "messages": [{"id": "u1", "role": "user", "content": "a"}],
         "requests": [{"id": "r1", "after_message_id": "u1", "prompt_tokens": 2**70}]}]}))
    db = tmp_path / "s.sqlite"
    result = run("import", str(source), "--db", str(db))
    assert result.exit_code == 0
    assert "imported 1 thread(s) from 1 file(s); 0 warning(s); 1 thread(s) not saved" in result.stdout
    [line] = [x for x in result.stderr.splitlines() if x.startswith("error: ")]
    assert line.startswith(f"error: {source}: thread huge: cannot be saved (") and "thread skipped" in line
    listing = run("threads", "--db", str(db), "--json")
    assert [t["id"] for t in json.loads(listing.stdout)] == ["ok"]



async def test_the_tui_says_what_it_repaired_while_reading(tmp_path: Path):
    from inspector.app import create_app

    db = imported_db(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE ci_threads SET meta = '[1, 2]'")
    conn.commit()
    conn.close()
    to_wal(db)
    before = snapshot(tmp_path)
    app = create_app(db_url=str(db), config_file=tmp_path / "config.toml", export_dir=tmp_path,
                     screenshot_dir=tmp_path)
    notes: list[str] = []
    original = app.notify

    def keep(message: str, **kwargs) -> None:
        notes.append(message)
        original(message, **kwargs)

    app.notify = keep  # type: ignore[method-assign]
    async with app.run_test() as pilot:
        for _ in range(400):  # bounded by progress: the thread loads
            if app.main_screen.view is not None:
                break
            await pilot.pause(0.05)
        assert app.main_screen.view is not None and app.main_screen.view.thread.meta == {"stored_meta": [1, 2]}
        await pilot.press("q")
    assert f"{db}: {NOTES['immutable']}" in notes
    assert any(n.startswith(f"repaired while reading: sqlite:///{db}: ci_threads row (id neg) column meta: a JSON "
                            "list, not an object") for n in notes), notes
    assert snapshot(tmp_path) == before


def test_a_hot_journal_is_recovered_the_way_the_note_says(tmp_path: Path):
    """The note names a write-mode command; after it the file is whole and opens read-only as before."""
    db = prepare(View("hot", "hot-journal", "snapshot", 2), tmp_path)
    journal = db.parent / (db.name + "-journal")
    viewed = run("threads", "--db", str(db), "--json")
    assert "run one write-mode command on it (e.g. `context-inspector import`" in viewed.stderr
    shutil.copyfile(BAD_DIR / "only-system.json", tmp_path / "sys.json")
    result = run("import", str(tmp_path / "sys.json"), "--db", str(db))
    assert result.exit_code == 0, result.stderr
    assert not journal.exists() or journal.stat().st_size == 0
    after = run("threads", "--db", str(db), "--json")
    assert after.exit_code == 0 and after.stderr == ""
    assert {t["id"]: t["messages"] for t in json.loads(after.stdout)} == {"neg": 2, "sys": 2}
    with Store.open(str(db)) as store:
        assert store.access == "read-only"



def _pg_type(url: str, table: str, column: str) -> str:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT data_type FROM information_schema.columns WHERE table_name = :t "
                                     "AND column_name = :c"), {"t": table, "c": column}).scalar()
    finally:
        engine.dispose()


def test_an_older_store_is_widened_by_an_import_never_by_a_view(any_db: str, tmp_path: Path):
    """PostgreSQL: a store made with VARCHAR(255) / VARCHAR(40) / INTEGER columns (before issue 15) takes
    the values of column-limits.json after one import widens it; viewing leaves it as it is. (SQLite's
    columns hold any value: there the import simply works.)"""
    with Store.open(any_db, create=True):
        pass
    if any_db.startswith("postgresql"):
        from sqlalchemy import create_engine, text

        engine = create_engine(any_db)
        with engine.begin() as conn:
            conn.execute(text("ALTER TABLE ci_tool_calls ALTER COLUMN name TYPE VARCHAR(255)"))
            conn.execute(text("ALTER TABLE ci_messages ALTER COLUMN created_at TYPE VARCHAR(40)"))
            conn.execute(text("ALTER TABLE ci_requests ALTER COLUMN prompt_tokens TYPE INTEGER"))
            conn.execute(text('ALTER TABLE ci_threads ALTER COLUMN "window" TYPE INTEGER'))
        engine.dispose()
        assert run("threads", "--db", any_db, "--json").stdout.strip() == "[]"  # viewed: nothing altered
        assert _pg_type(any_db, "ci_requests", "prompt_tokens") == "integer"
    shutil.copyfile(BAD_DIR / "column-limits.json", tmp_path / "limits.json")
    result = run("import", str(tmp_path / "limits.json"), "--db", any_db)
    assert result.exit_code == 0, result.stderr
    assert "imported 6 thread(s) from 1 file(s); 0 warning(s)" in result.stdout
    with Store.open(any_db) as store:
        assert store.load_thread("bigtokens").requests[0].prompt_tokens == 3_000_000_000
        assert store.load_thread("longname").messages[1].tool_calls[0].name == "t" * 300
    if any_db.startswith("postgresql"):
        assert _pg_type(any_db, "ci_requests", "prompt_tokens") == "bigint"
        assert _pg_type(any_db, "ci_tool_calls", "name") == "text"
