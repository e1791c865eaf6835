"""The calibration's compaction counts on the real Claude Code sessions of ../shared/fixtures/real/:
`preTokens` and the billed counts are read here by a small parser of the JSONL, never by the
importer under test."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tests.paths import REAL

SESSIONS = ("claude-code-2.1.7-parallel-tools-3-compactions.jsonl", "claude-code-2.1.37-progress-records.jsonl")


def boundaries_and_billed(path: Path) -> tuple[list[tuple[int, int]], list[int]]:
    """([(preTokens, billed prompt of the last call before the boundary)], billed prompt per call in
    file order) of the main chain: a call is a unique `message.id` with usage, not `<synthetic>`."""
    out, billed, seen = [], [], set()
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("isSidechain"):
            continue
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            out.append((rec["compactMetadata"]["preTokens"], billed[-1]))
            continue
        msg = rec.get("message") or {}
        usage = msg.get("usage")
        if rec.get("type") == "assistant" and usage and msg.get("model") != "<synthetic>" and msg.get("id") not in seen:
            seen.add(msg.get("id"))
            billed.append(usage.get("input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
                          + usage.get("cache_read_input_tokens", 0))
    return out, billed


def _thread(path: Path):
    from inspector.importers import parse_text

    _, result = parse_text(path.read_text(encoding="utf-8"), path.name)
    return max(result.threads, key=lambda t: len(t.requests))


@pytest.mark.parametrize("name", SESSIONS)
def test_each_recorded_compaction_counts_what_it_compacted(name):
    from inspector.service import default_compactions, load_config, run_replay

    expected, billed = boundaries_and_billed(REAL / name)
    thread = _thread(REAL / name)
    replay = run_replay(thread, load_config(None, {}, thread=thread), compactions=default_compactions(thread))
    counts = replay.calibration.compaction_counts
    assert [c.tokens for c in counts] == [pre for pre, _ in expected]
    for count, (_, last_billed) in zip(counts, expected, strict=True):
        assert thread.requests[count.last_request].prompt_tokens == last_billed
        assert count.extra_reference >= 0 and count.extra_blocks >= 1  # the last call's own response


@pytest.mark.parametrize("name", SESSIONS)
def test_a_hidden_later_half_says_which_figures_are_guesses(name):
    """The later half stripped of its billed counts (and cache counts): the requests of a segment a
    recorded compaction ends are levelled on its count and mostly within 3%; those after the last
    compaction, with nothing recorded since, are modelled from what Claude Code re-attaches, and
    stay labelled guesses ("restarted") where that is known only within a wide range; none more than
    10% off is labelled otherwise."""
    from inspector.service import default_compactions, load_config, run_replay

    _, billed = boundaries_and_billed(REAL / name)
    thread = _thread(REAL / name)
    assert [r.prompt_tokens for r in thread.requests] == billed
    half = len(thread.requests) // 2
    hidden = replace(thread, requests=tuple(
        r if k < half else replace(r, prompt_tokens=None, cache_read_tokens=None, cache_write_tokens=None)
        for k, r in enumerate(thread.requests)))
    replay = run_replay(hidden, load_config(None, {}, thread=hidden), compactions=default_compactions(hidden))
    rows = replay.simulation(blocks=False).to_json(timeline=True)["requests"]
    bases = [row["budget"]["calibration_basis"] for row in rows]
    assert set(bases[:half]) == {"recorded"}
    last_compaction = max(k for k, row in enumerate(rows) if row["compaction"] is not None)
    assert last_compaction > half
    after = set(bases[last_compaction:])
    assert len(after) == 1 and after <= {"modelled", "restarted"}, after  # restarted: modelled within a wide range
    for k in range(half, len(rows)):  # a hidden figure more than 10% off is labelled a guess
        if abs(rows[k]["budget"]["calibrated_prompt_tokens"] - billed[k]) > 0.10 * billed[k]:
            assert bases[k] in ("restarted", "predicted", "estimate"), (k, bases[k])
    levelled = [k for k in range(half, last_compaction) if bases[k] == "compaction"]
    assert len(levelled) >= 0.8 * (last_compaction - half)
    within = [k for k in levelled if abs(rows[k]["budget"]["calibrated_prompt_tokens"] - billed[k]) <= 0.03 * billed[k]]
    assert len(within) >= 0.8 * len(levelled), (len(within), len(levelled))
