"""The linear-time harness replayer against the seed-literal reference (`tests/reference/harness.py`): identical audits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.generate import generate_thread
from inspector.config import Config
from inspector.examples import demo_threads
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall
from inspector.pipeline import ReplayContext, replay
from inspector.pipeline.profiles.harness.replayer import HarnessReplayer
from inspector.summarizers.extractive import ExtractiveSummarizer
from inspector.tokens import Chars4Tokenizer, TokenCounter
from tests.helpers import CountingSummarizer
from tests.reference.harness import replay_reference


def _ctx(summarizer=None) -> ReplayContext:
    return ReplayContext(TokenCounter(Chars4Tokenizer()), summarizer or CountingSummarizer())


def _assert_same(thread: Thread, config: Config, summarizer_factory=CountingSummarizer) -> None:
    ref, ref_chain = replay_reference(thread, config, _ctx(summarizer_factory()))
    fast = HarnessReplayer(thread, config, _ctx(summarizer_factory()))
    timeline = fast.timeline()
    assert [r.timeline_json() for r in timeline] == [r.timeline_json() for r in ref]
    assert [fast.audit(k).to_json() for k in range(len(ref))] == [r.to_json() for r in ref]
    assert [fast.audit(k).stats for k in range(len(ref))] == [r.stats for r in ref]
    assert fast.chain == ref_chain


@st.composite
def harness_threads(draw) -> Thread:
    """Head system messages, chats, parallel and late (non-adjacent) tool results, recorded or
    derived requests, and sometimes a recorded summary."""
    msgs: list[Message] = []
    for h in range(draw(st.integers(0, 2))):
        msgs.append(Message(f"sys{h}", Role.SYSTEM, "s" * draw(st.integers(0, 300))))
    pending: list[str] = []  # call ids whose results come later
    for t in range(draw(st.integers(1, 10))):
        msgs.append(Message(f"u{t}", Role.USER, "u" * draw(st.integers(0, 500))))
        for a in range(draw(st.integers(0, 3))):
            calls = tuple(ToolCall(f"c{t}-{a}-{c}", "f", {"n": c}) for c in range(draw(st.integers(0, 2))))
            msgs.append(Message(f"a{t}-{a}", Role.ASSISTANT, "a" * draw(st.integers(0, 300)), tool_calls=calls))
            for call in calls:
                if draw(st.booleans()):
                    msgs.append(Message(f"r{call.id}", Role.TOOL, "r" * draw(st.integers(0, 1500)),
                                        tool_call_id=call.id))
                else:
                    pending.append(call.id)
            while pending and draw(st.booleans()):
                cid = pending.pop(0)
                msgs.append(Message(f"r{cid}", Role.TOOL, "late" * draw(st.integers(0, 200)), tool_call_id=cid))
    requests: tuple[Request, ...] = ()
    if draw(st.booleans()):
        chosen = sorted(set(draw(st.lists(st.integers(0, len(msgs) - 1), min_size=1, max_size=25))))
        requests = tuple(Request(f"q{i}", msgs[i].id, prompt_tokens=draw(st.none() | st.integers(0, 4000)))
                         for i in chosen)
    summaries: tuple[Summary, ...] = ()
    if len(msgs) > 3 and draw(st.booleans()):
        first, last = sorted(draw(st.lists(st.integers(0, len(msgs) - 1), min_size=2, max_size=2)))
        summaries = (Summary("rec", msgs[first].id, msgs[last].id, "recorded " * 30),)
    return Thread(id="h", messages=tuple(msgs), requests=requests, summaries=summaries)


harness_configs = st.builds(
    lambda w, r, c, p, k, trig: Config.for_profile("harness", {
        "context.window": w, "context.token_budget_ratio": r, "context.compaction_threshold": c,
        "harness.pruning_threshold": p, "harness.keep_last": k, "context.trigger_tokens": trig}),
    st.integers(200, 5000), st.floats(0.3, 1.0), st.floats(0.1, 1.0), st.floats(0.1, 1.0), st.integers(0, 5),
    st.sampled_from(["recorded", "estimated"]),
)


@settings(max_examples=300, deadline=None)
@given(harness_threads(), harness_configs)
def test_fast_equals_reference_on_random_threads(thread, config):
    _assert_same(thread, config)


def test_fast_equals_reference_on_the_demo_threads_under_pressure():
    for thread in demo_threads():
        for values in ({}, {"context.window": 8_000, "harness.pruning_threshold": 0.5},
                       {"context.window": 20_000, "context.compaction_threshold": 0.3, "harness.keep_last": 0}):
            _assert_same(thread, Config.for_profile("harness", values), ExtractiveSummarizer)


def test_fast_equals_reference_on_a_generated_long_thread():
    thread = generate_thread(600, seed=3)
    for values in ({"context.window": 60_000}, {"context.window": 30_000, "harness.pruning_threshold": 0.6}):
        _assert_same(thread, Config.for_profile("harness", values), ExtractiveSummarizer)


def test_the_replay_object_uses_it_for_harness():
    thread = generate_thread(200, seed=4)
    config = Config.for_profile("harness", {"context.window": 30_000})
    result = replay(thread, config, counter=TokenCounter(Chars4Tokenizer()), summarizer=ExtractiveSummarizer())
    assert type(result._fast).__name__ == "HarnessReplayer"
    ref, _ = replay_reference(thread, config, _ctx(ExtractiveSummarizer()))
    assert [r.timeline_json() for r in result.timeline] == [r.timeline_json() for r in ref]
    # The replayer's own audit (Replay.audit adds the prompt cache and cost on top).
    assert result._fast.audit(len(ref) - 1).to_json() == ref[-1].to_json()


def test_without_a_summarizer_it_fails_like_the_reference_only_when_it_must_compact():
    from tests.engine.test_harness import _chat_thread, _config

    config = _config(**{"context.window": 100})
    calm = _chat_thread([("r1", "u2", 10), ("r2", "u3", 10)])
    no_summarizer = ReplayContext(TokenCounter(Chars4Tokenizer()), None)
    assert len(HarnessReplayer(calm, config, no_summarizer).timeline()) == 2
    pressed = _chat_thread([("r1", "u2", 95), ("r2", "u3", 10)])
    with pytest.raises(ValueError, match="must compact before request 'r2' but no summarizer"):
        HarnessReplayer(pressed, config, no_summarizer).timeline()


def test_replays_on_one_counter_share_the_thread_facts_and_still_equal_the_reference():
    """The thread's facts are remembered per counter (every config edit replays the same thread):
    replays under several configs on one counter each equal the reference."""
    thread = generate_thread(500, seed=13)
    shared = _ctx(ExtractiveSummarizer())
    facts = []
    for values in ({"context.window": 60_000}, {"context.window": 20_000, "harness.keep_last": 2},
                   {"context.window": 30_000, "harness.pruning_threshold": 0.5}, {"context.window": 60_000}):
        config = Config.for_profile("harness", values)
        ref, ref_chain = replay_reference(thread, config, _ctx(ExtractiveSummarizer()))
        fast = HarnessReplayer(thread, config, shared)
        assert [fast.audit(k).to_json() for k in range(len(ref))] == [r.to_json() for r in ref]
        assert [[b.group for b in fast.audit(k).blocks] for k in range(0, len(ref), 25)] == \
            [[b.group for b in ref[k].blocks] for k in range(0, len(ref), 25)]
        assert fast.chain == ref_chain
        facts.append(fast.facts)
    assert all(f is facts[0] for f in facts)
    assert any(b.group is not None for b in fast.audit(len(ref) - 1).blocks)
