"""widgets.budget helpers: the largest blocks of a request, ranked as sent."""

from __future__ import annotations

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from inspector.pipeline.audit import BlockAudit, BlockStatus, BudgetAudit, RequestAudit
from widgets.budget import budget_parts, largest_blocks

_blocks = st.lists(
    st.tuples(st.integers(0, 50), st.integers(0, 50)).map(
        lambda sizes: (max(sizes), min(sizes))  # tokens >= tokens_sent
    ),
    max_size=40,
)


def _request(sizes) -> RequestAudit:
    blocks = tuple(
        BlockAudit(f"m{i}", "tool", "message", 1, BlockStatus.KEPT if sent else BlockStatus.PRUNED, False,
                   "within_budget", tokens, sent, None)
        for i, (tokens, sent) in enumerate(sizes)
    )
    return RequestAudit(0, "r", "m0", 1, "completed", None, BudgetAudit(1000, 0, 0, 0, 0, 1000, 0, 0, None, None),
                        None, (), 2, blocks)


@given(_blocks, st.integers(1, 8))
def test_largest_blocks_are_the_first_of_a_stable_sort_by_sent_then_full(sizes, count):
    request = _request(sizes)
    expected = sorted(request.blocks, key=lambda b: (b.tokens_sent, b.tokens), reverse=True)[:count]
    names = [str(row[0]) for row in largest_blocks(request, count).rows]
    assert names == [f"tool {b.message_id}" for b in expected]


@given(st.integers(0, 5000), st.integers(0, 5000), st.one_of(st.none(), st.integers(-100, 8000)))
def test_the_unaccounted_part_splits_into_own_and_tokenizer_without_losing_a_token(history, unaccounted, own):
    budget = BudgetAudit(200_000, 0, 0, 0, 0, 200_000, history, history, None, None,
                         calibrated_prompt_tokens=history + unaccounted, unaccounted_tokens=unaccounted)
    request = RequestAudit(0, "r", "m0", 1, "completed", None, budget, None, (), 2, ())
    values = budget_parts(request, own).values
    assert values["unaccounted"] + values["tokenizer"] == unaccounted
    assert values["tokenizer"] >= 0 and values["unaccounted"] >= 0
    if own is None:
        assert values["tokenizer"] == 0  # no fitted split: one part
    else:
        assert values["unaccounted"] == min(unaccounted, max(0, own))
    assert values["free"] == 200_000 - history - unaccounted


@given(st.integers(1, 400_000), st.integers(1_000, 300_000))
def test_a_summarization_call_over_the_window_says_no_one_call_sends_it(sent, window):
    """The profile prices the whole span it summarizes; where that is more than the window, the row says
    no such call fits instead of showing the price alone."""

    from inspector.pipeline.audit import SummarizationCost
    from widgets.cost import cost_rows

    request = _request([(10, 10)])
    budget = msgspec.structs.replace(request.budget, window=window, cache_read_tokens=0, cache_write_tokens=0,
                     summarization=SummarizationCost("m", sent, 0, 50, None))
    row = dict(cost_rows(msgspec.structs.replace(request, budget=budget)))["Summarization"].plain
    assert row.startswith(f"no price for its model = {sent:,} sent to summarize")
    assert ("over the" in row) is (sent > window)
    if sent > window:
        assert f"over the {window:,}-token window: no one call sends it (how the agent splits it is not modelled)" in row
