"""The fast iris replayer against the plain reference: identical audits."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.config import Config
from inspector.examples import overflow_thread, walkthrough_thread
from inspector.model import Summary, Thread
from inspector.pipeline import ReplayContext
from inspector.pipeline.profiles.iris.replayer import IrisReplayer, replay
from inspector.tokens import Chars4Tokenizer, TokenCounter
from tests.engine.test_iris import configs, threads
from tests.helpers import CountingSummarizer
from tests.reference.iris import replay_reference


def _both(thread, config, follow_recorded=False):
    def ctx():
        return ReplayContext(TokenCounter(Chars4Tokenizer()), CountingSummarizer(), follow_recorded)

    ref, ref_chain = replay_reference(thread, config, ctx())
    fast, fast_chain = replay(thread, config, ctx())
    timeline = IrisReplayer(thread, config, ctx()).timeline()
    return ref, fast, timeline, ref_chain, fast_chain


def _assert_same(thread, config, follow_recorded=False):
    ref, fast, timeline, ref_chain, fast_chain = _both(thread, config, follow_recorded)
    assert [r.to_json() for r in fast] == [r.to_json() for r in ref]
    assert [r.timeline_json() for r in timeline] == [r.timeline_json() for r in ref]
    assert [r.stats for r in fast] == [r.stats for r in ref]
    # what to_json leaves out: the summary that covers each summarized block
    assert [[b.summary_id for b in r.blocks] for r in fast] == [[b.summary_id for b in r.blocks] for r in ref]
    assert fast_chain == ref_chain


def test_walkthrough_fast_equals_reference():
    _assert_same(walkthrough_thread(), Config.for_profile("iris"))


def test_walkthrough_what_if_fast_equals_reference():
    cfg = Config.for_profile("iris", {"context.compaction_threshold": 0.3, "context.prune_protect_turns": 1,
                                      "context.token_budget_ratio": 0.4, "summarization.max_injected": 1})
    _assert_same(walkthrough_thread(), cfg)


def test_overflow_fast_equals_reference():
    _assert_same(overflow_thread(), Config.for_profile("iris", {"context.window": 32_000}))


@settings(max_examples=150, deadline=None)
@given(threads(), configs)
def test_fast_equals_reference_on_random_threads(thread, config):
    _assert_same(thread, config)


@settings(max_examples=60, deadline=None)
@given(threads(), configs, st.data())
def test_fast_equals_reference_following_recorded_summaries(thread, config, data):
    users = [m for m in thread.messages if m.role == "user"]
    if len(users) >= 3 and thread.requests:
        last = data.draw(st.integers(0, len(thread.messages) - 1))
        req = data.draw(st.sampled_from(thread.requests))
        summary = Summary(id="rec", first_message_id=users[0].id, last_message_id=thread.messages[last].id,
                          summary="recorded " * 20, before_request_id=req.id)
        thread = Thread(id=thread.id, messages=thread.messages, requests=thread.requests, summaries=(summary,))
    _assert_same(thread, config, follow_recorded=True)
