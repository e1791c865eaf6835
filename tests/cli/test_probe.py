"""Probes: where a text is visible request by request. Seed 002's planted correction
(agent-harness-context-management.txt, "Compaction loss") with the lossy and the faithful
summary, on the harness and iris profiles, replayed and recorded, engine and CLI."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from click.testing import CliRunner

from inspector.cli import main
from inspector.config import Config
from inspector.importers.native import export_native
from inspector.model import Message, Request, Role, Summary, Thread
from inspector.pipeline import replay
from inspector.pipeline.facts import FactKind
from inspector.pipeline.probe import probe
from inspector.pipeline.survival import compaction_losses

CORRECTION06 = "never edit the test fixtures"
LOSSY06 = "- inspected app.py\n- pending work remains"
FAITHFUL06 = "- Correction: never edit the test fixtures.\n- failing test: test_parser.py::test_fixture"
LOSS_PROBE06 = (
    Message("m0", Role.SYSTEM, "system contract"),
    Message("m1", Role.USER, "Correction: never edit the test fixtures."),
    Message("m2", Role.ASSISTANT, "I will keep that correction in mind."),
    Message("m3", Role.TOOL, "The failing test is test_parser.py::test_fixture."),
    Message("m4", Role.USER, "Continue with the smallest safe change."),
)
# The first request reports 170 of 200 tokens (85%, over both profiles' compaction thresholds),
# so the request after the last message compacts the eligible middle m1..m3.
REQUESTS06 = (Request("r0", "m1", prompt_tokens=170), Request("r1", "m4"))
PROFILES06 = {
    "harness": {"context.window": 200, "harness.keep_last": 1},
    "iris": {"context.window": 200, "context.prune_protect_turns": 0},
}


class OfflineSummary:
    """The seed's offline client as a summarizer: one fixed text, whatever it is given."""

    name = "offline"

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans: list[list[str]] = []

    def summarize(self, messages: Sequence[Message], previous, *, summary_id: str, before_request_id=None) -> Summary:
        self.spans.append([m.id for m in messages])
        return Summary(summary_id, messages[0].id, messages[-1].id, self.text, before_request_id=before_request_id,
                       source="offline")


def _seed_thread(recorded: str | None = None) -> Thread:
    summaries = () if recorded is None else (Summary("s06", "m1", "m3", recorded, before_request_id="r1"),)
    return Thread("seed06", messages=LOSS_PROBE06, requests=REQUESTS06, summaries=summaries)


def _replayed(profile: str, text: str):
    thread = _seed_thread()
    summarizer = OfflineSummary(text)
    result = replay(thread, Config.for_profile(profile, PROFILES06[profile]), summarizer=summarizer)
    assert summarizer.spans == [["m1", "m2", "m3"]]
    return thread, result


def _visibility(result) -> list[tuple[str, str | None, str | None]]:
    return [(s.visibility, s.block_id, s.summary_id) for s in result.requests]


@pytest.mark.parametrize("profile", ["harness", "iris"])
def test_seed_planted_correction_lossy_summary_loses_it(profile):
    thread, result = _replayed(profile, LOSSY06)
    (found,) = probe(thread, result, [CORRECTION06])
    summary_id = result.timeline[1].compaction.summary_id
    assert summary_id not in {s.summary_id for s in found.requests}
    assert _visibility(found) == [("verbatim", "m1", None), ("absent", None, None)]
    assert found.lost_at == 1 and found.to_json()["lost_at_request_id"] == "r1"
    assert found.requests[0].status == "kept"
    # And loss says the same: the planted instruction is a lost fact of m1.
    (loss,) = compaction_losses(thread, result)
    assert [(f.fact.kind, f.fact.text, f.fact.message_id) for f in loss.fates if f.fact.kind is FactKind.INSTRUCTION
            ] == [(FactKind.INSTRUCTION, CORRECTION06, "m1")]
    assert not any(f.survived for f in loss.fates)


@pytest.mark.parametrize("profile", ["harness", "iris"])
def test_seed_planted_correction_faithful_summary_keeps_it(profile):
    thread, result = _replayed(profile, FAITHFUL06)
    correction, test_id = probe(thread, result, [CORRECTION06, "test_parser.py::test_fixture"])
    summary_id = result.timeline[1].compaction.summary_id
    assert _visibility(correction) == [("verbatim", "m1", None), ("summary", None, summary_id)]
    assert correction.lost_at is None
    # The failing test id appears only after r0 (m3 comes later), then lives on in the summary.
    assert _visibility(test_id) == [("absent", None, None), ("summary", None, summary_id)]
    assert test_id.first_seen == 1 and test_id.lost_at is None
    (loss,) = compaction_losses(thread, result)
    assert all(f.survived for f in loss.fates) and loss.fates


