"""widgets.budget helpers: the largest blocks of a request, ranked as sent."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from inspector.pipeline.audit import BlockAudit, BlockStatus, BudgetAudit, RequestAudit
from widgets.budget import largest_blocks

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
    names = [str(cell) for cell in largest_blocks(request, count).columns[0].cells]
    assert names == [f"tool {b.message_id}" for b in expected]
