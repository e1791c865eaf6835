"""The agents' profiles on the real transcripts of ../shared/fixtures/real/.

Every figure about a file (where Claude Code compacted, what it billed) is computed here by a
small parser of the JSONL, never by the importer under test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from inspector.cli import main
from tests.paths import REAL

WITH_COMPACTIONS = [
    "claude-code-session-with-compaction.jsonl",
    "claude-code-2.1.7-parallel-tools-3-compactions.jsonl",
    "claude-code-2.1.17-stop-hook-progress.jsonl",
    "claude-code-2.1.19-auto-and-manual-compaction.jsonl",
    "claude-code-2.1.37-progress-records.jsonl",
]


def calls_and_compactions(path: Path) -> tuple[list[int], list[tuple[int, str]]]:
    """Billed prompt per model call of the main chain (unique message.id with usage, not synthetic,
    not a sidechain) in file order, and (index of the first call after it, trigger) per
    compact_boundary."""
    seen: set[str] = set()
    billed: list[int] = []
    compactions: list[tuple[int, str]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if record.get("type") == "assistant" and not record.get("isSidechain"):
            message = record.get("message") or {}
            usage = message.get("usage")
            if usage and message.get("model") != "<synthetic>" and message.get("id") not in seen:
                seen.add(message["id"])
                billed.append(sum(usage.get(k) or 0 for k in
                                  ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")))
        if record.get("type") == "system" and record.get("subtype") == "compact_boundary":
            compactions.append((len(billed), (record.get("compactMetadata") or {}).get("trigger")))
    return billed, compactions


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    db = tmp_path_factory.mktemp("real") / "real.sqlite"
    _run("import", *(str(REAL / name) for name in WITH_COMPACTIONS), "--db", str(db))
    infos = json.loads(_run("threads", "--db", str(db), "--json"))
    main_threads = {}
    for name in WITH_COMPACTIONS:
        billed, _ = calls_and_compactions(REAL / name)
        # the session's main thread: the one with as many requests as the file has main-chain calls
        [info] = [i for i in infos if i["requests"] == len(billed) and i["source"] == "claude-code"
                  and i["id"] not in main_threads.values()][:1]
        main_threads[name] = info["id"]
    return db, main_threads


def _timeline(db, thread_id: str, *extra: str) -> list[dict]:
    out = _run("simulate", "--thread", thread_id, "--db", str(db), "--timeline", "--json", *extra)
    return json.loads(out)["requests"]


@pytest.mark.parametrize("name", WITH_COMPACTIONS)
def test_claude_code_decides_its_compactions_where_claude_code_did(imported, name):
    db, ids = imported
    _, compactions = calls_and_compactions(REAL / name)
    automatic = [index for index, trigger in compactions if trigger == "auto"]
    decided = [r["index"] for r in _timeline(db, ids[name], "--profile", "claude-code", "--compactions", "decide")
               if r["compaction"] is not None]
    assert decided, name
    assert abs(decided[0] - automatic[0]) <= 1, (name, decided, automatic)
    for index in automatic:  # every automatic one, within one request
        assert any(abs(d - index) <= 1 for d in decided), (name, decided, automatic)


@pytest.mark.parametrize("name", WITH_COMPACTIONS)
def test_calibrated_is_the_billed_count_on_the_recorded_history(imported, name):
    db, ids = imported
    billed, compactions = calls_and_compactions(REAL / name)
    timeline = _timeline(db, ids[name])  # the default: claude-code, recorded compactions
    assert [r["budget"]["recorded_prompt_tokens"] for r in timeline] == billed
    assert [r["budget"]["calibrated_prompt_tokens"] for r in timeline] == billed
    for r in timeline:
        b = r["budget"]
        assert b["unaccounted_tokens"] == b["calibrated_prompt_tokens"] - b["prompt_tokens"]
    assert [r["index"] for r in timeline if r["compaction"]] == [i for i, _ in compactions]


@pytest.mark.parametrize("name", WITH_COMPACTIONS[:2])
@pytest.mark.parametrize("mode", ["recorded", "decide"])
def test_a_no_op_edit_moves_nothing_in_the_cli(imported, name, mode):
    db, ids = imported
    base = _timeline(db, ids[name], "--compactions", mode)
    for edit in ("summarization.timeout=121", "context.window=200000", "context.compaction_threshold=0.5"):
        assert _timeline(db, ids[name], "--compactions", mode, "--set", edit) == base, edit


@pytest.mark.parametrize("name", WITH_COMPACTIONS)
def test_what_if_compactions_do_not_cascade(imported, name):
    """At threshold 0.5 the trigger after a compaction reads the compacted history: never two
    compactions back to back, and the request after each one reads below the threshold."""
    db, ids = imported
    timeline = _timeline(db, ids[name], "--compactions", "decide", "--set", "claude_code.autocompact_pct_override=50")
    compacted = [r["index"] for r in timeline if r["compaction"]]
    assert len(compacted) >= 2
    assert not any(b - a == 1 for a, b in zip(compacted, compacted[1:], strict=False))
    # 50% of the effective window (the window less the summary reserve of the file's CLI version)
    version = next(json.loads(line).get("version") for line in (REAL / name).read_text(encoding="utf-8").splitlines()
                   if line.strip() and json.loads(line).get("version"))
    reserve = 32_000 if tuple(int(p) for p in version.split(".")) <= (2, 1, 20) else 20_000
    threshold = (timeline[0]["budget"]["window"] - reserve) // 2
    for index in compacted:
        if index + 1 < len(timeline):
            after = timeline[index + 1]["budget"]
            assert after["trigger_source"] == "calibrated"
            assert after["trigger_tokens"] < threshold


CASCADE_SETTINGS = [
    ("iris", "context.compaction_threshold=0.5"),
    ("harness", "context.compaction_threshold=0.5"),
    ("claude-code", "claude_code.autocompact_pct_override=50"),
    ("codex", "codex.auto_compact_token_limit=100000"),
    ("opencode", "context.window=120000"),
    ("anthropic-context-editing", "context_editing.compact_trigger=80000"),
]


@pytest.mark.parametrize("profile, setting", CASCADE_SETTINGS)
def test_after_a_what_if_compaction_the_trigger_reads_the_compacted_history(imported, profile, setting):
    """The request after each compaction reads the calibrated prompt of the compacted history: below
    the threshold, unless the audit says what is kept is over it (two in a row are then explained)."""
    db, ids = imported
    for name in WITH_COMPACTIONS:
        out = _run("simulate", "--thread", ids[name], "--db", str(db), "--json", "--timeline",
                   "--profile", profile, "--compactions", "decide", "--set", setting)
        timeline = json.loads(out)["requests"]
        compacted = [r["index"] for r in timeline if r["compaction"]]
        for a, b in zip(compacted, compacted[1:], strict=False):
            if b == a + 1:
                said = timeline[a]["diagnostics"] + timeline[b]["diagnostics"]
                assert any("kept tail alone" in d or "compacts again right after" in d for d in said), (
                    name, profile, a, said)
        for index in compacted:
            if index + 1 < len(timeline):
                assert timeline[index + 1]["budget"]["trigger_source"] in ("calibrated", "estimated"), (name, index)


@pytest.mark.parametrize("name", WITH_COMPACTIONS)
def test_the_report_says_how_well_claude_code_reproduces_the_recorded_compactions(imported, name):
    db, ids = imported
    _, compactions = calls_and_compactions(REAL / name)
    automatic = sum(1 for _, trigger in compactions if trigger == "auto")
    out = _run("simulate", "--thread", ids[name], "--db", str(db), "--timeline")
    noun = "compaction" if automatic == 1 else "compactions"
    if automatic < len(compactions):  # the user's /compact too: the count says it is of the automatic ones
        noun = f"automatic {noun}"
    assert f"claude-code reproduces {automatic} of {automatic} recorded {noun}" in out
    assert "compactions recorded" in out.splitlines()[1]
