"""The calibration's server-call term on the real Codex rollout of ../shared/fixtures/real/: the
web searches are counted here by a small parser of the JSONL, never by the importer under test."""

from __future__ import annotations

import json
from pathlib import Path

from tests.paths import REAL

ROLLOUT = REAL / "codex-rollout.jsonl"


def searches_before_each_call(path: Path) -> list[int]:
    """Per model call (a change of `last_token_usage.input_tokens`): the web searches the rollout
    recorded before that call's token count, which follows the call's own response items (a
    search runs inside the call and its results are billed there)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    calls: list[int] = []
    searches, last_input = 0, None
    for row in rows:
        payload = row.get("payload") or {}
        if row.get("type") == "response_item" and payload.get("type") == "web_search_call":
            searches += 1
        info = payload.get("info") if payload.get("type") == "token_count" else None
        if info:
            value = info["last_token_usage"]["input_tokens"]
            if value != last_input:
                calls.append(searches)
                last_input = value
    return calls


def test_the_rollouts_web_searches_are_a_fitted_term():
    from inspector.importers import parse_text
    from inspector.pipeline.replays import _server_calls
    from inspector.service import default_compactions, load_config, run_replay

    expected = searches_before_each_call(ROLLOUT)
    assert expected[-1] >= 2
    _, result = parse_text(ROLLOUT.read_text(encoding="utf-8"), ROLLOUT.name)
    thread = max(result.threads, key=lambda t: len(t.requests))
    replay = run_replay(thread, load_config(None, {}, thread=thread), compactions=default_compactions(thread))
    series = _server_calls(thread, replay.timeline)
    assert len(series) == len(expected)
    assert series == expected
    fit = replay.calibration.fit
    assert fit.per_server_call > 1_000, fit.describe()  # a search's results: thousands of tokens
