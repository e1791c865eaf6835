"""The prompt-cache model on the real Claude Code sessions of ../shared/fixtures/real.

The recorded figures are read from the files here with a small parser of their own (usage
once per `message.id`), never through the importer: the imported requests must carry them,
and the model's predicted cache-read share must match them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.importers import import_paths
from inspector.pipeline.accounting import billed_prompt_tokens
from inspector.service import load_config, run_replay
from inspector.store import Store
from tests.paths import REAL

FIXTURES = REAL
SESSIONS = ("claude-code-session-with-compaction.jsonl", "claude-code-2.1.7-parallel-tools-3-compactions.jsonl",
            "claude-code-2.1.17-stop-hook-progress.jsonl", "claude-code-2.1.19-auto-and-manual-compaction.jsonl",
            "claude-code-2.1.37-progress-records.jsonl")


def recorded_usage(path: Path) -> dict[str, dict]:
    """message.id -> its usage, main chain and sub-agents alike. The lines of one call repeat its
    usage with the output count so far: the prompt figures of the first, the largest output count."""
    out: dict[str, dict] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        msg = rec.get("message")
        if rec.get("type") != "assistant" or not isinstance(msg, dict) or msg.get("model") == "<synthetic>":
            continue
        if isinstance(msg.get("usage"), dict):
            if msg.get("id") not in out:
                out[msg["id"]] = dict(msg["usage"])
            else:
                seen = out[msg["id"]]
                seen["output_tokens"] = max(seen["output_tokens"], msg["usage"]["output_tokens"])
    return out


def compact_boundaries(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines()
               if '"compact_boundary"' in line and json.loads(line).get("subtype") == "compact_boundary")


@pytest.fixture(scope="module")
def replays(tmp_path_factory):
    out = {}
    for name in SESSIONS:
        db = tmp_path_factory.mktemp("real") / "s.sqlite"
        with Store.open(str(db), read_only=False, create=True) as store:
            import_paths([str(FIXTURES / name)], store, fmt="claude-code")
        with Store.open(str(db)) as store:
            threads = [store.load_thread(i.id) for i in store.list_threads()]
        main = max(threads, key=lambda t: len(t.requests))  # the session itself, not a sub-agent
        out[name] = run_replay(main, load_config(None, {}, thread=main), baseline=True)
    return out


@pytest.mark.parametrize("name", SESSIONS)
def test_the_imported_requests_carry_the_recorded_cache_reads_and_writes(replays, name):
    usage = recorded_usage(FIXTURES / name)
    sim = replays[name].simulation(blocks=False)
    checked = 0
    imported = {q.id: q for q in replays[name].thread.requests}
    for r in sim.requests:
        u = usage.get(r.request_id)
        if u is None:
            continue
        checked += 1
        assert r.budget.recorded_cache_read_tokens == u["cache_read_input_tokens"]
        assert r.budget.recorded_cache_write_tokens == u["cache_creation_input_tokens"]
        assert r.budget.recorded_prompt_tokens == (u["input_tokens"] + u["cache_creation_input_tokens"]
                                                   + u["cache_read_input_tokens"])
        assert imported[r.request_id].output_tokens == u["output_tokens"]
    assert checked == len(sim.requests) > 0


@pytest.mark.parametrize("name", SESSIONS)
def test_every_recorded_compaction_is_predicted_as_a_cache_break(replays, name):
    sim = replays[name].simulation(blocks=False)
    compactions = [r for r in sim.requests if r.compaction is not None]
    assert len(compactions) == compact_boundaries(FIXTURES / name)
    assert all(r.budget.cache_break is not None and r.budget.cache_break.cause == "compaction" for r in compactions)


def test_the_predicted_cache_read_share_matches_the_recorded_one(replays):
    """Within 5 percentage points on most requests of the real sessions together."""
    within = total = 0
    for name in SESSIONS:
        usage = recorded_usage(FIXTURES / name)
        for r in replays[name].simulation(blocks=False).requests:
            u = usage.get(r.request_id)
            if u is None or r.failed:
                continue
            billed = u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
            recorded = u["cache_read_input_tokens"] / billed
            predicted = r.budget.cache_read_tokens / billed_prompt_tokens(r.budget)
            total += 1
            within += abs(recorded - predicted) <= 0.05
    assert total > 1000
    assert within / total >= 0.80


def test_the_recorded_cost_is_the_files_usage_at_the_listed_prices(replays):
    name = "claude-code-session-with-compaction.jsonl"  # claude-sonnet-4-5: $3 / $3.75 / $0.30 / $15
    usage = recorded_usage(FIXTURES / name)
    sim = replays[name].simulation(blocks=False)
    expected = sum((usage[r.request_id]["input_tokens"] * 3.0 + usage[r.request_id]["cache_creation_input_tokens"]
                    * 3.75 + usage[r.request_id]["cache_read_input_tokens"] * 0.3
                    + usage[r.request_id]["output_tokens"] * 15.0) / 1e6 for r in sim.requests)
    assert replays[name].cost_totals().recorded_cost == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("name", SESSIONS)
def test_the_cache_lifetime_is_the_one_the_session_asked_for(replays, name):
    from inspector.pipeline.cache_rules import rules_for

    one_hour = any((u.get("cache_creation") or {}).get("ephemeral_1h_input_tokens", 0) > 0
                   for u in recorded_usage(FIXTURES / name).values())
    assert rules_for(replays[name].thread).lifetime == (3600 if one_hour else 300)
    assert one_hour == (name == "claude-code-2.1.37-progress-records.jsonl")  # what the files hold today


def test_a_compaction_request_reads_the_system_prefix_and_writes_the_rest(replays):
    """Issue 22 item 2: at the recorded compactions of the 2.1.x sessions the replayed cache-read share
    is within 10 points of the billed one on at least 80% of them (main read 98-100% from the cache
    at 8 of 9: "read 59,793, write 0" where the provider billed "read 27,727, write 32,063")."""
    within = total = 0
    for name in (n for n in SESSIONS if n.startswith("claude-code-2.1.")):
        usage = recorded_usage(FIXTURES / name)
        compactions = [r for r in replays[name].simulation(blocks=False).requests if r.compaction is not None]
        assert len(compactions) == compact_boundaries(FIXTURES / name)
        for r in compactions:
            u = usage[r.request_id]
            billed = u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
            predicted = r.budget.cache_read_tokens / billed_prompt_tokens(r.budget)
            assert r.budget.cache_write_tokens == billed_prompt_tokens(r.budget) - r.budget.cache_read_tokens
            total += 1
            within += abs(u["cache_read_input_tokens"] / billed - predicted) <= 0.10
    assert total == 8
    assert within / total >= 0.80, f"{within} of {total}"
