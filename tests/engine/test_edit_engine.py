"""A config edit's replay on the counter the previous edits used (what the replayer, the prompt-cache
model and the accounting remember per thread: the recorded prunes, the runs of summarized blocks)
against the same replay on a fresh counter, which remembers nothing: every request's timeline,
every request's blocks, each request's cache and cost and the totals, for several edits of the
window under the agents' profiles, in both compaction modes."""

from __future__ import annotations

import pytest

from bench.generate import generate_thread
from inspector.config import Config
from inspector.pipeline import replay
from inspector.pipeline.audit import BlockStatus
from inspector.pipeline.cache import Block, Prompt, with_lead
from inspector.service import load_prices
from inspector.summarizers.extractive import ExtractiveSummarizer
from inspector.tokens import Chars4Tokenizer, TokenCounter

THREAD = generate_thread(600, seed=28)
WINDOWS = (14_000, 9_000, 14_000)  # the last repeats the first: a replay on what an edit back remembers


def _replay(config, counter, mode):
    return replay(THREAD, config, counter=counter, summarizer=ExtractiveSummarizer(),
                  follow_recorded=mode == "recorded", prices=load_prices())


@pytest.mark.parametrize("profile", ["claude-code", "codex", "opencode"])
@pytest.mark.parametrize("mode", ["decide", "recorded"])
def test_edits_on_a_shared_counter_equal_fresh_replays(profile, mode):
    shared = TokenCounter(Chars4Tokenizer())
    summarized = 0
    for window in WINDOWS:
        config = Config.for_profile(profile, {"context.window": window})
        fast = _replay(config, shared, mode)
        plain = _replay(config, TokenCounter(Chars4Tokenizer()), mode)
        assert [a.timeline_json() for a in fast.timeline] == [a.timeline_json() for a in plain.timeline]
        assert fast.costs == plain.costs
        assert fast.cost_totals() == plain.cost_totals()
        for k in range(window % 3, len(plain.timeline), 3):  # a third of the requests' blocks, in turn
            got = fast._fast.audit(k)
            assert got == plain._fast.audit(k)
            assert fast.audit(k).to_json() == plain.audit(k).to_json()
            summarized += sum(1 for b in got.blocks if b.status is BlockStatus.SUMMARIZED)
        last = len(plain.timeline) - 1
        assert fast._fast.audit(last) == plain._fast.audit(last)
    if mode == "decide":  # the remembered runs of summarized blocks were exercised
        assert summarized > 100


def test_with_lead_equals_the_field_replace():
    lead = Block(("lead", 7), 7, None, None, "lead")
    rest = Block(("s", "summary", "s1", 3), 3, 0, None, "summary")
    prompt = Prompt((lead, rest), 10)
    got = with_lead(prompt, 12)
    assert got == Prompt((lead._replace(tokens=12), rest), 15)
    assert type(got.segments[0]) is Block
    assert with_lead(prompt, 7) is prompt