@pytest.mark.parametrize("profile", ["harness", "iris"])
@pytest.mark.parametrize(("summary", "lost_at"), [(LOSSY06, 1), (FAITHFUL06, None)])
def test_seed_planted_correction_in_a_recorded_summary(profile, summary, lost_at):
    thread = _seed_thread(recorded=summary)
    never = OfflineSummary("not used")
    result = replay(thread, Config.for_profile(profile, PROFILES06[profile]), summarizer=never,
                    follow_recorded=True)
    assert never.spans == []
    (found,) = probe(thread, result, [CORRECTION06])
    assert found.lost_at == lost_at
    assert found.requests[1].summary_id == (None if lost_at else "s06")
    (loss,) = compaction_losses(thread, result)
    assert loss.summary_id == "s06" and loss.source == "recorded" and loss.message_ids == ("m1", "m2", "m3")


def test_a_failed_request_shows_nothing_and_is_not_where_the_text_was_lost():
    thread = Thread("f", messages=(
        Message("u1", Role.USER, "Always run ruff."),
        Message("a1", Role.ASSISTANT, "ok"),
        Message("u2", Role.USER, "x" * 4000),
    ))
    result = replay(thread, Config.for_profile("iris", {"context.window": 1000}), summarizer=OfflineSummary(""))
    assert [r.failed for r in result.timeline] == [False, True]
    (found,) = probe(thread, result, ["always run ruff"])
    assert [(s.visibility, s.status) for s in found.requests] == [("verbatim", "kept"), ("absent", "failed")]
    assert found.lost_at is None


def test_a_path_lives_on_in_a_summary_by_its_directory_and_base_name():
    thread = Thread("p", messages=LOSS_PROBE06[:3] + (Message("m3", Role.USER, "edit /repo/src/app.py"),
                                                      Message("m4", Role.USER, "go on")),
                    requests=(Request("r0", "m3", prompt_tokens=170), Request("r1", "m4")))
    config = Config.for_profile("harness", PROFILES06["harness"])
    result = replay(thread, config, summarizer=OfflineSummary("Files: src/app.py"))
    (found,) = probe(thread, result, ["/repo/src/app.py"])
    assert [s.visibility for s in found.requests] == ["verbatim", "summary"]


# ---------------------------------------------------------------------------
# The commands
# ---------------------------------------------------------------------------


def _db(tmp_path, summary: str) -> str:
    thread = _seed_thread(recorded=summary)
    thread = Thread(thread.id, messages=thread.messages, requests=thread.requests, summaries=thread.summaries,
                    window=200)
    src = tmp_path / "seed.json"
    src.write_text(json.dumps(export_native([thread])))
    db = tmp_path / "seed.sqlite"
    result = CliRunner().invoke(main, ["import", str(src), "--db", str(db)])
    assert result.exit_code == 0, result.output
    return str(db)


CLI_SETS = {"harness": ["--set", "harness.keep_last=1"], "iris": ["--set", "context.prune_protect_turns=0"]}


