"""Probes: where a text is visible to the model, request by request, and when it stopped being.

Pure: reads a replay (`ReplayLike`) and its thread. At each request a text is

- `verbatim` when a block sent in full holds it (the newest such block; `status` says how it
  was sent: `kept`, or `truncated` when it was shortened and the text may be in the part cut),
  or the thread's system prompt holds it (`block_id` null, `status` `system_prompt`);
- `summary` when no such block holds it but a summary the request sends does (the newest one);
- `absent` otherwise, and at every failed request (it sends nothing; `status` `failed`).

A text matches after `normalise` at word boundaries; a path also by its last directory and
base name in a summary. `lost_at` is the first completed request at which the text is absent
after an earlier request showed it; null when it never went, or was never seen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspector.model import Message, Summary, Thread
from inspector.pipeline.audit import BlockStatus, RequestAudit
from inspector.pipeline.facts import find_paths, source_parts
from inspector.pipeline.survival import ReplayLike
from inspector.pipeline.textmatch import contains, normalise, path_forms

VERBATIM, SUMMARY, ABSENT = "verbatim", "summary", "absent"
_SENT_WHOLE = {BlockStatus.KEPT: "kept", BlockStatus.TRUNCATED: "truncated"}


@dataclass(frozen=True, slots=True)
class Sighting:
    index: int
    request_id: str
    visibility: str          # verbatim | summary | absent
    block_id: str | None     # the message whose block holds it (verbatim)
    summary_id: str | None   # the summary that holds it (summary)
    status: str | None       # how that block was sent, or "failed" / "system_prompt"

    def to_json(self) -> dict[str, Any]:
        return {"request_id": self.request_id, "index": self.index, "visibility": self.visibility,
                "block_id": self.block_id, "summary_id": self.summary_id, "status": self.status}


@dataclass(frozen=True, slots=True)
class ProbeResult:
    text: str
    requests: tuple[Sighting, ...]
    messages: tuple[str, ...]  # ids of the messages that hold the text

    @property
    def first_seen(self) -> int | None:
        return next((s.index for s in self.requests if s.visibility != ABSENT), None)

    @property
    def lost_at(self) -> int | None:
        seen = False
        for s in self.requests:
            if s.visibility != ABSENT:
                seen = True
            elif seen and s.status != "failed":
                return s.index
        return None

    def to_json(self) -> dict[str, Any]:
        lost = self.lost_at
        return {
            "text": self.text,
            "messages": list(self.messages),
            "first_seen": self.first_seen,
            "lost_at": lost,
            "lost_at_request_id": next((s.request_id for s in self.requests if s.index == lost), None),
            "requests": [s.to_json() for s in self.requests],
        }


def _statuses(replay: ReplayLike, quick, request: RequestAudit, ids: set[str]) -> dict[str, BlockStatus]:
    """The statuses of the messages `ids` at `request`: from the replayer where it knows them
    without blocks (iris, harness), from the timeline where it lists them (shifting), else from
    the request's blocks."""
    if callable(quick):
        known = quick(request.index, ids)
        if known is not None:
            return known
    listed = request.stats.get("block_statuses")
    if listed is not None:  # every message not listed is excluded
        return {m: listed.get(m, BlockStatus.EXCLUDED) for m in ids}
    return {b.message_id: b.status for b in replay.audit(request.index).blocks if b.message_id in ids}


class _Needle:
    """One probe text, normalised, with the forms a summary may hold it in."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.plain = normalise(text)
        stripped = text.strip()
        hits = find_paths(stripped)
        self.is_path = len(hits) == 1 and hits[0][1] == stripped
        self.summary_forms = path_forms(stripped) if self.is_path else (self.plain,)

    def in_message(self, normalised: str) -> bool:
        return contains(normalised, self.plain, path=self.is_path)

    def in_summary(self, normalised: str) -> bool:
        return any(contains(normalised, form, path=self.is_path) for form in self.summary_forms)


def message_text(message: Message) -> str:
    """A message's content and tool-call argument strings, normalised (what a probe searches)."""
    return normalise("\n".join(p.text for p in source_parts(message)))


def probe(thread: Thread, replay: ReplayLike, texts: Sequence[str]) -> tuple[ProbeResult, ...]:
    """One result per text, every request of `replay` in order."""
    needles = [_Needle(t) for t in texts]
    if not needles:
        return ()
    normalised = {m.id: message_text(m) for m in thread.messages}
    holders = [{mid for mid, text in normalised.items() if n.in_message(text)} for n in needles]
    timeline = replay.simulation(blocks=False, priced=False)  # a probe reads no cost
    summaries: dict[str, Summary] = {s.id: s for s in thread.summaries}
    summaries.update({s.id: s for s in timeline.summaries})
    summary_text: dict[str, str] = {}
    system = normalise(thread.system_prompt) if thread.system_prompt else ""
    index = thread.message_index()
    earliest = min((index[m] for h in holders for m in h), default=None)
    sightings: list[list[Sighting]] = [[] for _ in needles]

    order = [m.id for m in thread.messages]
    newest_first = [[m for m in reversed(order) if m in h] for h in holders]
    every_holder = {m for h in holders for m in h}
    quick = getattr(replay, "message_statuses", None)
    for request in timeline.requests:
        if request.failed:
            for out in sightings:
                out.append(Sighting(request.index, request.request_id, ABSENT, None, None, "failed"))
            continue
        statuses: dict[str, BlockStatus] = {}
        if earliest is not None and index.get(request.after_message_id, -1) >= earliest:
            statuses = _statuses(replay, quick, request, every_holder)
        sent = list(request.summaries_injected)
        for n, needle in enumerate(needles):
            found: Sighting | None = None
            for mid in newest_first[n]:
                status = statuses.get(mid)
                if status in _SENT_WHOLE:
                    found = Sighting(request.index, request.request_id, VERBATIM, mid, None, _SENT_WHOLE[status])
                    break
            if found is None and system and needle.in_message(system):
                found = Sighting(request.index, request.request_id, VERBATIM, None, None, "system_prompt")
            if found is None:
                for sid in reversed(sent):
                    if sid not in summaries:
                        continue
                    if sid not in summary_text:
                        summary_text[sid] = normalise(summaries[sid].injected_text())
                    if needle.in_summary(summary_text[sid]):
                        found = Sighting(request.index, request.request_id, SUMMARY, None, sid, None)
                        break
            if found is None:
                found = Sighting(request.index, request.request_id, ABSENT, None, None, None)
            sightings[n].append(found)
    return tuple(ProbeResult(n.text, tuple(s), tuple(m for m in (x.id for x in thread.messages) if m in h))
                 for n, s, h in zip(needles, sightings, holders, strict=True))
