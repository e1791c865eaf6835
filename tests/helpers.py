"""Small builders shared by the tests."""

from __future__ import annotations

from collections.abc import Sequence

from inspector.model import Message, Summary


class CountingSummarizer:
    """Deterministic stand-in for a summarizer that records its calls."""

    name = "counting"

    def __init__(self, text: str = "summary") -> None:
        self.text = text
        self.calls: list[tuple[str, ...]] = []

    def summarize(self, messages: Sequence[Message], previous: Summary | None, *, summary_id: str,
                  before_request_id: str | None = None) -> Summary:
        self.calls.append(tuple(m.id for m in messages))
        return Summary(
            id=summary_id,
            first_message_id=messages[0].id,
            last_message_id=messages[-1].id,
            summary=f"{self.text} of {len(messages)} messages",
            previous_summary_id=previous.id if previous else None,
            before_request_id=before_request_id,
            source="test",
        )


def typed_value(value):
    """A decoded JSON value with its types spelt out (floats by repr: NaN equals NaN, -0.0 is not 0.0)."""
    if isinstance(value, dict):
        return ("dict", [(k, typed_value(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed_value(v) for v in value])
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


def counted_forks(monkeypatch, module, then=None) -> list[int]:
    """The pids of the children `module` forks (`module.os.fork` patched), so a test can tell they ran and
    are gone; `then(pids)` runs in this process right after each fork returns."""
    pids: list[int] = []
    fork = module.os.fork

    def counted() -> int:
        pid = fork()
        if pid:
            pids.append(pid)
            if then is not None:
                then(pids)
        return pid

    monkeypatch.setattr(module.os, "fork", counted)
    return pids
