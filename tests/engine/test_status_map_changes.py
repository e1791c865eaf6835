"""The changed blocks of two status maps (shifting's per-request `block_statuses`, which leave out the
excluded blocks) counted from the pairs found in one map only, against the count as first written:
every block of either map, its status in each (excluded where absent), compared."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from inspector.compare.between_replays import status_map_changes
from inspector.pipeline.audit import BlockStatus

statuses = st.sampled_from(list(BlockStatus))
maps = st.dictionaries(st.sampled_from([f"m{i}" for i in range(12)]), statuses, max_size=12)


def _as_written(before, after) -> int:
    return sum(1 for mid in before.keys() | after.keys()
               if before.get(mid, BlockStatus.EXCLUDED) != after.get(mid, BlockStatus.EXCLUDED))


@given(maps, maps)
def test_the_count_is_the_count_as_written(before, after):
    assert status_map_changes(before, after) == _as_written(before, after)


@given(maps)
def test_a_map_against_itself_and_against_its_excluded_blocks_left_out(before):
    assert status_map_changes(before, dict(before)) == 0
    listed = {mid: s for mid, s in before.items() if s is not BlockStatus.EXCLUDED}
    assert status_map_changes(before, listed) == 0  # an excluded block listed is one left out
    assert status_map_changes({}, before) == len(listed)
