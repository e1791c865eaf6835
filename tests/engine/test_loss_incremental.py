"""Incremental loss (`survival.LossMemo`): after an edit, only compactions whose span or summary
changed are judged again, and the result is the full recompute's, edit after edit."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.config import Config
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall
from inspector.pipeline import replay
from inspector.pipeline.survival import LossMemo, compaction_losses
from inspector.summarizers.extractive import ExtractiveSummarizer
from tests.hypothesis_budget import examples

_WORDS = ("src/mod{}.py", "tests/fixture{}.json", "timeout 30{} s", "Never touch docs/{}.md", "check_{}()",
          "https://example.com/p{}/", "1,20{} tokens", "KeyError: 'k{}'", "plain words {}")


def _thread(turns: int, picks: list[int], sizes: list[int], thread_id: str = "t") -> Thread:
    """A thread of `turns` turns whose texts name facts drawn from `picks` (so that spans share some)."""
    messages = [Message("s0", Role.SYSTEM, "system contract")]
    requests = []
    for turn in range(1, turns + 1):
        pick, size = picks[turn % len(picks)], sizes[turn % len(sizes)]
        fact = _WORDS[pick % len(_WORDS)].format(pick)
        other = _WORDS[(pick + turn) % len(_WORDS)].format(turn % 3)
        messages += [
            Message(f"u{turn}", Role.USER, f"Step {turn}: {fact}. Also {other}." + " filler" * size),
            Message(f"a{turn}", Role.ASSISTANT, f"Running `check_{turn % 4}()` on {other}.",
                    tool_calls=(ToolCall(f"c{turn}", "Bash", {"command": f"pytest -q tests/test_{turn % 5}.py"}),)),
            Message(f"t{turn}", Role.TOOL, f"FAILED tests/test_{turn}.py - {fact}" + " output" * (2 * size),
                    tool_call_id=f"c{turn}"),
        ]
        requests.append(Request(f"r{turn}", f"u{turn}", prompt_tokens=100 + 150 * turn + 20 * size))
    return Thread(thread_id, messages=tuple(messages), requests=tuple(requests), meta={"cwd": "/work/repo"})


_PROFILES = {
    "iris": ("context.compaction_threshold", (0.3, 0.4, 0.5, 0.6, 0.7)),
    "harness": ("context.compaction_threshold", (0.3, 0.4, 0.5, 0.6, 0.7)),
    "claude-code": ("context.window", (1_200, 1_500, 2_000, 2_500, 3_000)),
    "opencode": ("context.window", (1_200, 1_500, 2_000, 2_500, 3_000)),
}


def _losses_along(thread: Thread, profile: str, window: int, values: list, memo: LossMemo) -> list:
    """(incremental, full) losses of each edit in turn, the memo carried from one to the next."""
    key, _ = _PROFILES[profile]
    out = []
    for value in values:
        config = Config.for_profile(profile, {"context.window": window, key: value})
        result = replay(thread, config, summarizer=ExtractiveSummarizer())
        out.append((compaction_losses(thread, result, memo=memo), compaction_losses(thread, result)))
    return out


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profile=st.sampled_from(sorted(_PROFILES)),
       turns=st.integers(4, 14),
       picks=st.lists(st.integers(0, 40), min_size=1, max_size=6),
       sizes=st.lists(st.integers(0, 30), min_size=1, max_size=4),
       edits=st.lists(st.integers(0, 4), min_size=2, max_size=5),
       window=st.sampled_from((1_000, 1_500, 2_500)))
def test_incremental_loss_is_the_full_recompute_after_every_edit(profile, turns, picks, sizes, edits, window):
    thread = _thread(turns, picks, sizes)
    values = [_PROFILES[profile][1][i] for i in edits]
    memo = LossMemo()
    for incremental, full in _losses_along(thread, profile, window, values, memo):
        assert incremental == full
    assert memo.judged + memo.reused == sum(len(full) for _, full in _losses_along(thread, profile, window, values,
                                                                                   LossMemo()))


def test_an_edit_judges_only_the_compactions_it_changed():
    """The companion: the memo is used (an edit that moves only the later compactions reuses the earlier
    ones; the same edit again judges nothing) and what it reuses is what a full recompute gives."""
    thread = _thread(14, [3, 7, 11], [4, 9, 2])
    memo = LossMemo()
    values = [0.5, 0.5, 0.6]
    first, again, other = _losses_along(thread, "iris", 2_000, values, memo)
    before, after = (_compaction_keys(thread, 2_000, v) for v in (0.5, 0.6))
    assert len(first[1]) == len(before) >= 3, "the config must compact several times"
    shared = len(before & after)
    assert 0 < shared < len(after)  # some compactions moved (and every later summary with them), some did not
    assert memo.judged == len(before) + len(after) - shared
    assert memo.reused == len(again[1]) + shared
    for incremental, full in (first, again, other):
        assert incremental == full


def _compaction_keys(thread: Thread, window: int, threshold: float) -> set:
    """(span, summary text) of each compaction of the iris replay (what the memo keys fates by)."""
    config = Config.for_profile("iris", {"context.window": window, "context.compaction_threshold": threshold})
    result = replay(thread, config, summarizer=ExtractiveSummarizer())
    texts = {s.id: s.injected_text() for s in result.summaries}
    return {(span, texts[summary_id]) for summary_id, span in result.summary_spans().items()}


def test_another_thread_with_the_same_ids_is_judged_afresh():
    """Two threads whose messages share their ids but not their texts: nothing of one is reused for the other."""
    one, two = _thread(10, [1], [3]), _thread(10, [2], [3], thread_id="t2")
    config = Config.for_profile("iris", {"context.window": 2_500, "context.compaction_threshold": 0.5})
    memo = LossMemo()
    for thread in (one, two, one):
        result = replay(thread, config, summarizer=ExtractiveSummarizer())
        assert compaction_losses(thread, result, memo=memo) == compaction_losses(thread, result)
    assert memo.reused == 0 and memo.judged > 0


def test_an_opaque_summary_is_keyed_by_what_the_agent_kept_beside_it():
    """Two replays whose only difference is the text kept verbatim beside an encrypted summary: the
    second is judged again (its facts' fates change), not reused."""
    base = _thread(6, [0], [1])
    fates = []
    memo = LossMemo()
    for kept in ("src/mod0.py", "nothing of note"):
        summary = Summary("rec-1", "u1", "t2", "", before_request_id="r4",
                          meta={"summary_encrypted": True,
                                "replacement_history": [{"type": "message", "content": kept}]})
        thread = Thread(base.id, messages=base.messages, requests=base.requests, summaries=(summary,))
        result = replay(thread, Config.for_profile("iris", {"context.window": 100_000}),
                        summarizer=ExtractiveSummarizer(), follow_recorded=True)
        (loss,) = compaction_losses(thread, result, memo=memo)
        assert (loss,) == compaction_losses(thread, result)
        fates.append({f.fact.text: f.survived for f in loss.fates})
    assert fates[0]["src/mod0.py"] is True and fates[1]["src/mod0.py"] is None


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profile=st.sampled_from(sorted(_PROFILES)),
       turns=st.integers(4, 12),
       picks=st.lists(st.integers(0, 40), min_size=1, max_size=4),
       sizes=st.lists(st.integers(0, 30), min_size=1, max_size=4),
       edit=st.integers(0, 4),
       window=st.sampled_from((1_000, 1_500, 2_500)))
def test_summary_spans_are_what_the_audits_mark_summarized(profile, turns, picks, sizes, edit, window):
    """The spans the memo keys by, read without building blocks, are the audits' (any thread, any edit)."""
    from inspector.pipeline.survival import covered_ids

    thread = _thread(turns, picks, sizes)
    key, values = _PROFILES[profile]
    result = replay(thread, Config.for_profile(profile, {"context.window": window, key: values[edit]}),
                    summarizer=ExtractiveSummarizer())
    spans = result.summary_spans()
    by_id = {s.id: s for s in result.summaries}
    expected = {}
    for request in result.timeline:
        if request.compaction is not None and request.compaction.summary_id in by_id:
            summary = by_id[request.compaction.summary_id]
            ids = covered_ids(result.audit(request.index), summary, thread)
            if ids:
                expected[summary.id] = ids
    assert spans is not None and {k: v for k, v in spans.items() if k in expected} == expected
    assert all(not v for k, v in spans.items() if k not in expected)