@pytest.mark.parametrize("mode", ["recorded", "decide"])
@pytest.mark.parametrize("profile", ["harness", "iris"])
@pytest.mark.parametrize(("summary", "lost_at"), [(LOSSY06, 1), (FAITHFUL06, None)])
def test_seed_probe_command_json(tmp_path, profile, summary, lost_at, mode):
    """Recorded: the replay follows the recorded compaction; decide: the profile decides it (at the
    same request, over the same span) and reuses the recorded summary of exactly that span."""
    db = _db(tmp_path, summary)
    result = CliRunner().invoke(main, ["probe", "--thread", "seed06", "--db", db, "--profile", profile,
                                       *CLI_SETS[profile], "--compactions", mode, CORRECTION06, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["format"] == "context-inspector/probe-v1" and data["profile"] == profile
    assert data["compaction_mode"] == mode
    (found,) = data["probes"]
    assert found["text"] == CORRECTION06 and found["lost_at"] == lost_at and found["messages"] == ["m1"]
    assert [{k: r[k] for k in ("request_id", "index", "visibility", "block_id", "summary_id")}
            for r in found["requests"]] == [
        {"request_id": "r0", "index": 0, "visibility": "verbatim", "block_id": "m1", "summary_id": None},
        {"request_id": "r1", "index": 1, "visibility": "absent" if lost_at else "summary", "block_id": None,
         "summary_id": None if lost_at else "s06"},
    ]


def test_seed_probe_command_text(tmp_path):
    db = _db(tmp_path, LOSSY06)
    result = CliRunner().invoke(main, ["probe", "--thread", "seed06", "--db", db, CORRECTION06, "app.py"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        'probe "never edit the test fixtures": in m1',
        "  request 1: verbatim in m1 (kept)",  # numbered from 1, as simulate's text and the TUI say
        "  request 2: absent",
        "  lost at request 2 (index 1, r1)",
        'probe "app.py": in no message',
        "  request 1: absent",
        "  request 2: in summary s06",
        "  never lost",
    ]


@pytest.mark.parametrize(("summary", "survived"), [(LOSSY06, False), (FAITHFUL06, True)])
def test_seed_loss_command_json(tmp_path, summary, survived):
    db = _db(tmp_path, summary)
    result = CliRunner().invoke(main, ["loss", "--thread", "seed06", "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["format"] == "context-inspector/loss-v1" and data["threads"] == ["seed06"]
    (compaction,) = data["compactions"]
    assert compaction["summary_id"] == "s06" and compaction["source"] == "recorded"
    assert compaction["profile"] == "iris" and data["profile"] is None
    assert compaction["facts"] == [
        {"kind": "instruction", "text": CORRECTION06, "message_id": "m1", "survived": survived},
        {"kind": "path", "text": "test_parser.py", "message_id": "m3", "survived": survived},
        {"kind": "error", "text": "test_parser.py::test_fixture", "message_id": "m3", "survived": survived},
    ]
    assert data["totals"]["instruction"] == {"facts": 1, "survived": int(survived), "lost": 1 - survived,
                                             "unknown": 0, "rate": float(survived)}
    assert set(data["totals"]) == {"path", "command", "error", "identifier", "url", "number", "instruction"}


def test_loss_command_needs_a_thread_or_all(tmp_path):
    db = _db(tmp_path, LOSSY06)
    for args in ([], ["--thread", "seed06", "--all"]):
        result = CliRunner().invoke(main, ["loss", "--db", db, *args])
        assert result.exit_code == 2 and "give --thread ID or --all" in result.output
    result = CliRunner().invoke(main, ["loss", "--db", db, "--thread", "nope"])
    assert result.exit_code == 2 and "nope" in result.output and "Traceback" not in result.output


def test_probe_command_shows_hostile_text_literally(tmp_path):
    db = _db(tmp_path, LOSSY06)
    result = CliRunner().invoke(main, ["probe", "--thread", "seed06", "--db", db, "\x1b[31mred\x1b]0;title\x07"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output and "red" in result.output


def test_shifting_truncate_drops_the_correction_and_summarize_keeps_it_in_its_summary():
    from inspector.summarizers.extractive import ExtractiveSummarizer

    messages = [Message("u0", Role.USER, "Never edit the test fixtures. " + "x " * 200)]
    for i in range(1, 8):
        messages += [Message(f"a{i}", Role.ASSISTANT, "ok " * 150), Message(f"u{i}", Role.USER, f"next {i} " + "y " * 150)]
    thread = Thread("shift", messages=tuple(messages))
    results = {}
    for strategy in ("truncate", "summarize"):
        config = Config.for_profile("shifting", {"context.window": 1200, "context.strategy": strategy,
                                                 "context.response_reserve": 0})
        result = replay(thread, config, summarizer=ExtractiveSummarizer())
        (found,) = probe(thread, result, [CORRECTION06])
        results[strategy] = found
        gone = found.requests[found.lost_at if found.lost_at is not None else -1]  # where lost, else the last
        assert found.requests[0].visibility == "verbatim" and found.requests[0].block_id == "u0"
        if strategy == "summarize":
            sent = {sid for r in result.timeline for sid in r.summaries_injected}
            assert gone.visibility == "summary" and gone.summary_id in sent
    truncated, summarized = results["truncate"], results["summarize"]
    assert truncated.lost_at is not None and summarized.lost_at is None
    # Where truncate loses it, summarize shows it in the summary of the excluded history.
    assert summarized.requests[truncated.lost_at].visibility == "summary"


@pytest.mark.parametrize("profile", ["harness", "iris"])
def test_seed_probe_without_a_recorded_summary_in_both_modes(tmp_path, profile):
    """No recorded compaction to follow: both modes let the profile decide, and the extractive
    summary it writes keeps the correction."""
    thread = Thread("seed06", messages=LOSS_PROBE06, requests=REQUESTS06, window=200)
    src = tmp_path / "seed.json"
    src.write_text(json.dumps(export_native([thread])))
    db = str(tmp_path / "seed.sqlite")
    assert CliRunner().invoke(main, ["import", str(src), "--db", db]).exit_code == 0
    seen = {}
    for mode in ("recorded", "decide"):
        result = CliRunner().invoke(main, ["probe", "--thread", "seed06", "--db", db, "--profile", profile,
                                           *CLI_SETS[profile], "--compactions", mode, CORRECTION06, "--json"])
        assert result.exit_code == 0, result.output
        (found,) = json.loads(result.output)["probes"]
        seen[mode] = [(r["visibility"], r["block_id"]) for r in found["requests"]]
        assert found["lost_at"] is None
        loss = json.loads(CliRunner().invoke(main, ["loss", "--thread", "seed06", "--db", db, "--profile", profile,
                                                    *CLI_SETS[profile], "--compactions", mode, "--json"]).output)
        (compaction,) = loss["compactions"]
        assert compaction["source"] == "extractive" and compaction["compaction_mode"] == mode
        assert [f["survived"] for f in compaction["facts"] if f["kind"] == "instruction"] == [True]
        assert seen[mode] == [("verbatim", "m1"), ("summary", None)]


class _AuditsOnly:
    """The same replay read only through its blocks (no `message_statuses`)."""

    def __init__(self, replay) -> None:
        self._replay = replay

    def simulation(self, *, blocks: bool = True, priced: bool = True):
        return self._replay.simulation(blocks=blocks)

    def audit(self, index: int):
        return self._replay.audit(index)


def _busy_thread() -> Thread:
    from inspector.model import ToolCall

    messages = [Message("s0", Role.SYSTEM, "contract: never push")]
    requests = []
    for turn in range(1, 13):
        messages += [
            Message(f"u{turn}", Role.USER, f"Turn {turn}: never edit fixture{turn % 3}.json. " + "w " * (40 * turn)),
            Message(f"a{turn}", Role.ASSISTANT, f"running check_{turn % 4}",
                    tool_calls=(ToolCall(f"c{turn}", "Bash", {"command": f"pytest tests/t{turn % 4}.py"}),)),
            Message(f"t{turn}", Role.TOOL, f"output of tests/t{turn % 4}.py " + "o " * (120 * (turn % 5)),
                    tool_call_id=f"c{turn}"),
        ]
        requests.append(Request(f"r{turn}", f"u{turn}", prompt_tokens=90 * turn * turn))
    return Thread("busy", messages=tuple(messages), requests=tuple(requests))


@pytest.mark.parametrize(("profile", "values"), [
    ("iris", {"context.window": 3000, "context.compaction_threshold": 0.4}),
    ("iris", {"context.window": 1200, "context.compaction_threshold": 0.9}),  # pruning, budget and failures
    ("harness", {"context.window": 3000, "context.compaction_threshold": 0.5, "harness.pruning_threshold": 0.6}),
    ("harness", {"context.window": 900, "harness.keep_last": 1}),
    ("harness", {"context.window": 1500, "context.compaction_threshold": 0.99, "context.trigger_tokens": "estimated"}),
    ("shifting", {"context.window": 1500, "context.strategy": "summarize"}),
])
def test_probes_read_from_the_replayer_equal_probes_read_from_the_blocks(profile, values):
    from inspector.summarizers.extractive import ExtractiveSummarizer

    thread = _busy_thread()
    result = replay(thread, Config.for_profile(profile, values), summarizer=ExtractiveSummarizer())
    texts = ["never edit fixture1.json", "tests/t2.py", "pytest tests/t3.py", "never push", "check_0", "absent text"]
    fast = probe(thread, result, texts)
    assert fast == probe(thread, _AuditsOnly(result), texts)
    statuses = {s.status for r in fast for s in r.requests}
    assert "kept" in statuses
