"""The claude-code profile's rules by CLI version, on small made-up threads (chars4: a token is 4
characters; no recorded counts unless said, so the calibration is the identity)."""

from __future__ import annotations

import pytest

from inspector.config import Config, thread_values
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall
from inspector.pipeline import replay
from inspector.pipeline.profiles.claude_code_versions import RULES, chars_per_token, model_family, rules_for
from inspector.tokens import Chars4Tokenizer, TokenCounter
from tests.helpers import CountingSummarizer


def _replay(thread, config, mode="decide"):
    return replay(thread, config, counter=TokenCounter(Chars4Tokenizer()), summarizer=CountingSummarizer(),
                  follow_recorded=mode == "recorded")


def _config(thread, **values):
    return Config.for_profile("claude-code", {**thread_values(thread, "claude-code"), **values})


def _calls(n: int, *, out_chars=400, output_tokens=None, prompt=None, summaries=(), meta=None) -> Thread:
    """n model calls: each answers with one tool call whose result has `out_chars` characters."""
    msgs = [Message("u0", Role.USER, "start " * 10)]
    reqs = []
    for k in range(n):
        reqs.append(Request(f"q{k}", msgs[-1].id, prompt_tokens=prompt(k) if prompt else None,
                            output_tokens=output_tokens))
        msgs.append(Message(f"a{k}", Role.ASSISTANT, "ok", tool_calls=(ToolCall(f"c{k}", "Bash", {"command": "ls"}),)))
        msgs.append(Message(f"r{k}", Role.TOOL, "x" * out_chars, tool_call_id=f"c{k}"))
    return Thread(id="t", source="claude-code", messages=tuple(msgs), requests=tuple(reqs), summaries=tuple(summaries),
                  meta=meta or {})


# -- the table ------------------------------------------------------------------------------------

def test_each_version_takes_the_rules_of_its_range():
    names = {v: rules_for(v).name for v in ("1.0.98", "2.0.76", "2.1.1", "2.1.2", "2.1.7", "2.1.8", "2.1.20", "2.1.21",
                                            "2.1.29", "2.1.30", "2.1.74", "2.1.75", "2.1.104", "2.1.105", "2.1.176",
                                            "2.1.332")}
    assert names["1.0.98"] == names["2.1.1"] == "claude-code up to 2.1.1"
    assert names["2.1.2"] == names["2.1.7"] == "claude-code 2.1.2+"
    assert names["2.1.8"] == names["2.1.20"] == "claude-code 2.1.8+"
    assert names["2.1.21"] == names["2.1.29"] == "claude-code 2.1.21+"
    assert names["2.1.30"] == names["2.1.74"] == "claude-code 2.1.30+"
    assert names["2.1.176"] == names["2.1.332"] == RULES[-1].name
    assert rules_for(None) is rules_for("not a version") is RULES[-1]  # nothing recorded: the newest
    assert [r.since for r in RULES] == sorted(r.since for r in RULES)
    assert rules_for("2.1.20").output_reserve == 32_000 and rules_for("2.1.21").output_reserve == 20_000
    assert not rules_for("2.1.1").counts_appended and rules_for("2.1.2").counts_appended
    assert rules_for("2.1.7").final_output and not rules_for("2.1.8").final_output and rules_for("2.1.30").final_output
    assert not rules_for("2.1.74").auto_compact_window and rules_for("2.1.75").auto_compact_window


def test_the_cli_counts_newer_models_at_three_characters_per_token():
    assert model_family("claude-opus-4-5-20251101") == "claude-opus-4-5"
    assert model_family("claude-sonnet-4-20250514") == "claude-sonnet-4-0"
    newest = RULES[-1]
    assert chars_per_token(newest, "claude-sonnet-4-6") == 4
    assert chars_per_token(newest, "claude-opus-4-7") == 3
    assert chars_per_token(rules_for("2.1.139"), "claude-opus-4-7") == 4  # before 2.1.140 every model: 4


# -- the threshold ---------------------------------------------------------------------------------

