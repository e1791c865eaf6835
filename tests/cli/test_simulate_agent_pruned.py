"""Issue 26 item 1: a tool output opencode pruned itself (`state.time.compacted` of a `ToolStateCompleted`,
anomalyco/opencode `packages/opencode/src/session/message-v2.ts` at commit 007a9409; opencode then sends
"[Old tool result content cleared]") is shown pruned by the agent, with when, in the requests sent after it
with compactions `recorded`: the simulate JSON's block status and reason, the text report and the block
detail. Which requests come after the prune is read here from the file's own times."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

from inspector.cli import main
from inspector.importers import REGISTRY
from inspector.service import load_config, run_replay
from tests.data.test_import_opencode import export
from widgets.blocks import block_detail

PRUNED_AT_MS = 1_760_000_000_040  # after msg_02's two calls, before msg_06's and msg_07's


def pruned_session() -> dict:
    """The export test's session without its compaction, opencode's prune of call_1's output at PRUNED_AT_MS."""
    doc = export()
    doc["messages"] = [m for m in doc["messages"] if m["info"]["id"] not in ("msg_03", "msg_04")]
    for m in doc["messages"]:
        for p in m["parts"]:
            if p.get("callID") == "call_1":
                p["state"]["time"]["compacted"] = PRUNED_AT_MS
                p["state"]["output"] = "def parse():\n    return 1/0\n" * 40  # a file read, then erased
    return doc


def expected(doc: dict) -> tuple[str, dict[str, bool]]:
    """(call_1's result part id, request id -> whether it was sent after the prune)."""
    part = next(p["id"] for m in doc["messages"] for p in m["parts"] if p.get("callID") == "call_1")
    after: dict[str, bool] = {}
    for m in doc["messages"]:
        info = m["info"]
        if info["role"] != "assistant":
            continue
        steps = [p for p in m["parts"] if p["type"] == "step-finish"] or [info]
        for k in range(len(steps)):
            after[f"req-{info['id']}" + (f".{k}" if k else "")] = info["time"]["created"] >= PRUNED_AT_MS
    return part, after


def test_simulate_shows_the_agents_own_prune_after_it_happened(tmp_path: Path):
    doc = pruned_session()
    part, after = expected(doc)
    assert sorted(after.values()) == [False, False, True, True]
    src, db = tmp_path / "s.json", str(tmp_path / "s.sqlite")
    src.write_text(json.dumps(doc), encoding="utf-8")
    runner = CliRunner()
    assert runner.invoke(main, ["import", str(src), "--db", db]).exit_code == 0
    out = runner.invoke(main, ["simulate", "--thread", "ses_1", "--db", db, "--json", "--compactions", "recorded"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout)["requests"]
    assert [r["request_id"] for r in rows] == list(after)
    for row in rows:
        [block] = [b for b in row["blocks"] if b["message_id"] == part] or [None]
        if block is None:  # the request before the tool ran
            assert not after[row["request_id"]]
            continue
        if after[row["request_id"]]:
            assert (block["status"], block["reason"]) == ("pruned", "pruned_by_agent")
            assert 0 < block["tokens_sent"] < block["tokens"]
        else:
            assert block["status"] == "kept" and block["tokens_sent"] == block["tokens"]
    # the profile deciding: what the agent recorded is not its decision to reproduce
    decided = json.loads(runner.invoke(main, ["simulate", "--thread", "ses_1", "--db", db, "--json",
                                              "--compactions", "decide"]).stdout)["requests"]
    assert not any(b["reason"] == "pruned_by_agent" for r in decided for b in r["blocks"])
    when = datetime.fromtimestamp(PRUNED_AT_MS / 1000, UTC).isoformat().replace("+00:00", "Z")
    text = runner.invoke(main, ["simulate", "--thread", "ses_1", "--db", db, "--compactions", "recorded"]).stdout
    assert f"pruned by the agent (recorded): 1 tool output: {part} at {when}" in text
    assert "pruned_by_agent" in text


def test_the_block_detail_says_pruned_by_the_agent_and_when():
    doc = pruned_session()
    part, after = expected(doc)
    [thread] = REGISTRY["opencode"].parse_text(json.dumps(doc), "s.json").threads
    replay = run_replay(thread, load_config("opencode", {}, thread=thread), compactions="recorded")
    last = replay.audit(len(replay) - 1)
    assert after[last.request_id]
    [block] = [b for b in last.blocks if b.message_id == part]
    # the budget counts what was sent: the placeholder, not the erased output
    assert last.budget.history_tokens == sum(b.tokens_sent for b in last.blocks if b.turn is not None)
    assert replay.simulation(blocks=False).requests[-1].block_counts() == last.block_counts()
    detail = block_detail(block, last, {m.id: m for m in thread.messages}, {}).plain
    when = datetime.fromtimestamp(PRUNED_AT_MS / 1000, UTC).isoformat().replace("+00:00", "Z")
    assert f"Pruned by the agent itself at {when} (recorded)" in detail
    assert "def parse():\n    return 1/0" in detail  # the original, as it was before opencode erased it
