"""`AgentReplayer.audit` (runs of summarized blocks made at once) against the block-by-block
audit as first written (`tests/reference/agents_audit.py`), on every request of generated threads
that compact, keep user messages (codex), prune (opencode) and clear tool results (context editing);
and the timeline's block counts against those blocks."""

from __future__ import annotations

import pytest

from bench.generate import generate_thread
from inspector.config import AGENT_PROFILES, Config
from inspector.pipeline import replay
from inspector.pipeline.audit import BlockStatus
from inspector.pipeline.profiles.agents import AgentReplayer
from inspector.summarizers.extractive import ExtractiveSummarizer
from inspector.tokens import Chars4Tokenizer, TokenCounter
from tests.reference.agents_audit import audit as reference_audit

THREAD = generate_thread(900, seed=21)


@pytest.mark.parametrize("profile", AGENT_PROFILES)
@pytest.mark.parametrize("window", [12_000, 30_000])
@pytest.mark.parametrize("mode", ["decide", "recorded"])
def test_every_request_audit_equals_the_block_by_block_audit(profile, window, mode):
    config = Config.for_profile(profile, {"context.window": window})
    result = replay(THREAD, config, counter=TokenCounter(Chars4Tokenizer()), summarizer=ExtractiveSummarizer(),
                    follow_recorded=mode == "recorded")
    fast = result._fast
    assert isinstance(fast, AgentReplayer)
    summarized = pruned = 0
    for k in range(len(result.timeline)):
        got = fast.audit(k)
        assert got == reference_audit(fast, k)
        # the timeline's counts per status (computed without blocks) are those of the blocks
        assert result.timeline[k].stats["block_counts"] == got.block_counts()
        summarized += sum(1 for b in got.blocks if b.status == BlockStatus.SUMMARIZED)
        pruned += sum(1 for b in got.blocks if b.status == BlockStatus.PRUNED)
    if mode == "decide" and window == 12_000:
        if profile == "anthropic-context-editing":  # it clears tool results rather than compacting here
            assert pruned > 1_000
        else:  # the runs were exercised, under several summaries
            assert len(fast.chain) > 2 and summarized > 1_000


@pytest.mark.parametrize("profile", AGENT_PROFILES)
def test_replays_on_one_counter_equal_replays_on_fresh_ones(profile):
    """What the replayer remembers per thread on the counter (tables, Codex's user messages, label
    columns) serves every config edit: each replay on a shared counter equals one on a new counter."""
    shared = TokenCounter(Chars4Tokenizer())
    for window in (12_000, 30_000, 12_000):
        config = Config.for_profile(profile, {"context.window": window})
        on_shared = replay(THREAD, config, counter=shared, summarizer=ExtractiveSummarizer())
        fresh = replay(THREAD, config, counter=TokenCounter(Chars4Tokenizer()), summarizer=ExtractiveSummarizer())
        assert on_shared.timeline == fresh.timeline
        assert [on_shared._fast.audit(k) for k in range(0, len(fresh.timeline), 17)] == \
            [fresh._fast.audit(k) for k in range(0, len(fresh.timeline), 17)]
