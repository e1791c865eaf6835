"""Issue 26: `import` given a database file (an Iris database, opencode.db, a LangGraph checkpointer, a
context-inspector store) says in one line what it is and what to run instead (`--db PATH`, read in
place), and the file is left byte-identical with nothing written beside it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from inspector.cli import main
from tests.cli.test_bad_databases import IRIS_SCHEMA
from tests.data.test_import_opencode import _opencode_db, export
from tests.data.test_langgraph_db import _sqlite_saver_db


def _iris(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(IRIS_SCHEMA.format(thread_type="INTEGER", tokens_type="INTEGER"))
    conn.execute("INSERT INTO conversations VALUES (1, 1, 'user', 'hi', NULL, NULL, '2026-01-01')")
    conn.commit()
    conn.close()


def _store(path: Path) -> None:
    src = path.with_name("t.json")
    src.write_text(json.dumps({"format": "context-inspector/v1", "threads": [
        {"id": "t1", "messages": [{"id": "m1", "role": "user", "content": "hi"}]}]}))
    assert CliRunner().invoke(main, ["import", str(src), "--db", str(path)]).exit_code == 0
    src.unlink()


def _unknown(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()


CASES = [
    ("app.sqlite", _iris, "an Iris database"),
    ("opencode.db", lambda p: _opencode_db(p, export()), "an opencode database"),
    ("checkpoints.sqlite", _sqlite_saver_db, "a LangGraph checkpointer database"),
    ("mine.sqlite", _store, "a context-inspector database"),
]


@pytest.mark.parametrize(("name", "build", "what"), CASES, ids=[c[0] for c in CASES])
def test_a_database_file_is_named_with_the_command_that_opens_it(tmp_path: Path, name, build, what):
    folder = tmp_path / "in"
    folder.mkdir()
    db = folder / name
    build(db)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    out = CliRunner().invoke(main, ["import", str(db), "--db", str(tmp_path / "target.sqlite")])
    assert out.exit_code == 1
    errors = [line for line in out.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [f"error: {db}: {what} (SQLite), not a transcript: open it in place with "
                      f"`context-inspector --db {db}` (or `context-inspector threads --db {db}`)"]
    assert "cannot detect" not in out.output and "unknown transcript format" not in out.output
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # nothing written in or beside it
    listed = CliRunner().invoke(main, ["threads", "--db", str(db), "--json"])  # and the command it names works
    assert listed.exit_code == 0 and json.loads(listed.stdout), listed.output


def test_a_sqlite_file_of_no_known_schema_says_so(tmp_path: Path):
    db = tmp_path / "notes.db"
    _unknown(db)
    out = CliRunner().invoke(main, ["import", str(db), "--db", str(tmp_path / "target.sqlite")])
    assert out.exit_code == 1
    [line] = [x for x in out.stderr.splitlines() if x.startswith("error: ")]
    assert line.startswith(f"error: {db}: a SQLite database, not a transcript, and not one this tool reads (")
