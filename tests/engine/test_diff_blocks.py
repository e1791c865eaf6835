"""Small helpers of the edit path against what they stand for: `block_changes_shown` (the diff
panel's count and first changes of the selected request) against `block_changes`, on aligned and
unaligned block lists; the replayers' `sent_count` against calibration's `sent_blocks`."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.compare.between_replays import block_changes, block_changes_shown
from inspector.pipeline.audit import BlockAudit, BlockStatus, BudgetAudit, RequestAudit

STATUSES = list(BlockStatus)


def request(blocks: list[BlockAudit], index: int = 3) -> RequestAudit:
    budget = BudgetAudit(1000, 0, 0, 0, 0, 1000, 0, 0, None, None)
    return RequestAudit(index, "r", "m", 1, "completed", None, budget, None, (), None, tuple(blocks))


def block(mid: str | None, status: BlockStatus) -> BlockAudit:
    return BlockAudit(mid, "user", "message", 1, status, False, "within_budget", 5, 5, 0)


@st.composite
def pairs(draw):
    n = draw(st.integers(0, 30))
    ids = [None if draw(st.integers(0, 6)) == 0 else f"m{i}" for i in range(n)]
    before = [block(mid, draw(st.sampled_from(STATUSES))) for mid in ids]
    after = [block(mid, draw(st.sampled_from(STATUSES))) for mid in ids]
    after += [block(f"x{i}", draw(st.sampled_from(STATUSES))) for i in range(draw(st.integers(0, 3)))]
    if n and draw(st.booleans()):  # not aligned: a block missing, the rest matched by id
        del after[draw(st.integers(0, n - 1))]
    return request(before), request(after)


@settings(max_examples=300, deadline=None)
@given(pairs(), st.integers(0, 15))
def test_block_changes_shown_is_the_count_and_the_head_of_block_changes(pair, limit):
    base, new = pair
    every = block_changes(base, new)
    assert block_changes_shown(base, new, limit) == (len(every), every[:limit])


def test_block_changes_shown_counts_all_and_makes_only_the_head():
    base = request([block(f"m{i}", BlockStatus.KEPT) for i in range(50)])
    new = request([block(f"m{i}", BlockStatus.EXCLUDED if i % 2 else BlockStatus.KEPT) for i in range(50)])
    count, head = block_changes_shown(base, new, 4)
    assert count == 25
    assert [(c.message_id, c.before, c.after) for c in head] == [(f"m{i}", "kept", "excluded") for i in (1, 3, 5, 7)]


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from([*map(str, BlockStatus), "other"]), st.integers(0, 500)))
def test_the_replayers_sent_count_is_calibrations_sent_blocks(counts):
    from inspector.pipeline.calibration import sent_blocks
    from inspector.pipeline.profiles.common import sent_count

    assert sent_count(counts) == sent_blocks(counts)
