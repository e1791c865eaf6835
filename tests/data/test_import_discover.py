"""`import --discover`: every agent's sessions under its standard location (each importer's
`locations`), imported in one run and counted per agent (issue 26 item 6)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from click.testing import CliRunner

from inspector.cli import main
from inspector.demo_data import __file__ as DEMO_DATA
from inspector.importers.discover import discover
from tests.data.test_import_copilot_cli import events
from tests.data.test_import_gemini_cli import chat_lines
from tests.data.test_import_opencode import _opencode_db, export

DEMO = Path(DEMO_DATA).parent


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    claude = home / ".claude" / "projects" / "-home-u-proj"
    claude.mkdir(parents=True)
    (claude / "s1.jsonl").write_bytes(gzip.decompress((DEMO / "claude-code-session-with-compaction.jsonl.gz")
                                                      .read_bytes()))
    codex = home / ".codex" / "sessions" / "2026" / "11" / "30"
    codex.mkdir(parents=True)
    (codex / "rollout-2026-11-30T10-00-00-abc.jsonl").write_bytes(gzip.decompress((DEMO / "codex-rollout.jsonl.gz")
                                                                                  .read_bytes()))
    gemini = home / ".gemini" / "tmp" / "9a1b" / "chats"
    gemini.mkdir(parents=True)
    (gemini / "session-2026-11-30T10-00-7f3c2a10.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in chat_lines()), encoding="utf-8")
    copilot = home / ".copilot" / "session-state" / "4f0c1d2e"
    copilot.mkdir(parents=True)
    (copilot / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events()), encoding="utf-8")
    opencode = home / ".local" / "share" / "opencode"
    opencode.mkdir(parents=True)
    _opencode_db(opencode / "opencode.db", export())
    (home / ".claude" / "projects" / "notes.txt").write_text("not a session")
    return home


def test_discover_finds_each_agent_s_sessions_where_it_keeps_them(tmp_path: Path):
    home = _home(tmp_path)
    found = {f.agent: f for f in discover(home, env={})}
    assert [p.name for p in found["claude-code"].files] == ["s1.jsonl"]
    assert [p.name for p in found["codex"].files] == ["rollout-2026-11-30T10-00-00-abc.jsonl"]
    assert [p.name for p in found["gemini-cli"].files] == ["session-2026-11-30T10-00-7f3c2a10.jsonl"]
    assert [p.name for p in found["copilot-cli"].files] == ["events.jsonl"]
    assert [p.name for p in found["opencode"].databases] == ["opencode.db"] and found["opencode"].files == ()
    moved = {f.agent: f for f in discover(home, env={"XDG_DATA_HOME": str(tmp_path / "xdg")})}
    assert moved["opencode"].count == 0, "$XDG_DATA_HOME is where opencode keeps its database"
    assert moved["claude-code"].count == 1


def test_import_discover_imports_them_all_and_says_how_many_per_agent(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    home = _home(tmp_path)
    db = tmp_path / "all.sqlite"
    runner = CliRunner()
    result = runner.invoke(main, ["import", "--discover", "--home", str(home), "--db", str(db)])
    assert result.exit_code == 0, result.output
    for line in ("claude-code: 1 file(s)", "codex: 1 file(s)", "gemini-cli: 1 file(s)", "copilot-cli: 1 file(s)",
                 "opencode: 0 file(s), 1 database(s)"):
        assert line in result.stderr, result.stderr
    listed = json.loads(runner.invoke(main, ["threads", "--db", str(db), "--json"]).stdout)
    sources = {row["source"] for row in listed}
    assert {"claude-code", "codex", "gemini-cli", "copilot-cli", "opencode"} <= sources
    assert "ses_1" in {row["id"] for row in listed}


def test_discover_with_nothing_there_and_bad_combinations_are_one_line(tmp_path: Path):
    runner = CliRunner()
    empty = runner.invoke(main, ["import", "--discover", "--home", str(tmp_path), "--db", str(tmp_path / "x.sqlite")])
    assert empty.exit_code == 1 and "no agent sessions found" in empty.output
    assert not (tmp_path / "x.sqlite").exists()
    both = runner.invoke(main, ["import", str(tmp_path), "--discover", "--db", str(tmp_path / "x.sqlite")])
    assert both.exit_code == 2 and "not both" in both.output
    none = runner.invoke(main, ["import", "--db", str(tmp_path / "x.sqlite")])
    assert none.exit_code == 2 and "give the PATHS to import" in none.output
