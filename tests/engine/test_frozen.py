"""`fast_frozen_init`: the same objects as the dataclass's own __init__, still frozen."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from hypothesis import given
from hypothesis import strategies as st

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


def test_audit_classes_use_it_and_keep_their_fields():
    block = BlockAudit("m1", "user", "message", 1, BlockStatus.KEPT, True, Reason.CURRENT_TURN, 10, 10, 0)
    assert block.summary_id is None and block.group is None and block.to_json()["reason"] == "current_turn"
    budget = BudgetAudit(100, 1, 2, 3, 4, 5, 6, 7, None, None)
    assert budget.pruned_savings == 0 and budget.needed_tokens is None
    request = RequestAudit(0, "r", "m1", 1, "completed", None, budget, None, (), 2, (block,))
    assert request.stats == {} and request.diagnostics == () and request.block_counts() == {"kept": 1}
    for cls in (BlockAudit, BudgetAudit, RequestAudit):
        assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"
