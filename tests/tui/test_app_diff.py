"""inspector.compare.between_replays: what moved between a baseline replay and a what-if replay."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from inspector.compare.between_replays import block_changes, compaction_indices, diff_simulations, failure_indices
from inspector.config import Config
from inspector.examples import demo_threads
from inspector.pipeline.audit import (
    BlockAudit,
    BlockStatus,
    BudgetAudit,
    CompactionAudit,
    RequestAudit,
    RequestError,
    Simulation,
)
from inspector.service import load_config, run_simulation


def _block(mid: str | None, status: BlockStatus) -> BlockAudit:
    return BlockAudit(mid, "user", "message", 1, status, False, "within_budget", 10, 10, 0)


def _request(index: int, blocks, *, compaction: bool = False, failed: bool = False, prompt: int = 100) -> RequestAudit:
    budget = BudgetAudit(1000, 0, 0, 0, 0, 1000, prompt, prompt, None, None)
    return RequestAudit(
        index=index,
        request_id=f"r{index}",
        after_message_id=f"m{index}",
        turn=index + 1,
        status="failed" if failed else "completed",
        error=RequestError("token_budget_exceeded", "too big") if failed else None,
        budget=budget,
        compaction=CompactionAudit("token_threshold", f"s{index}", "m0", "m1") if compaction else None,
        summaries_injected=(),
        protect_turns=2,
        blocks=tuple(blocks),
    )


def _sim(requests) -> Simulation:
    return Simulation("t", "iris", {}, "chars4", True, tuple(requests))


K, P, E = BlockStatus.KEPT, BlockStatus.PRUNED, BlockStatus.EXCLUDED


def test_identical_replays_have_an_empty_diff():
    sim = _sim([_request(0, [_block("a", K)]), _request(1, [_block("a", K), _block("b", K)], compaction=True)])
    diff = diff_simulations(sim, sim)
    assert diff.empty and diff.lines() == []
    assert [m.shift for m in diff.compactions] == [0]


def test_compaction_earlier_later_new_and_gone():
    base = _sim([_request(i, [], compaction=i in (3, 7)) for i in range(10)])
    new = _sim([_request(i, [], compaction=i in (1, 8, 9)) for i in range(10)])
    diff = diff_simulations(base, new)
    assert [(m.base_index, m.new_index, m.shift) for m in diff.compactions] == [(3, 1, -2), (7, 8, 1), (None, 9, None)]
    assert diff.lines() == [
        "compaction #1: request 4 -> 2 (2 earlier)",
        "compaction #2: request 8 -> 9 (1 later)",
        "compaction #3: new, before request 10",
    ]
    gone = diff_simulations(new, base)
    assert gone.lines()[-1] == "compaction #3: gone (was before request 10)"


def _manual(request: RequestAudit) -> RequestAudit:
    """`request` with the user's own compaction (Claude Code's /compact) before it."""
    return msgspec.structs.replace(request, compaction=CompactionAudit("manual", f"s{request.index}", "m0", "m1", manual=True))


def test_a_manual_compaction_is_paired_by_its_request_not_by_rank():
    """The user's /compact before request 6 is made there in both replays; the automatic compaction before
    it moves from request 4 to 2, the one after from 9 to 8. Paired by rank, the manual one would read as
    "compaction #2: request 6 -> ..."; it is not listed, and the automatic ones are named so."""
    def sim(automatic: tuple[int, ...], manual: tuple[int, ...] = (5,)) -> Simulation:
        return _sim([_manual(_request(i, [])) if i in manual else _request(i, [], compaction=i in automatic)
                     for i in range(10)])

    diff = diff_simulations(sim((3, 8)), sim((1, 7)))
    assert diff.lines() == [
        "automatic compaction #1: request 4 -> 2 (2 earlier)",
        "automatic compaction #2: request 9 -> 8 (1 earlier)",
    ]
    # the automatic ones dropped to one, before the manual one: the one after it is gone, not moved onto it
    fewer = diff_simulations(sim((3, 8)), sim((1,)))
    assert fewer.lines() == ["automatic compaction #1: request 4 -> 2 (2 earlier)",
                             "automatic compaction #2: gone (was before request 9)"]
    # only the manual ones differ (a replay that made none there): said of the manual one
    assert diff_simulations(sim((3,)), sim((3,), manual=())).lines() == [
        "manual compaction (/compact): gone (was before request 6)"]
    assert diff_simulations(sim((3,)), sim((3,))).empty


def test_many_compaction_moves_are_counted_past_the_first_few():
    base = _sim([_request(i, [], compaction=i % 2 == 1, failed=i == 0) for i in range(40)])
    new = _sim([_request(i, [], compaction=i % 2 == 0 and i > 0 or i == 39) for i in range(40)])
    diff = diff_simulations(base, new)
    moved = [m for m in diff.compactions if m.shift != 0]
    assert len(moved) == 19  # the 20th compaction stays at request 40
    every, few = diff.lines(), diff.lines(moves_shown=3)
    assert few[:3] == every[:3]
    assert few[3] == "… and 16 more compactions moved"
    assert few[4:] == every[19:] == ["failures disappear at requests 1"]
    assert diff.lines(moves_shown=19) == every


def test_failures_appear_and_disappear():
    base = _sim([_request(i, [], failed=i == 2) for i in range(5)])
    new = _sim([_request(i, [], failed=i in (3, 4)) for i in range(5)])
    diff = diff_simulations(base, new)
    assert diff.failures_appeared == (3, 4) and diff.failures_disappeared == (2,)
    assert "failures appear at requests 4, 5" in diff.lines()
    assert "failures disappear at requests 3" in diff.lines()
    assert failure_indices(new) == (3, 4)


def test_block_status_changes_counted_per_request_ignoring_synthetic_blocks():
    base = _sim([_request(0, [_block("a", K), _block("b", K), _block(None, K)])])
    new = _sim([_request(0, [_block("a", P), _block("b", K), _block(None, E)], prompt=60)])
    diff = diff_simulations(base, new)
    assert diff.changed_blocks == {0: 1}
    assert diff.prompt_delta == {0: -40}
    assert "1 block statuses changed across 1 requests" in diff.lines()
    changes = block_changes(base.requests[0], new.requests[0])
    assert [(c.message_id, c.before, c.after) for c in changes] == [("a", "kept", "pruned")]


def test_real_replay_smaller_window_compacts_earlier():
    thread = next(t for t in demo_threads() if t.id == "demo-iris-walkthrough")
    baseline_config = load_config(None, None, path=Path("/nonexistent/config.toml"), thread=thread)
    base = run_simulation(thread, baseline_config)
    new = run_simulation(thread, baseline_config.updated({"context.window": 100_000}))
    diff = diff_simulations(base, new)
    assert compaction_indices(base) == (40,)
    first = diff.compactions[0]
    assert first.base_index == 40 and first.new_index is not None and first.new_index < 40
    assert diff.changed_blocks  # statuses moved (summarized earlier)
    assert any("earlier" in line for line in diff.lines())


def test_real_replay_same_config_is_empty():
    thread = next(t for t in demo_threads() if t.id == "demo-iris-overflow")
    config = Config.for_profile("iris", {"context.window": 32_000})
    diff = diff_simulations(run_simulation(thread, config), run_simulation(thread, config))
    assert diff.empty


def _changes_by_id(base: RequestAudit, new: RequestAudit) -> list[tuple[str, str, str]]:
    """The definition: by message id, in the new replay's order, synthetic blocks ignored."""
    before = {b.message_id: str(b.status) for b in base.blocks if b.message_id is not None}
    return [(b.message_id, before[b.message_id], str(b.status)) for b in new.blocks
            if b.message_id in before and before[b.message_id] != str(b.status)]


