"""Handing a view to a worker without keeping it alive with the worker."""

from __future__ import annotations

from typing import Any


class Handoff:
    """A view handed to a worker, taken out by the work (`take()`). Textual keeps a finished worker
    in a reference cycle (worker, task, context) that only a full collection frees; a view in the
    worker's arguments stayed alive with it: every edit's replays, hundreds of thousands of
    objects, until a full pass walked them all (160-310 ms, one every edit or two)."""

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        self._value = value

    def take(self) -> Any:
        value, self._value = self._value, None
        return value
