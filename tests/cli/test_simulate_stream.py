"""`simulate --json` streamed request by request (issue 28 item 2): the bytes of the whole document as
`Simulation.to_json` builds it, and `--blocks changed` / `none` rebuilding exactly the `all` output."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from inspector.cli import main
from inspector.cli.output import json_text
from inspector.cli.simulation_stream import changed_blocks, rebuild_blocks
from inspector.demo import build_demo_db
from inspector.service import default_compactions, load_config, run_replay
from inspector.store import Store

CASES = [  # (thread, extra arguments): every kind of replayer and both compaction modes
    ("demo-iris-walkthrough", []),
    ("demo-harness-examples", []),
    ("demo-shifting-roleplay", []),
    ("019e1625-789d-76c0-80ab-3724b5ddb799", []),  # codex
    ("624a4a58-b34c-462d-a70d-13421c8125a8", []),  # claude-code, a recorded compaction
    ("624a4a58-b34c-462d-a70d-13421c8125a8", ["--compactions", "decide", "--set",
                                              "claude_code.autocompact_pct_override=20"]),
    ("624a4a58-b34c-462d-a70d-13421c8125a8", ["--profile", "opencode"]),
    ("624a4a58-b34c-462d-a70d-13421c8125a8", ["--profile", "anthropic-context-editing"]),
]


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("stream") / "demo.sqlite"
    build_demo_db(path)
    return path


def _cli(db, thread, extra, *more) -> str:
    result = CliRunner().invoke(main, ["simulate", "--thread", thread, "--db", str(db), *extra, "--json", *more])
    assert result.exit_code == 0, result.output
    return result.stdout


def _materialized(db, thread, extra, request=None) -> str:
    """The document as the whole `Simulation` builds it in memory (the path before streaming)."""
    args = dict(zip(extra[::2], extra[1::2], strict=True))
    store = Store.open(f"sqlite:///{db}", read_only=True)
    try:
        t = store.load_thread(thread)
    finally:
        store.close()
    sets = dict(s.split("=", 1) for s in [args["--set"]]) if "--set" in args else {}
    config = load_config(args.get("--profile"), {k: float(v) for k, v in sets.items()}, thread=t)
    result = run_replay(t, config, compactions=args.get("--compactions") or default_compactions(t))
    return json_text(result.simulation(blocks=True).to_json(request=request)) + "\n"


@pytest.mark.parametrize(("thread", "extra"), CASES)
def test_the_streamed_json_is_the_whole_document_byte_for_byte(demo_db, thread, extra):
    streamed = _cli(demo_db, thread, extra)
    assert streamed == _materialized(demo_db, thread, extra)
    doc = json.loads(streamed)
    assert doc["requests"], "every case replays at least one request"
    assert any(r["blocks"] for r in doc["requests"])


@pytest.mark.parametrize(("thread", "extra"), CASES)
def test_changed_and_none_rebuild_exactly_the_all_output(demo_db, thread, extra):
    full = json.loads(_cli(demo_db, thread, extra))
    changed = json.loads(_cli(demo_db, thread, extra, "--blocks", "changed"))
    none = json.loads(_cli(demo_db, thread, extra, "--blocks", "none"))
    previous = None
    listed = total = 0
    for whole, delta, bare in zip(full["requests"], changed["requests"], none["requests"], strict=True):
        rebuilt = rebuild_blocks(previous, delta)
        assert rebuilt == whole["blocks"], f"request {whole['index']}"
        listed += len(delta["blocks"])
        total += len(whole["blocks"])
        previous = rebuilt
        assert {k: v for k, v in whole.items() if k != "blocks"} == bare
        assert {k: v for k, v in delta.items() if k not in ("blocks", "block_count")} == bare
    assert {k: v for k, v in full.items() if k != "requests"} == {k: v for k, v in changed.items() if k != "requests"}
    if len(full["requests"]) > 3:
        assert listed < total, "changed lists fewer blocks than all on a thread that grows"


def test_one_request_streams_as_before(demo_db):
    thread, extra = CASES[4]
    assert _cli(demo_db, thread, extra, "--request", "7") == _materialized(demo_db, thread, extra, request=7)


def test_changed_blocks_lists_what_moved_and_what_is_new():
    a, b, c = ({"message_id": x, "status": "sent", "tokens_sent": 5} for x in "abc")
    moved = {**b, "status": "summarized", "tokens_sent": 0}
    row = {"block_count": 3, "blocks": changed_blocks([a, b], [a, moved, c])}
    assert row["blocks"] == [{"index": 1, **moved}, {"index": 2, **c}]
    assert rebuild_blocks([a, b], row) == [a, moved, c]
    assert rebuild_blocks([a, b, c], {"block_count": 1, "blocks": []}) == [a]  # a list that shrank


def test_blocks_without_json_is_a_one_line_error(demo_db):
    result = CliRunner().invoke(main, ["simulate", "--thread", CASES[0][0], "--db", str(demo_db),
                                       "--blocks", "changed"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "context-inspector: error: --blocks applies to --json without --timeline (the timeline lists no blocks)"]
