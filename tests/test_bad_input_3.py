"""Bad input, round three (issue 24): what the round-three corpus files store, walked folders,
faults mid-import, the store's own damage, and the CLI's output. Each case asserts its exit code, its
one-line message, what was kept, and that nothing was written to or beside the source.

Corpus files (tests/data/bad/cc-*.jsonl, ...) are listed with their messages in
tests/test_bad_input.py::CORPUS; here is what they store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from inspector.store import Store
from tests.test_bad_input import BAD_DIR, run

SESSION = "cc-session"


def imported(tmp_path: Path, *names: str) -> Path:
    """A new store in `tmp_path` with `names` (corpus files) imported, one run each."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    db = tmp_path / "round3.sqlite"
    for name in names:
        shutil.copyfile(BAD_DIR / name, tmp_path / name)
        result = run("import", str(tmp_path / name), "--db", str(db))
        assert result.exit_code == 0, result.stderr
    return db


def test_cycles_are_bridged_and_nothing_is_lost(tmp_path: Path):
    for name in ("cc-self-parent.jsonl", "cc-boundary-cycle.jsonl", "cc-boundary-self.jsonl",
                 "cc-boundary-forward.jsonl"):
        lines = [json.loads(line) for line in (BAD_DIR / name).read_text().splitlines()]
        talk = [r["uuid"] for r in lines if r["type"] in ("user", "assistant") and not r.get("isCompactSummary")]
        calls = [r["message"]["id"] for r in lines if r["type"] == "assistant"]
        boundaries = [r["uuid"] for r in lines if r.get("subtype") == "compact_boundary"]
        db = imported(tmp_path / name, name)
        with Store.open(str(db)) as store:
            assert store.thread_ids() == [SESSION], name
            thread = store.load_thread(SESSION)
        assert [m.id for m in thread.messages] == talk, name  # in file order, one thread
        assert [r.id for r in thread.requests] == calls, name
        assert [s.meta["boundary_uuid"] for s in thread.summaries] == boundaries, name


def test_a_chain_written_leaf_first_reads_root_first(tmp_path: Path):
    db = imported(tmp_path, "cc-leaf-first.jsonl")
    with Store.open(str(db)) as store:
        thread = store.load_thread(SESSION)
    assert [m.id for m in thread.messages] == ["u1", "a1", "r1", "a2", "u2", "a3"]
    assert [(r.id, r.after_message_id) for r in thread.requests] == [("m1", "u1"), ("m2", "r1"), ("m3", "u2")]
    [summary] = thread.summaries
    assert (summary.first_message_id, summary.last_message_id, summary.before_request_id) == ("u1", "a2", "m3")
    assert "off_chain_lines" not in thread.meta


def test_counts_that_are_not_token_counts_are_unknown(tmp_path: Path):
    db = imported(tmp_path, "cc-huge-output-tokens.jsonl")
    with Store.open(str(db)) as store:
        huge = store.load_thread(SESSION)
    assert [(r.prompt_tokens, r.output_tokens) for r in huge.requests] == [(115, None), (115, 3)]
    db = imported(tmp_path / "nan", "cc-nan-usage.jsonl")
    with Store.open(str(db)) as store:
        nan = store.load_thread(SESSION)
    # NaN, 12.5 and True: the prompt is unknown (never 0, never the sum of the other counts).
    assert [r.prompt_tokens for r in nan.requests] == [None, None, None, 115]
    listing = json.loads(run("threads", "--db", str(db), "--json").stdout)
    assert listing[0]["incomplete_import"]["calls"] == 3
    db = imported(tmp_path / "neg", "cc-negative-output-tokens.jsonl")
    with Store.open(str(db)) as store:
        [request] = store.load_thread(SESSION).requests
    assert request.output_tokens is None and request.prompt_tokens == 115  # never priced as negative dollars


def test_single_block_content_and_surrogates_keep_every_message(tmp_path: Path):
    db = imported(tmp_path, "cc-single-block-content.jsonl", "cc-surrogate-arguments.jsonl",
                  "native-surrogate-arguments.json", "codex-compacted-object.jsonl")
    with Store.open(str(db)) as store:
        single = store.load_thread(SESSION)
        surrogate = store.load_thread(SESSION + "~2")
        native_bad = store.load_thread("bad-args")
        native_clean = store.load_thread("clean")
        codex = store.load_thread("codex-compacted")
    assert [(m.role.value, m.content) for m in single.messages] == [
        ("user", "a single block"), ("assistant", ""), ("tool", "a.py"), ("assistant", "done")]
    assert single.messages[1].tool_calls[0].arguments == {"command": "ls"}
    assert [r.after_message_id for r in single.requests] == ["u1", "r1"]
    assert surrogate.messages[1].tool_calls[0].arguments == {"text": "bad \ufffd here"}
    assert surrogate.messages[1].tool_calls[0].arguments_json() == '{"text": "bad \ufffd here"}'
    assert native_bad.messages[1].tool_calls[0].arguments == {"t": "\ufffd lone"}
    assert [m.content for m in native_clean.messages] == ["fine", "yes"]
    assert [s.summary for s in codex.summaries] == ["The user asked q1.", '{"kind": "opaque", "n": 3}']