def test_a_thread_of_mixed_versions_takes_each_requests_own_threshold():
    thread = _calls(6, meta={"version": "2.1.19", "versions": [["q0", "2.1.19"], ["q3", "2.1.37"]]})
    r = _replay(thread, _config(thread))
    thresholds = [a.stats["compaction_threshold_tokens"] for a in r.timeline]
    assert thresholds == [155_000] * 3 + [167_000] * 3
    sim = r.simulation(blocks=False)
    out = sim.to_json(timeline=True)
    assert out["rules"] == "claude-code 2.1.8+"
    assert [(row["index"], row.get("rules")) for row in out["requests"] if "rules" in row] == [(3, "claude-code 2.1.30+")]
    # an edited reserve is the user's: every request takes it
    edited = _replay(thread, _config(thread, **{"claude_code.output_reserve": 10_000}))
    assert {a.stats["compaction_threshold_tokens"] for a in edited.timeline} == {200_000 - 10_000 - 13_000}


def test_the_auto_compact_window_is_read_from_cli_2_1_75():
    old = _calls(2, meta={"version": "2.1.74"})
    new = _calls(2, meta={"version": "2.1.75"})
    for thread, expected in ((old, 167_000), (new, 150_000 - 20_000 - 13_000)):
        r = _replay(thread, _config(thread, **{"claude_code.auto_compact_window": 150_000}))
        assert r.timeline[0].stats["compaction_threshold_tokens"] == expected
    small = _replay(new, _config(new, **{"claude_code.auto_compact_window": 20_000}))  # the CLI holds it to 100k+
    assert small.timeline[0].stats["compaction_threshold_tokens"] == 100_000 - 33_000


def test_a_thread_billed_over_200k_ran_on_the_1m_window():
    thread = _calls(3, prompt=lambda k: 150_000 + 60_000 * k, meta={"version": "2.1.37"})
    assert thread_values(thread, "claude-code")["context.window"] == 1_000_000
    r = _replay(thread, _config(thread))
    assert r.timeline[0].stats["compaction_threshold_tokens"] == 967_000


# -- what the trigger reads -------------------------------------------------------------------------

