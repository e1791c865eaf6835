"""Finding requests to jump to: the next or previous compaction (replayed or recorded), failures."""

from __future__ import annotations

from collections.abc import Callable

from inspector.pipeline.audit import RequestAudit
from inspector.screens.view import ViewState


def is_compaction(view: ViewState, request: RequestAudit) -> bool:
    """A replayed compaction, or a recorded one (the app compacted before this request)."""
    return request.compaction is not None or request.request_id in view.recorded_compactions


def is_failure(_view: ViewState, request: RequestAudit) -> bool:
    return request.failed


def find_request(view: ViewState | None, begin: int, predicate: Callable[[ViewState, RequestAudit], bool], *,
                 forward: bool) -> int | None:
    """The first request after (`forward`) or before `begin` that satisfies `predicate`, or None."""
    if view is None:
        return None
    reqs = view.requests
    order = range(begin + 1, len(reqs)) if forward else range(begin - 1, -1, -1)
    return next((i for i in order if predicate(view, reqs[i])), None)
