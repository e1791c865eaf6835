"""Survival: a fact is found in the summary after normalisation, or it is lost."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.config import Config
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall
from inspector.pipeline import replay
from inspector.pipeline.facts import Fact, FactKind, extract_facts
from inspector.pipeline.survival import compaction_losses, survival_table, survives
from inspector.pipeline.textmatch import normalise
from inspector.summarizers.extractive import ExtractiveSummarizer

P, C, E, ID, U, N, R = (FactKind.PATH, FactKind.COMMAND, FactKind.ERROR, FactKind.IDENTIFIER, FactKind.URL,
                       FactKind.NUMBER, FactKind.INSTRUCTION)


def _f(kind: FactKind, text: str) -> Fact:
    return Fact(kind, text, "m1")


def test_case_quotes_and_whitespace_are_normalised():
    assert survives(_f(R, "Don’t touch the \"fixtures\"  dir"), "- don't touch the 'fixtures' dir.")
    assert survives(_f(C, 'grep -r "TODO" src'), "ran `grep -r 'todo' src`")
    assert not survives(_f(R, "never edit the test fixtures"), "- inspected app.py\n- pending work remains")


def test_backticks_do_not_make_a_kept_instruction_lost():
    """Issue 22 item 8: the summary says it without the backticks (or with them, the other way round)."""
    assert survives(_f(R, "don't touch `config.py`"), "The user said: don't touch config.py.")
    assert survives(_f(R, "never run rm -rf"), "Rule: never run `rm -rf`.")


def test_a_path_survives_relative_to_the_cwd_by_a_unique_file_name_and_a_directory_through_a_path_in_it():
    """Issue 22 item 8 on one small span (cwd /work/cli): the summary "Read README.md, strategy.go,
    config.go, main.go" keeps `.../strategy/strategy.go` (the only strategy.go of the span), the
    session's own `main.go` (`/work/cli/main.go`, named relative to the cwd) and the directory
    `strategy.go` lies in; not `config.go` or `cmd/main.go`, whose file names two paths of the span
    share, nor a directory nothing kept lies in."""
    from inspector.pipeline.survival import judge

    names = ["/work/cli/cmd/entire/cli/strategy/strategy.go", "/work/cli/main.go", "/work/cli/cmd/main.go",
             "/work/cli/a/config.go", "/work/cli/b/config.go", "/work/cli/cmd/entire/cli/strategy",
             "/work/cli/docs", "README.md"]
    facts = [_f(P, n) for n in names]
    summary = "Read README.md, strategy.go, config.go, main.go."
    fates = judge(facts, summary, cwd="/work/cli")
    assert [f.survived for f in fates] == [True, True, False, False, False, True, False, True]
    # without the cwd, main.go is a name two paths share: neither is kept
    assert [f.survived for f in judge(facts, summary)] == [True, False, False, False, False, True, False, True]


def test_words_match_whole():
    assert not survives(_f(ID, "parse"), "parse_line was renamed")
    assert survives(_f(ID, "parse_line"), "parse_line() was renamed")
    assert not survives(_f(N, "5s"), "a 15s timeout")


def test_path_by_separators_or_by_its_directory_and_base_name():
    assert survives(_f(P, "src\\app.py"), "edited src/app.py.")
    assert survives(_f(P, "/home/me/proj/src/app.py"), "Files: src/app.py, tests/x.py")
    assert survives(_f(P, "./src/app.py"), "see /repo/src/app.py")
    assert not survives(_f(P, "/home/me/proj/src/app.py"), "Files: app.py")  # base name alone is not enough
    assert not survives(_f(P, "src/app.py"), "Files: src/myapp.py and src/app.pyc")
    assert survives(_f(P, "app.py"), "Files: src/app.py")


def test_numbers_with_or_without_the_space_and_the_commas():
    assert survives(_f(N, "155,979 tokens"), "at 155979 tokens")
    assert survives(_f(N, "1.5 GB"), "used 1.5GB")
    assert survives(_f(N, "30s"), "a 30 s timeout")
    assert not survives(_f(N, "30s"), "a 30 ms timeout")


def test_url_with_or_without_its_trailing_slash():
    assert survives(_f(U, "https://example.com/docs/"), "docs at https://example.com/docs")
    assert not survives(_f(U, "https://example.com/docs"), "docs at https://example.com/doc")


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(list(FactKind)),
       # a fact has some text left once quotes and backticks are read away (the extractor gives no other)
       st.text(min_size=1, max_size=40).filter(lambda t: t.strip() and normalise(t.strip())))
def test_a_fact_survives_a_summary_that_quotes_it(kind, text):
    fact = _f(kind, text.strip())
    assert survives(fact, f"Kept: {fact.text} \n")
    assert survives(fact, f"Kept: {fact.text.upper()} \n") or fact.text.upper().casefold() != fact.text.casefold()


# ---------------------------------------------------------------------------
# Per compaction, on a replay
# ---------------------------------------------------------------------------


def _thread() -> Thread:
    messages = [Message("s0", Role.SYSTEM, "system contract")]
    requests = []
    for turn in range(1, 7):
        messages += [
            Message(f"u{turn}", Role.USER, f"Step {turn}: edit src/mod{turn}.py. Never touch tests/fixture{turn}.json."),
            Message(f"a{turn}", Role.ASSISTANT, f"Running `check_{turn}()`.",
                    tool_calls=(ToolCall(f"c{turn}", "Bash", {"command": f"pytest -q tests/test_{turn}.py"}),)),
            Message(f"t{turn}", Role.TOOL, f"FAILED tests/test_{turn}.py::test_case - KeyError: 'k{turn}'",
                    tool_call_id=f"c{turn}"),
        ]
        requests.append(Request(f"r{turn}", f"u{turn}", prompt_tokens=100 + 200 * turn))
    return Thread("t", messages=tuple(messages), requests=tuple(requests))


def test_compactions_of_a_replay_judge_the_facts_of_their_own_span():
    thread = _thread()
    config = Config.for_profile("iris", {"context.window": 1000, "context.compaction_threshold": 0.5})
    result = replay(thread, config, summarizer=ExtractiveSummarizer())
    losses = compaction_losses(thread, result)
    assert losses, "the config must compact"
    by_id = {s.id: s for s in result.summaries}
    spans = set()
    for loss in losses:
        summary = by_id[loss.summary_id]
        assert loss.source == "extractive"
        assert result.timeline[loss.request_index].compaction.summary_id == loss.summary_id
        assert not spans & set(loss.message_ids)  # each message is summarized once
        spans |= set(loss.message_ids)
        span = [m for m in thread.messages if m.id in loss.message_ids]
        assert [f.fact for f in loss.fates] == list(extract_facts(span))
        for fate in loss.fates:
            assert fate.survived == survives(fate.fact, summary.injected_text())
    table = survival_table(losses)
    assert sum(c.facts for c in table.values()) == sum(len(loss.fates) for loss in losses)
    # The extractive summary keeps the user's corrections.
    assert table[FactKind.INSTRUCTION].facts > 0
    assert table[FactKind.INSTRUCTION].survived == table[FactKind.INSTRUCTION].facts


def test_a_recorded_summary_is_judged_on_its_own_text():
    thread = _thread()
    summary = Summary("rec-1", "u1", "t2", "Worked on src/mod1.py; never touch tests/fixture1.json.",
                      before_request_id="r4")
    thread = Thread(thread.id, messages=thread.messages, requests=thread.requests, summaries=(summary,))
    config = Config.for_profile("iris", {"context.window": 100_000})
    result = replay(thread, config, summarizer=ExtractiveSummarizer(), follow_recorded=True)
    (loss,) = compaction_losses(thread, result)
    assert loss.summary_id == "rec-1" and loss.source == "recorded" and loss.request_index == 3
    assert loss.message_ids == ("u1", "a1", "t1", "u2", "a2", "t2")
    kept = {(f.fact.kind, f.fact.text) for f in loss.fates if f.survived}
    assert kept == {(P, "src/mod1.py"), (P, "tests/fixture1.json"), (R, "Never touch tests/fixture1.json")}
    lost = {f.text for f in loss.lost()}
    assert {"src/mod2.py", "pytest -q tests/test_1.py", "FAILED tests/test_2.py::test_case - KeyError: 'k2'", "check_2"} <= lost


class _Full:
    """A replay given as a finished Simulation (what the app wraps a full simulation in)."""

    def __init__(self, sim) -> None:
        self.sim = sim

    def simulation(self, *, blocks: bool = True, priced: bool = True):
        return self.sim

    def audit(self, index: int):
        return self.sim.requests[index]


def test_the_reference_replay_and_the_fast_one_lose_the_same_facts():
    from inspector.pipeline import simulate

    thread = _thread()
    for profile in ("iris", "harness"):
        config = Config.for_profile(profile, {"context.window": 1000, "context.compaction_threshold": 0.5})
        fast = compaction_losses(thread, replay(thread, config, summarizer=ExtractiveSummarizer()))
        reference = compaction_losses(thread, _Full(simulate(thread, config, summarizer=ExtractiveSummarizer())))
        assert fast and fast == reference


def test_summary_spans_of_the_fast_replayers_are_what_their_audits_mark_summarized():
    from inspector.pipeline.survival import covered_ids

    thread = _thread()
    recorded = Summary("rec-1", "u1", "t2", "recorded", before_request_id="r4")
    with_recorded = Thread(thread.id, messages=thread.messages, requests=thread.requests, summaries=(recorded,))
    cases = [
        (thread, "iris", {"context.window": 1000, "context.compaction_threshold": 0.5}, False),
        (thread, "iris", {"context.window": 1000, "context.compaction_threshold": 0.3,
                          "context.prune_protect_turns": 0}, False),
        (with_recorded, "iris", {"context.window": 100_000}, True),
        (thread, "harness", {"context.window": 1000, "context.compaction_threshold": 0.5}, False),
        (thread, "harness", {"context.window": 1000, "context.compaction_threshold": 0.3,
                             "harness.pruning_threshold": 0.35, "harness.keep_last": 1}, False),
    ]
    for subject, profile, values, follow in cases:
        result = replay(subject, Config.for_profile(profile, values), summarizer=ExtractiveSummarizer(),
                        follow_recorded=follow)
        spans = result.summary_spans()
        compactions = [r for r in result.timeline if r.compaction is not None]
        assert compactions and spans is not None
        by_id = {s.id: s for s in result.summaries}
        for request in compactions:
            summary = by_id[request.compaction.summary_id]
            assert spans[summary.id] == covered_ids(result.audit(request.index), summary, subject), (profile, values)