@pytest.mark.parametrize("version, adds_output, adds_appended", [
    ("2.0.76", "final", False),    # the usage only, its final output
    ("2.1.7", "final", True),
    ("2.1.19", "recorded", True),  # the first chunk's output count, as the transcript has it
    ("2.1.37", "final", True),
])
def test_the_trigger_reads_what_that_version_reads(version, adds_output, adds_appended):
    """Estimated trigger (no calibration): the previous prompt, plus the previous call's output as the
    CLI held it, plus round(characters / 4) of the tool result that followed where the CLI counts it."""
    thread = _calls(4, out_chars=402, output_tokens=3, meta={"version": version})
    r = _replay(thread, _config(thread))
    steps = r._fast.steps
    for k in range(1, 4):
        a, prev = r.timeline[k], r.timeline[k - 1]
        response = thread.messages[2 * k - 1]
        size = -(-len(response.text_for_count()) // 4)  # its rough size (bytes / 4): the final output's estimate
        output = 3 if adds_output == "recorded" else max(size, 3) if size > 2 * 3 else 3
        expected = prev.budget.prompt_tokens + output + ((402 + 2) // 4 if adds_appended else 0)  # Math.round
        assert a.budget.trigger_tokens == expected == prev.budget.prompt_tokens + steps.added[k], (version, k)
        assert a.budget.trigger_source == "estimated"


# -- manual compactions --------------------------------------------------------------------------

def test_a_manual_compaction_is_replayed_where_the_user_made_it_in_both_modes():
    manual = Summary("s-manual", "u0", "r2", "what the user kept", before_request_id="q3", meta={"trigger": "manual"})
    thread = _calls(8, summaries=(manual,), meta={"version": "2.1.19"})
    for mode in ("decide", "recorded"):
        r = _replay(thread, _config(thread), mode)
        compactions = [(a.index, a.compaction.trigger, a.compaction.manual) for a in r.timeline if a.compaction]
        assert compactions == [(3, "manual", True)], mode
        row = r.simulation(blocks=False).to_json(timeline=True)["requests"][3]
        assert row["compaction"]["manual"] is True and row["compaction"]["summary_id"] == "s-manual"
    # an automatic one is the profile's to decide: a low threshold decides its own, the recorded one is not followed
    auto = Summary("s-auto", "u0", "r2", "x", before_request_id="q3", meta={"trigger": "auto"})
    decided = _replay(_calls(8, summaries=(auto,)), _config(thread), "decide")
    assert not any(a.compaction for a in decided.timeline)


# -- the preserved tail (CLI 2.1.146+) -------------------------------------------------------------

def test_where_compactions_kept_a_tail_the_replays_own_keep_the_last_call():
    kept = Summary("s0", "u0", "r0", "s", before_request_id="q1", meta={"trigger": "auto", "preserved": ["a1"]})
    config = {"claude_code.output_reserve": 0, "claude_code.autocompact_buffer": 0,
              "context.window": 1_000}
    for version, keeps in (("2.1.146", True), ("2.1.141", False)):
        thread = _calls(12, summaries=(kept,), meta={"version": version})
        r = _replay(thread, Config.for_profile("claude-code", config))
        own = [a for a in r.timeline if a.compaction is not None and a.compaction.summary_id != "s0"]
        assert own, version
        for a in own:
            last = thread.message_index()[a.compaction.last_message_id]
            end = thread.message_index()[a.after_message_id]
            assert (last == end - 2) is keeps, (version, a.index)  # the last call and its result stay
            if keeps:
                audit = r.audit(a.index)
                sent = {b.message_id for b in audit.blocks if b.status == "kept"}
                assert {thread.messages[end - 1].id, thread.messages[end].id} <= sent


# -- what a compaction re-attaches -----------------------------------------------------------------

def _file_session(*calls: tuple[str, dict, dict | None]) -> tuple[list[Message], list[int]]:
    """A session of tool calls (name, arguments, toolUseResult), one request after each result."""
    msgs, ends = [Message("u", Role.USER, "go")], []
    for n, (name, args, result) in enumerate(calls):
        msgs.append(Message(f"a{n}", Role.ASSISTANT, "", tool_calls=(ToolCall(f"c{n}", name, args),)))
        msgs.append(Message(f"r{n}", Role.TOOL, "done", tool_call_id=f"c{n}",
                            meta={"toolUseResult": result} if result is not None else {}))
        ends.append(len(msgs) - 1)
    return msgs, ends


def test_a_compaction_re_attaches_the_recent_files_up_to_5000_tokens_each():
    from inspector.pipeline.profiles.claude_code_reattach import Reattached, numbered_length

    small, big = "line\n" * 100, "x" * 30_000  # 100 short lines; one line of 30,000 characters (over the cap)
    msgs, ends = _file_session(
        ("Write", {"file_path": "/a.py", "content": small}, None),
        ("Read", {"file_path": "/big.txt"}, {"file": {"content": big, "numLines": 1, "totalLines": 1}}),
        ("Edit", {"file_path": "/a.py"}, {"originalFile": small, "oldString": "line", "newString": "row!"}),
        ("TodoWrite", {"todos": [{"content": "finish", "status": "in_progress"}]}, None),
        ("Bash", {"command": "git checkout main"}, None),
    )
    att = Reattached(msgs, ends)
    assert att.at(0).tokens == round(numbered_length(small) / 4) and att.at(0).uncertain == 0
    # the big file comes back as its path; the written file is edited once (one line longer)
    edited = small.replace("line", "row!", 1)
    assert att.at(2).tokens == round(numbered_length(edited) / 4) + 20
    todo = att.at(3).tokens - att.at(2).tokens
    assert 0 < todo < 20
    # a checkout after them: which files come back (by modification time) is in no record
    assert att.at(4).uncertain == att.at(2).tokens and att.at(4).tokens == att.at(3).tokens - att.at(2).tokens // 2
