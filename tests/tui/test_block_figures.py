"""widgets.budget.block_figures: what the Budget pane reads off a request's blocks, remembered by the
block tuple, equal to counting them afresh."""

from __future__ import annotations

import heapq
from collections import Counter

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from inspector.pipeline.audit import BlockAudit, BlockStatus, BudgetAudit, RequestAudit
from widgets.budget import block_figures, largest_block_indexes

blocks_st = st.lists(st.tuples(st.sampled_from(list(BlockStatus)), st.booleans(), st.integers(0, 50),
                               st.integers(0, 50)), max_size=40)


def _request(specs) -> RequestAudit:
    blocks = tuple(BlockAudit(f"m{i}", "user", "message", 1, status, protected, "within_budget", full, sent, i)
                   for i, (status, protected, full, sent) in enumerate(specs))
    return RequestAudit(0, "r0", "m0", 1, "completed", None, BudgetAudit(1000, 0, 0, 0, 0, 1000, 10, 10, None, None),
                        None, (), 2, blocks)


@given(blocks_st)
def test_the_figures_are_the_blocks_counted_afresh(specs):
    request = _request(specs)
    figures = block_figures(request)
    blocks = request.blocks
    assert figures.counts == Counter(b.status for b in blocks)
    assert figures.protected == sum(1 for b in blocks if b.protected)
    # the six largest as sent, then in full: the same ranking as a sort of every block (ties by index)
    ranked = heapq.nlargest(6, range(len(blocks)), key=lambda i: (blocks[i].tokens_sent, blocks[i].tokens))
    assert [(blocks[i].tokens_sent, blocks[i].tokens) for i in figures.largest] == \
        [(blocks[i].tokens_sent, blocks[i].tokens) for i in ranked]
    assert largest_block_indexes(request) == list(figures.largest)


def test_a_priced_copy_sharing_the_blocks_reads_the_same_figures_and_other_blocks_their_own():
    request = _request([(BlockStatus.KEPT, True, 5, 5), (BlockStatus.PRUNED, False, 9, 0)])
    priced = msgspec.structs.replace(request, budget=msgspec.structs.replace(request.budget, prompt_tokens=11))
    assert block_figures(priced) is block_figures(request)
    other = _request([(BlockStatus.KEPT, False, 5, 5)])
    assert block_figures(other).protected == 0 and block_figures(request).protected == 1
