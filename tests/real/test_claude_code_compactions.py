"""Claude Code's compactions as the importer records them and the claude-code profile replays them, on
the real sessions of ../shared/fixtures/real/ and copies of them made here (a compaction that kept
a tail, one that recorded `postTokens`, the later half's counts removed).

Every figure about a file (`preTokens`, triggers, billed counts, versions) is read here by a small
parser of the JSONL (plain `json`), never by the importer under test."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from inspector.importers import parse_text
from tests.paths import REAL

COMPACTED = (
    "claude-code-session-with-compaction.jsonl",
    "claude-code-2.1.7-parallel-tools-3-compactions.jsonl",
    "claude-code-2.1.17-stop-hook-progress.jsonl",
    "claude-code-2.1.19-auto-and-manual-compaction.jsonl",
    "claude-code-2.1.37-progress-records.jsonl",
)
GUESSES = ("restarted", "predicted", "estimate")


def records(name: str) -> list[dict]:
    return [json.loads(line) for line in (REAL / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def calls_and_boundaries(recs: list[dict]) -> tuple[list[dict], list[dict]]:
    """The main chain's model calls in file order ({"id", "billed", "version"}: a unique message.id with
    usage, not `<synthetic>`) and its compact_boundary records ({"before": index of the first call
    after it, "trigger", "preTokens"})."""
    calls: list[dict] = []
    seen: set[str] = set()
    boundaries: list[dict] = []
    for rec in recs:
        if rec.get("isSidechain"):
            continue
        msg = rec.get("message") or {}
        usage = msg.get("usage")
        if rec.get("type") == "assistant" and usage and msg.get("model") != "<synthetic>" and msg.get("id") not in seen:
            seen.add(msg["id"])
            calls.append({"id": msg["id"], "version": rec.get("version"),
                          "billed": sum(usage.get(k) or 0 for k in
                                        ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))})
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            meta = rec.get("compactMetadata") or {}
            boundaries.append({"before": len(calls), "trigger": meta.get("trigger"), "preTokens": meta.get("preTokens")})
    return calls, boundaries


def main_thread(name: str, text: str | None = None):
    _, result = parse_text(text if text is not None else (REAL / name).read_text(encoding="utf-8"), name)
    return max(result.threads, key=lambda t: len(t.requests))


@pytest.fixture(scope="module")
def sessions():
    return {name: (records(name), main_thread(name)) for name in COMPACTED}


def _replay(thread, mode, **overrides):
    from inspector.service import load_config, run_replay

    return run_replay(thread, load_config(None, overrides, thread=thread), compactions=mode)


# -- what the importer records ----------------------------------------------------------------------

def test_each_compaction_keeps_its_trigger_count_and_version(sessions):
    for name, (recs, thread) in sessions.items():
        _, boundaries = calls_and_boundaries(recs)
        kept = [(s.meta.get("trigger"), s.meta.get("preTokens"), s.meta.get("version")) for s in thread.summaries]
        expected = [(r["compactMetadata"]["trigger"], r["compactMetadata"]["preTokens"], r.get("version"))
                    for r in recs if r.get("subtype") == "compact_boundary" and not r.get("isSidechain")]
        assert kept == expected, name
        assert [b["trigger"] for b in boundaries] == [t for t, _, _ in kept]


def test_a_session_resumed_by_another_cli_records_each_requests_version(sessions):
    recs, thread = sessions["claude-code-2.1.37-progress-records.jsonl"]
    calls, _ = calls_and_boundaries(recs)
    changes = [[c["id"], c["version"]] for i, c in enumerate(calls) if i == 0 or c["version"] != calls[i - 1]["version"]]
    assert len(changes) == 2  # 2.1.36, then 2.1.37
    assert thread.meta["versions"] == changes
    one = sessions["claude-code-2.1.19-auto-and-manual-compaction.jsonl"][1]
    assert "versions" not in one.meta and one.meta["version"] == "2.1.19"


def _with_preserved_tail(recs: list[dict], kept: int = 2, post_tokens: int | None = None) -> tuple[str, list[str]]:
    """The 2.1.37 session as a CLI that kept the last `kept` conversation records before its first
    compaction verbatim would have written it: the boundary names them (`preservedSegment`,
    `preservedMessages`), and the first record after the summary continues at the kept tail."""
    out = [dict(r) for r in recs]
    at = next(i for i, r in enumerate(out) if r.get("subtype") == "compact_boundary")
    chain = [r for r in out[:at] if r.get("type") in ("user", "assistant") and not r.get("isSidechain")]
    tail = chain[-kept:]
    summary = next(r for r in out[at:] if r.get("isCompactSummary"))
    meta = dict(out[at]["compactMetadata"])
    meta["preservedSegment"] = {"headUuid": tail[0]["uuid"], "anchorUuid": summary["uuid"], "tailUuid": tail[-1]["uuid"]}
    meta["preservedMessages"] = {"anchorUuid": summary["uuid"], "uuids": [r["uuid"] for r in tail]}
    if post_tokens is not None:
        meta["postTokens"] = post_tokens
    out[at] = {**out[at], "compactMetadata": meta}
    after = next(i for i, r in enumerate(out) if i > at and r.get("parentUuid") == summary["uuid"])
    out[after] = {**out[after], "parentUuid": tail[-1]["uuid"]}
    return "\n".join(json.dumps(r) for r in out), [r["uuid"] for r in tail]


def test_a_compaction_that_kept_a_tail_summarizes_what_came_before_it(sessions):
    recs, original = sessions["claude-code-2.1.37-progress-records.jsonl"]
    text, tail = _with_preserved_tail(recs, post_tokens=9_000)
    thread = main_thread("claude-code-2.1.37-progress-records.jsonl", text)
    assert len(thread.requests) == len(original.requests)  # the chain still runs through the whole session
    first = thread.summaries[0]
    assert first.meta["preserved"] == tail and first.meta["postTokens"] == 9_000
    ids = [m.id.split("#", 1)[0] for m in thread.messages]
    head = ids.index(tail[0])
    assert thread.messages[head - 1].id == first.last_message_id  # the span stops before the kept tail
    assert original.summaries[0].last_message_id != first.last_message_id
    replay = _replay(thread, "recorded")
    k = next(a.index for a in replay.timeline if a.compaction is not None)
    sent = {b.message_id.split("#", 1)[0] for b in replay.audit(k).blocks if str(b.status) == "kept" and b.message_id}
    assert set(tail) <= sent  # sent after the summary


def test_a_recorded_post_tokens_is_what_the_level_after_the_compaction_stands_on(sessions):
    recs, _ = sessions["claude-code-2.1.37-progress-records.jsonl"]
    calls, boundaries = calls_and_boundaries(recs)
    text, _ = _with_preserved_tail(recs, kept=1, post_tokens=12_000)
    thread = main_thread("claude-code-2.1.37-progress-records.jsonl", text)
    k = boundaries[0]["before"]
    hidden = replace(thread, requests=tuple(r if i < k else replace(r, prompt_tokens=None, cache_read_tokens=None,
                                                                   cache_write_tokens=None)
                                            for i, r in enumerate(thread.requests)))
    replay = _replay(hidden, "recorded")
    assert replay.basis(k) in ("modelled", "compaction")
    steps = replay._fast.steps
    summary_rough = round(len(thread.summaries[0].summary) / 4)
    ratio = sum(replay._fast.t.costs) / replay._fast.t.approx_full[-1]
    assert abs(steps.reattached[k][0] - (12_000 - summary_rough) * ratio) <= 3 and steps.reattached[k][2] == 0
    more = main_thread("claude-code-2.1.37-progress-records.jsonl", _with_preserved_tail(recs, 1, 22_000)[0])
    more_hidden = replace(more, requests=hidden.requests)
    difference = (_replay(more_hidden, "recorded").timeline[k].budget.calibrated_prompt_tokens
                  - replay.timeline[k].budget.calibrated_prompt_tokens)
    fit = replay.calibration.fit
    assert difference == pytest.approx(fit.step_ratio * 10_000 * ratio, rel=0.01)
    assert calls[k]["billed"] > 0


# -- the trigger and the compactions it decides ---------------------------------------------------

def test_the_trigger_reads_what_claude_code_recorded_as_pre_tokens(sessions):
    """On the recorded history, the reading before each recorded compaction is its `preTokens` (Claude
    Code's own reading), within 150 tokens: the output as that CLI held it and its rough count of
    what followed."""
    for name, (recs, thread) in sessions.items():
        _, boundaries = calls_and_boundaries(recs)
        timeline = _replay(thread, "recorded").timeline
        for b in boundaries:
            if b["trigger"] == "auto":
                reading = timeline[b["before"]].budget
                assert reading.trigger_source == "recorded", name
                assert abs(reading.trigger_tokens - b["preTokens"]) <= 150, (name, b, reading.trigger_tokens)


def test_decide_mode_places_every_automatic_compaction_where_claude_code_did(sessions):
    """Under the thread's own profile, left to decide: each automatic compaction at its own request, the
    manual `/compact` replayed where the user made it (`"manual": true`), nothing invented."""
    for name, (recs, thread) in sessions.items():
        _, boundaries = calls_and_boundaries(recs)
        rows = _replay(thread, "decide").simulation(blocks=False).to_json(timeline=True)["requests"]
        placed = [(r["index"], r["compaction"]["manual"]) for r in rows if r["compaction"]]
        assert placed == [(b["before"], b["trigger"] == "manual") for b in boundaries], name
        assert all(r["compaction"]["trigger"] == ("manual" if r["compaction"]["manual"] else "token_threshold")
                   for r in rows if r["compaction"])


@pytest.mark.parametrize("name", ["claude-code-session-with-sidechains.jsonl", "claude-code-2.1.7-subagents/turn-2.jsonl"])
def test_decide_mode_invents_no_compaction_in_a_session_that_never_compacted(name):
    _, result = parse_text((REAL / name).read_text(encoding="utf-8"), Path(name).name)
    assert not any(r.get("subtype") == "compact_boundary" for r in records(name))
    for thread in result.threads:
        assert not any(a.compaction for a in _replay(thread, "decide").timeline), thread.id


def test_in_decide_mode_the_calibrated_prompt_falls_only_where_the_billed_count_did(sessions):
    """Where the what-if does not compact where the agent did (a 1M window), or compacts earlier (half
    the threshold), the level carries on: between two requests where the replayed history grew and
    neither compacted, the calibrated prompt falls by more than 2% only where it is the recorded
    count and that count itself fell (Claude's own thinking of a finished turn no longer billed)."""
    falls = 0
    for name, (_, thread) in sessions.items():
        for edit in ({}, {"context.window": 1_000_000}, {"claude_code.autocompact_pct_override": 50}):
            replay = _replay(thread, "decide", **edit)
            timeline = replay.timeline
            for a, b in zip(timeline, timeline[1:], strict=False):
                ca, cb = a.budget.calibrated_prompt_tokens, b.budget.calibrated_prompt_tokens
                if b.compaction is None and b.budget.prompt_tokens >= a.budget.prompt_tokens and cb < 0.98 * ca:
                    ra, rb = thread.requests[a.index].prompt_tokens, thread.requests[b.index].prompt_tokens
                    assert replay.basis(a.index) == replay.basis(b.index) == "recorded", (name, edit, b.index)
                    assert (ca, cb) == (ra, rb) and rb < 0.98 * ra
                    falls += 1
    assert falls <= 6


def test_with_the_later_half_hidden_no_figure_over_10_percent_off_is_called_anything_but_a_guess(sessions):
    within3 = within10 = hidden_count = 0
    for name, (recs, thread) in sessions.items():
        calls, _ = calls_and_boundaries(recs)
        half = len(thread.requests) // 2
        hidden = replace(thread, requests=tuple(
            r if k < half else replace(r, prompt_tokens=None, cache_read_tokens=None, cache_write_tokens=None)
            for k, r in enumerate(thread.requests)))
        replay = _replay(hidden, "recorded")
        for a in replay.timeline[half:]:
            billed = calls[a.index]["billed"]
            error = abs(a.budget.calibrated_prompt_tokens - billed) / billed
            hidden_count += 1
            within3 += error <= 0.03
            within10 += error <= 0.10
            if error > 0.10:
                assert replay.basis(a.index) in GUESSES, (name, a.index, replay.basis(a.index), error)
    # the five compacted sessions alone (bench/bench_calibration.py adds the sidechains and Codex ones)
    assert within3 >= 0.68 * hidden_count and within10 >= 0.94 * hidden_count, (within3, within10, hidden_count)


# -- what the user sees ---------------------------------------------------------------------------

def test_threads_and_the_report_say_manual_compact(tmp_path):
    from click.testing import CliRunner

    from inspector.cli import main

    name = "claude-code-2.1.19-auto-and-manual-compaction.jsonl"
    _, boundaries = calls_and_boundaries(records(name))
    manual = [b["before"] for b in boundaries if b["trigger"] == "manual"]
    db = str(tmp_path / "cc.sqlite")
    runner = CliRunner()
    assert runner.invoke(main, ["import", str(REAL / name), "--db", db]).exit_code == 0
    listed = runner.invoke(main, ["threads", "--db", db]).output
    assert f"{len(boundaries)} ({len(manual)} manual (/compact))" in listed
    [info] = json.loads(runner.invoke(main, ["threads", "--db", db, "--json"]).output)
    assert info["manual_compactions"] == len(manual) and info["summaries"] == len(boundaries)
    report = runner.invoke(main, ["simulate", "--thread", info["id"], "--db", db, "--timeline",
                                  "--compactions", "decide"]).output
    assert "rules: claude-code 2.1.8+" in report
    assert report.count("compaction (manual (/compact))") == len(manual)
    automatic = len(boundaries) - len(manual)
    assert f"of {automatic} recorded automatic compaction{'s' if automatic != 1 else ''}" in report


async def test_the_app_names_a_manual_compaction_and_the_rules(tmp_path):
    from inspector.screens.source import MemorySource
    from inspector.screens.status import StatusLine, TimelineLabel
    from tests.tui.app_support import SIZE, make_app, plain, settle
    from widgets.budget import BudgetView

    name = "claude-code-2.1.19-auto-and-manual-compaction.jsonl"
    _, boundaries = calls_and_boundaries(records(name))
    [manual] = [b["before"] for b in boundaries if b["trigger"] == "manual"]
    thread = main_thread(name)
    app = make_app(tmp_path, MemorySource([thread]), thread_id=thread.id)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "rules 2.1.8+" in plain(app.query_one(StatusLine))
        app.main_screen.jump_to_request(manual)
        await settle(app, pilot)
        assert "◆ manual (/compact)" in plain(app.query_one(TimelineLabel))
        assert "manual (/compact), the user's own" in plain(app.query_one(BudgetView))
        app.main_screen.jump_to_request(boundaries[0]["before"])  # the automatic one: the threshold's
        await settle(app, pilot)
        assert "◆ compaction" in plain(app.query_one(TimelineLabel))
        assert "manual (/compact)" not in plain(app.query_one(BudgetView))
        # the reproduction counts the automatic ones, and says so
        automatic = len(boundaries) - 1
        noun = "compaction" if automatic == 1 else "compactions"
        assert f"of {automatic} recorded automatic {noun}" in plain(app.query_one(StatusLine))


async def test_a_what_if_that_moves_the_automatic_compaction_never_says_the_manual_one_moved(tmp_path):
    """In decide mode at 60% the automatic compaction comes earlier; the user's /compact stays where it was
    made. Paired by rank, the diff said "compaction #2: request <the manual one's> -> <the automatic one's>"."""
    from inspector.screens.source import MemorySource
    from inspector.screens.status import DiffPanel
    from tests.tui.app_support import SIZE, make_app, plain, settle

    name = "claude-code-2.1.19-auto-and-manual-compaction.jsonl"
    _, boundaries = calls_and_boundaries(records(name))
    [manual] = [b["before"] for b in boundaries if b["trigger"] == "manual"]
    [automatic] = [b["before"] for b in boundaries if b["trigger"] != "manual"]
    thread = main_thread(name)
    app = make_app(tmp_path, MemorySource([thread]), thread_id=thread.id)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")  # the profile decides
        await settle(app, pilot)
        screen = app.main_screen
        assert screen.view.compactions == "decide"
        screen.set_config_value("claude_code.autocompact_pct_override", 60)
        await settle(app, pilot)
        moved = [r.index for r in screen.view.requests if r.compaction is not None and not r.compaction.manual]
        assert moved and moved[0] < automatic  # the automatic one came earlier
        assert any(r.index == manual and r.compaction is not None and r.compaction.manual for r in screen.view.requests)
        text = " ".join(plain(app.query_one(DiffPanel)).split())
        assert f"automatic compaction #1: request {automatic + 1} -> {moved[0] + 1}" in text
        assert f"request {manual + 1} ->" not in text and "manual compaction" not in text


def test_a_damaged_summary_meta_costs_only_the_manual_count(tmp_path):
    import sqlite3

    from click.testing import CliRunner

    from inspector.cli import main

    name = "claude-code-2.1.19-auto-and-manual-compaction.jsonl"
    db = tmp_path / "cc.sqlite"
    runner = CliRunner()
    assert runner.invoke(main, ["import", str(REAL / name), "--db", str(db)]).exit_code == 0
    conn = sqlite3.connect(db)
    conn.execute("UPDATE ci_summaries SET meta = '{broken' WHERE seq = 0")
    conn.commit()
    conn.close()
    result = runner.invoke(main, ["threads", "--db", str(db), "--json"])
    assert result.exit_code == 0
    [info] = json.loads(result.stdout)
    assert info["summaries"] == 2 and "manual_compactions" not in info
    assert (f"warning: sqlite:///{db}: ci_summaries column meta: a row holds text that is not JSON; manual "
            "compactions not counted") in result.stderr
