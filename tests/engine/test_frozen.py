"""`fast_frozen_init`: the same objects as the dataclass's own __init__, still frozen."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.compare.between_replays import BlockChange
from inspector.frozen import fast_frozen_init
from inspector.pipeline.audit import BlockAudit, BlockStatus, BudgetAudit, Reason, RequestAudit


@dataclasses.dataclass(frozen=True, slots=True)
class Plain:
    a: int
    b: str = "b"
    c: dict = dataclasses.field(default_factory=dict)


@fast_frozen_init
@dataclasses.dataclass(frozen=True, slots=True)
class Fast:
    a: int
    b: str = "b"
    c: dict = dataclasses.field(default_factory=dict)


@given(st.integers(), st.text(), st.dictionaries(st.text(), st.integers()))
def test_same_fields_as_the_dataclass_init(a, b, c):
    assert dataclasses.astuple(Fast(a, b, c)) == dataclasses.astuple(Plain(a, b, c))
    assert dataclasses.astuple(Fast(a=a)) == dataclasses.astuple(Plain(a=a))
    assert dataclasses.astuple(Fast(a, c=c)) == dataclasses.astuple(Plain(a, c=c))


def test_defaults_factories_signature_and_frozenness():
    one, two = Fast(1), Fast(1)
    assert one.c == {} and one.c is not two.c  # a fresh dict per object, like default_factory
    assert inspect.signature(Fast).parameters.keys() == inspect.signature(Plain).parameters.keys()
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.a = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        Fast()  # type: ignore[call-arg]
    assert dataclasses.replace(one, a=5) == Fast(5)


def test_refuses_classes_it_cannot_speed_up():
    with pytest.raises(TypeError, match="frozen=True, slots=True"):
        fast_frozen_init(dataclasses.dataclass(slots=True)(type("Mutable", (), {"__annotations__": {"a": int}})))

    @dataclasses.dataclass(frozen=True, slots=True)
    class WithPostInit:
        a: int

        def __post_init__(self) -> None:
            pass

    with pytest.raises(TypeError, match="__post_init__"):
        fast_frozen_init(WithPostInit)


def test_the_audit_records_keep_their_fields_and_defaults():
    block = BlockAudit("m1", "user", "message", 1, BlockStatus.KEPT, True, Reason.CURRENT_TURN, 10, 10, 0)
    assert block.summary_id is None and block.group is None and block.to_json()["reason"] == "current_turn"
    budget = BudgetAudit(100, 1, 2, 3, 4, 5, 6, 7, None, None)
    assert budget.pruned_savings == 0 and budget.needed_tokens is None and budget.cost is None
    request = RequestAudit(0, "r", "m1", 1, "completed", None, budget, None, (), 2, (block,))
    assert request.stats == {} and request.diagnostics == () and request.block_counts() == {"kept": 1}
    assert RequestAudit(0, "r", "m1", 1, "completed", None, budget, None, (), 2, (block,)).stats is not request.stats
    assert BlockChange.__init__.__qualname__ == "BlockChange.__init__"  # still made by fast_frozen_init


def test_a_request_audit_is_hashed_without_its_stats_and_compared_with_them():
    """As the frozen dataclass it replaced (`stats` had hash=False): a dict in it does not make it
    unhashable, and two requests that differ only in their stats are not equal."""
    budget = BudgetAudit(100, 1, 2, 3, 4, 5, 6, 7, None, None)
    one = RequestAudit(0, "r", "m1", 1, "completed", None, budget, None, (), 2, (), stats={"a": 1})
    other = RequestAudit(0, "r", "m1", 1, "completed", None, budget, None, (), 2, (), stats={"a": 2})
    assert hash(one) == hash(other) and one != other
    assert one == RequestAudit(0, "r", "m1", 1, "completed", None, budget, None, (), 2, (), stats={"a": 1})
    with pytest.raises(AttributeError):
        one.index = 1  # type: ignore[misc]


def test_a_block_audit_is_a_frozen_record_the_collector_does_not_track():
    """BlockAudit is a msgspec Struct (a request of a long thread builds 10,000): frozen, compared and
    hashed by value, keyword and positional fields as a dataclass, and not tracked by the collector."""
    import gc

    block = BlockAudit("m1", "user", "message", 1, BlockStatus.KEPT, True, Reason.CURRENT_TURN, 10, 10, 0,
                       summary_id="s1")
    same = BlockAudit(message_id="m1", role="user", kind="message", turn=1, status=BlockStatus.KEPT, protected=True,
                      reason=Reason.CURRENT_TURN, tokens=10, tokens_sent=10, position=0, summary_id="s1")
    assert block == same and hash(block) == hash(same) and block.group is None
    assert block != BlockAudit("m1", "user", "message", 1, BlockStatus.KEPT, True, Reason.CURRENT_TURN, 10, 9, 0)
    with pytest.raises(AttributeError):
        block.tokens = 3  # type: ignore[misc]
    assert not hasattr(block, "__dict__") and not gc.is_tracked(block)
