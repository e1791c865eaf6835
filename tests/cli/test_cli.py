"""The headless commands: import, threads, simulate, export; errors are one line, no traceback."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from inspector.cli import main
from inspector.examples import walkthrough_thread
from inspector.importers.native import export_native
from tests.paths import DEMO_DATA, REAL

if not REAL.is_dir():  # CI lays shared/ beside the clone; the demo data has gzipped copies
    REAL = DEMO_DATA


def _real(name: str) -> Path:
    plain = REAL / name
    return plain if plain.exists() else REAL / f"{name}.gz"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def db_with_walkthrough(tmp_path):
    src = tmp_path / "walk.json"
    src.write_text(json.dumps(export_native([walkthrough_thread()])))
    db = tmp_path / "db.sqlite"
    result = CliRunner().invoke(main, ["import", str(src), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "imported 1 thread(s)" in result.output
    return db


def test_threads_json_contract(db_with_walkthrough):
    result = CliRunner().invoke(main, ["threads", "--db", str(db_with_walkthrough), "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert rows == [{"id": "demo-iris-walkthrough", "title": "Iris walkthrough: a long tool-heavy session",
                     "source": "demo", "messages": 81, "requests": 44, "summaries": 0}]
    assert len(walkthrough_thread().messages) == 81


def test_simulate_json_contract_and_walkthrough_compaction(db_with_walkthrough):
    result = CliRunner().invoke(main, ["simulate", "--thread", "demo-iris-walkthrough", "--db",
                                       str(db_with_walkthrough), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["format"] == "context-inspector/simulation-v1"
    assert data["profile"] == "iris" and data["tokenizer"] == {"name": "chars4", "approximate": True}
    assert data["config"]["context.window"] == 200_000
    req = next(r for r in data["requests"] if r["compaction"])
    assert req["turn"] == 21 and req["compaction"]["trigger"] == "token_threshold"
    assert req["compaction"]["first_message_id"] == "t01-user"
    assert req["compaction"]["last_message_id"] == "t18-call1-result"
    assert set(req) >= {"index", "request_id", "after_message_id", "turn", "status", "error", "budget",
                        "compaction", "summaries_injected", "protect_turns", "blocks"}
    assert set(req["budget"]) >= {"window", "system_tokens", "tool_tokens", "summary_tokens", "response_reserve",
                                  "available", "history_tokens", "prompt_tokens", "recorded_prompt_tokens",
                                  "trigger_source"}
    block = req["blocks"][0]
    assert set(block) == {"message_id", "role", "kind", "turn", "status", "protected", "reason", "tokens",
                          "tokens_sent", "position"}


def test_simulate_timeline_and_single_request(db_with_walkthrough):
    runner = CliRunner()
    tl = json.loads(runner.invoke(main, ["simulate", "--thread", "demo-iris-walkthrough", "--db",
                                         str(db_with_walkthrough), "--json", "--timeline"]).output)
    assert all("blocks" not in r and "block_counts" in r for r in tl["requests"])
    one = json.loads(runner.invoke(main, ["simulate", "--thread", "demo-iris-walkthrough", "--db",
                                          str(db_with_walkthrough), "--json", "--request", "40"]).output)
    assert [r["index"] for r in one["requests"]] == [40] and one["requests"][0]["blocks"]
    text = runner.invoke(main, ["simulate", "--thread", "demo-iris-walkthrough", "--db", str(db_with_walkthrough),
                                "--request", "40"]).output
    assert "compaction (token_threshold)" in text and "tool_output_cleared" in text


def test_simulate_set_override_changes_the_replay(db_with_walkthrough):
    out = CliRunner().invoke(main, ["simulate", "--thread", "demo-iris-walkthrough", "--db", str(db_with_walkthrough),
                                    "--json", "--timeline", "--set", "context.compaction_threshold=0.5"]).output
    data = json.loads(out)
    turns = [r["turn"] for r in data["requests"] if r["compaction"]]
    assert turns and turns[0] < 21
    assert data["config"]["context.compaction_threshold"] == 0.5


def test_threads_and_simulate_leave_the_sqlite_file_byte_identical(db_with_walkthrough):
    before = _sha(db_with_walkthrough)
    siblings = sorted(p.name for p in db_with_walkthrough.parent.iterdir())
    runner = CliRunner()
    assert runner.invoke(main, ["threads", "--db", str(db_with_walkthrough)]).exit_code == 0
    assert runner.invoke(main, ["simulate", "--thread", "demo-iris-walkthrough", "--db",
                                str(db_with_walkthrough), "--profile", "shifting"]).exit_code == 0
    assert _sha(db_with_walkthrough) == before
    assert sorted(p.name for p in db_with_walkthrough.parent.iterdir()) == siblings


@pytest.mark.parametrize(
    "args, message",
    [
        (["simulate", "--thread", "demo-iris-walkthrough", "--set", "context.token_budget_ratio=1.4"],
         "context.token_budget_ratio must be in (0, 1]: got '1.4'"),
        (["simulate", "--thread", "demo-iris-walkthrough", "--set", "context.nope=1"], "unknown config key 'context.nope'"),
        (["simulate", "--thread", "no-such-thread"], "no-such-thread"),
        (["simulate", "--thread", "demo-iris-walkthrough", "--request", "999"], "--request 999 is out of range"),
    ],
)
def test_user_mistakes_are_one_line_errors(db_with_walkthrough, args, message):
    result = CliRunner().invoke(main, args + ["--db", str(db_with_walkthrough)])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
    assert len([line for line in result.output.splitlines() if line.strip()]) == 1


def test_missing_database_path_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(main, ["threads", "--db", str(tmp_path / "nope.sqlite")])
    assert result.exit_code == 2
    assert "nope.sqlite" in result.output and "Traceback" not in result.output


def test_import_real_fixture_then_simulate_its_recorded_compaction(tmp_path):
    db = tmp_path / "cc.sqlite"
    runner = CliRunner()
    result = runner.invoke(main, ["import", str(_real("claude-code-session-with-compaction.jsonl")), "--db", str(db)])
    assert result.exit_code == 0, result.output
    rows = json.loads(runner.invoke(main, ["threads", "--db", str(db), "--json"]).output)
    assert len(rows) == 1 and rows[0]["summaries"] == 1
    data = json.loads(runner.invoke(main, ["simulate", "--thread", rows[0]["id"], "--db", str(db), "--json",
                                           "--timeline"]).output)
    compactions = [r for r in data["requests"] if r["compaction"]]
    assert len(compactions) == 1
    before = data["requests"][compactions[0]["index"] - 1]
    # the provider's billed prompt falls from about 155.7k to 36.5k across the compaction
    assert 155_000 < before["budget"]["recorded_prompt_tokens"] < 156_000
    assert 36_000 < compactions[0]["budget"]["recorded_prompt_tokens"] < 37_000


def test_export_round_trip(db_with_walkthrough, tmp_path):
    out = tmp_path / "out.json"
    assert CliRunner().invoke(main, ["export", "--db", str(db_with_walkthrough), "-o", str(out)]).exit_code == 0
    data = json.loads(out.read_text())
    assert data["format"] == "context-inspector/v1"
    assert export_native([walkthrough_thread()])["threads"][0]["messages"] == data["threads"][0]["messages"]


def test_python_dash_m_inspector_runs(tmp_path, db_with_walkthrough):
    out = subprocess.run([sys.executable, "-m", "inspector", "threads", "--db", str(db_with_walkthrough)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "demo-iris-walkthrough" in out.stdout
