"""import -> threads -> simulate through the CLI on every backend (`db_url`: SQLite, plus PostgreSQL
where tests/pg.py says so), and passwords in database URLs never shown.

Each backend's simulation JSON is compared with the replay of the parsed file itself (no
database), so both backends give the same JSON as each other and as the file.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy.engine import make_url

from inspector.cli import main
from inspector.importers import parse_text
from inspector.service import load_config, run_simulation
from tests.cli.test_bad_input_corpus import REPAIRS_TEXT
from tests.paths import BAD
from tests.store_fixtures import db_url, real_path, real_text  # noqa: F401 (fixture)

BAD_DIR = BAD
SECRET = "S3cr3t-pw"


def run(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"uncaught {result.exception!r}") from result.exception
    return result


def reference_simulation(name: str, thread_id: str, profile: str) -> dict:
    """The simulation JSON of the thread parsed straight from the file (no database involved)."""
    _, parsed = parse_text(real_text(name), name)
    thread = next(t for t in parsed.threads if t.id == thread_id)
    sim = run_simulation(thread, load_config(profile, {}, thread=thread), baseline=True)
    return json.loads(json.dumps(sim.to_json()))


@pytest.mark.parametrize(("name", "profile"), [
    ("claude-code-session-with-compaction.jsonl", "iris"),
    ("codex-rollout.jsonl", "harness"),
    ("swe-agent-trajectory.traj", "shifting"),
])
def test_import_threads_simulate_gives_the_files_own_simulation(db_url, name: str, profile: str):  # noqa: F811
    imported = run("import", str(real_path(name)), "--db", db_url)
    assert imported.exit_code == 0, imported.stderr
    assert "imported 1 thread(s) from 1 file(s); 0 warning(s)" in imported.stdout
    listing = run("threads", "--db", db_url, "--json")
    assert listing.exit_code == 0, listing.stderr
    [info] = json.loads(listing.stdout)
    _, parsed = parse_text(real_text(name), name)
    [thread] = parsed.threads
    assert (info["id"], info["messages"], info["requests"], info["summaries"]) == (
        thread.id, len(thread.messages), len(thread.requests), len(thread.summaries))
    simulated = run("simulate", "--thread", thread.id, "--db", db_url, "--profile", profile, "--json")
    assert simulated.exit_code == 0, simulated.stderr
    assert json.loads(simulated.stdout) == reference_simulation(name, thread.id, profile)


def test_the_bad_corpus_imports_the_same_on_every_backend(db_url, tmp_path: Path):  # noqa: F811
    """NUL characters, invalid UTF-8 and the rest: the same threads whatever the database."""
    files = sorted(p for p in BAD_DIR.iterdir() if p.suffix in (".json", ".jsonl"))
    for source in files:
        shutil.copyfile(source, tmp_path / source.name)
    (tmp_path / "repairs.json").write_text(REPAIRS_TEXT)  # lone surrogates, NaN and Infinity too
    files.append(tmp_path / "repairs.json")
    run("import", *(str(tmp_path / p.name) for p in files), "--db", db_url)
    reference = tmp_path / "reference.sqlite"
    run("import", *(str(tmp_path / p.name) for p in files), "--db", str(reference))
    listing = json.loads(run("threads", "--db", db_url, "--json").stdout)
    assert listing == json.loads(run("threads", "--db", str(reference), "--json").stdout)
    # 21 without issue 15 round two; its nine files add 14 (column-limits.json holds 6); issue 24's twelve add 13
    assert len(listing) == 48
    sessions = [p for p in files if p.suffix == ".jsonl" and '"sessionId": "bad-session"' in p.read_text("utf-8", "replace")]
    assert len(sessions) >= 8  # files of one Claude Code session id: one thread each, never one for all
    assert sum(1 for i in listing if i["id"].split("~")[0] == "bad-session") == len(sessions)
    for info in listing:
        here = run("simulate", "--thread", info["id"], "--db", db_url, "--json")
        there = run("simulate", "--thread", info["id"], "--db", str(reference), "--json")
        assert here.exit_code == 0 and json.loads(here.stdout) == json.loads(there.stdout)


def with_password(url: str) -> str:
    return make_url(url).set(password=SECRET).render_as_string(hide_password=False)


def test_a_password_in_the_url_is_never_shown(db_url, tmp_path: Path):  # noqa: F811
    outputs: list[str] = []

    def show(*args: str) -> Result:
        result = run(*args)
        outputs.append(result.stdout + result.stderr)
        return result

    if make_url(db_url).get_backend_name() == "postgresql":
        url = with_password(db_url)  # the local server trusts the user, so any password connects
        assert show("import", str(real_path("codex-rollout.jsonl")), "--db", url).exit_code == 0
        assert show("threads", "--db", url).exit_code == 0
        missing = show("simulate", "--thread", "nope", "--db", url)
        assert missing.exit_code == 2 and "***" in missing.stderr
        no_db = make_url(url).set(database="no_such_database_here").render_as_string(hide_password=False)
        assert show("threads", "--db", no_db).exit_code == 2
    unreachable = f"postgresql+psycopg://someone:{SECRET}@127.0.0.1:1/db"
    for args in (["threads"], ["simulate", "--thread", "t"], ["import", str(real_path("codex-rollout.jsonl"))]):
        result = show(*args, "--db", unreachable)
        assert result.exit_code == 2
        [line] = result.stderr.strip().splitlines()
        assert line.startswith("context-inspector: error: postgresql+psycopg://someone:***@127.0.0.1:1/db: "), line
    assert show("threads", "--db", f"nosuchdriver://someone:{SECRET}@host/db").exit_code == 2
    assert all(SECRET not in text for text in outputs), [t for t in outputs if SECRET in t]
    assert len(outputs) >= 4