_statuses = st.sampled_from([K, P, E, BlockStatus.SUMMARIZED])


@given(st.lists(st.tuples(_statuses, _statuses), max_size=30), st.integers(0, 3), st.integers(0, 3), st.booleans())
def test_block_changes_matches_the_by_id_definition(pairs, base_extra, new_extra, shuffle):
    """Aligned block lists (one pass) and reordered ones (by id) give the same answer."""
    base_blocks = [_block(f"m{i}", a) for i, (a, _) in enumerate(pairs)] + [_block(None, K)] * base_extra
    new_blocks = [_block(f"m{i}", b) for i, (_, b) in enumerate(pairs)] + [_block(None, E)] * new_extra
    if shuffle:
        new_blocks.reverse()
    base, new = _request(0, base_blocks), _request(0, new_blocks)
    got = [(c.message_id, c.before, c.after) for c in block_changes(base, new)]
    assert got == _changes_by_id(base, new)


def _without_statuses(sim: Simulation) -> Simulation:
    requests = tuple(msgspec.structs.replace(r, stats={k: v for k, v in r.stats.items() if k != "block_statuses"})
                     for r in sim.requests)
    return replace(sim, requests=requests)


def test_shifting_diff_from_the_non_excluded_maps_equals_the_block_by_block_diff():
    from bench.generate import generate_thread

    for thread in (*demo_threads(), generate_thread(300, seed=6)):
        for strategy in ("truncate", "summarize", "vector-recall", "manual"):
            base_config = Config.for_profile("shifting", {"context.strategy": strategy, "context.window": 4096})
            base = run_simulation(thread, base_config)
            new = run_simulation(thread, base_config.updated({"context.window": 3000}))
            assert all("block_statuses" in r.stats for r in (*base.requests, *new.requests))
            for before, after in ((base, new), (new, base)):  # blocks leave, then come back
                fast = diff_simulations(before, after)
                slow = diff_simulations(_without_statuses(before), _without_statuses(after))
                assert fast.changed_blocks == slow.changed_blocks, (thread.id, strategy)
