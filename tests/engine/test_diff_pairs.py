"""`diff_simulations` pairs the two replays' requests by position where both list the same requests
(one thread: they always do) and by request id otherwise; either way its changed blocks and prompt
deltas are those of the pairing by id as first written. `status_moves` against its formula."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.generate import generate_thread
from inspector.compare.between_replays import diff_simulations, status_map_changes, status_moves
from inspector.config import Config
from inspector.service import run_replay


def _as_written(base, new) -> tuple[dict[int, int], dict[int, int]]:
    """The changed blocks and prompt deltas by request, pairing by id, from every block's status."""
    by_id = {r.request_id: r for r in base.requests}
    changed, delta = {}, {}
    for req in new.requests:
        old = by_id.get(req.request_id)
        if old is None:
            continue
        if old.budget.prompt_tokens != req.budget.prompt_tokens:
            delta[req.index] = req.budget.prompt_tokens - old.budget.prompt_tokens
        b, a = old.stats.get("block_statuses"), req.stats.get("block_statuses")
        if b is not None and a is not None:
            count = status_map_changes(b, a)
        else:
            before, after = old.block_counts(), req.block_counts()
            count = sum(max(0, n - before.get(s, 0)) for s, n in after.items())
        if count:
            changed[req.index] = count
    return changed, delta


@pytest.mark.parametrize("profile", ["iris", "shifting", "claude-code"])
def test_the_pairs_by_position_are_the_pairs_by_id(profile):
    thread = generate_thread(400, seed=5)
    config = Config.for_profile(profile)
    window = int(config["context.window"])
    base = run_replay(thread, config, compactions="decide").simulation(blocks=False)
    new = run_replay(thread, config.updated({"context.window": window // 2}), compactions="decide").simulation(blocks=False)
    diff = diff_simulations(base, new, cost=False)
    assert diff.changed_blocks and diff.prompt_delta  # the edit moved something: the comparison can fail
    assert (diff.changed_blocks, diff.prompt_delta) == _as_written(base, new)
    # the other pairing: the base misses some requests and lists the rest in another order
    kept = list(base.requests)
    random.Random(3).shuffle(kept)
    partial = replace(base, requests=tuple(kept[: len(kept) * 2 // 3]))
    diff = diff_simulations(partial, new, cost=False)
    assert (diff.changed_blocks, diff.prompt_delta) == _as_written(partial, new)


counts = st.dictionaries(st.sampled_from(["kept", "pruned", "excluded", "summarized"]), st.integers(0, 50))


@given(counts, counts)
def test_status_moves_is_its_formula(before, after):
    assert status_moves(before, after) == sum(max(0, n - before.get(s, 0)) for s, n in after.items())
