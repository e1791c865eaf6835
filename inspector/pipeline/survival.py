"""What each compaction of a replay kept and lost: the facts of its span, found or not in its summary.

Pure: takes a replay (its timeline, one request's blocks on demand, its summary chain) and
the thread. A compaction's span is the messages its request marks as summarized by its
summary that no earlier compaction had replaced (where a profile's new summary replaces the
whole history, as Claude Code's does, the older messages count once, at their own compaction);
the summary text is what the pipeline sends for it (`Summary.injected_text()`).
The rules for facts and for survival are in `inspector.pipeline.facts`; the rules that need the
whole span (a path named relative to the session's working directory or by a file name no other
path of the span has, a directory through a path inside it) are in `judge`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from inspector.model import Message, Summary, Thread
from inspector.pipeline.audit import BlockStatus, RequestAudit, Simulation
from inspector.pipeline.facts import KINDS, Fact, FactKind, KeyedFacts, distinct_facts, extract_facts, keyed_facts
from inspector.pipeline.textmatch import contains, normalise, number_form, path_forms


class ReplayLike(Protocol):
    """What survival and probes read from a replay (`inspector.pipeline.Replay` is one): the
    timeline and the summary chain (`simulation(blocks=False, priced=False)`: survival reads no
    cost), one request's blocks on demand, and optionally `summary_spans()` (each summary's
    messages without building blocks) and the tuples `timeline` and `summaries` (what that
    simulation holds, without the rest of it)."""

    def simulation(self, *, blocks: bool = True, priced: bool = True) -> Simulation: ...

    def audit(self, index: int) -> RequestAudit: ...


class SummaryText:
    """A summary's text, normalised once for many `survives` checks (its number form on first use:
    only number facts read it)."""

    __slots__ = ("plain", "_numbers")

    def __init__(self, text: str) -> None:
        self.plain = normalise(text)
        self._numbers: str | None = None

    @property
    def numbers(self) -> str:
        if self._numbers is None:
            self._numbers = number_form(self.plain)
        return self._numbers


@functools.lru_cache(maxsize=65_536)
def _needles(kind: FactKind, text: str) -> tuple[str, ...]:
    """What a fact is looked for as in a summary, any one found (remembered: a sweep judges the
    same facts of a thread against every config's summaries)."""
    if kind is FactKind.PATH:
        return path_forms(text)
    if kind is FactKind.NUMBER:
        return (number_form(normalise(text)),)
    if kind is FactKind.URL:
        url = normalise(text)
        return (url, url.rstrip("/")) if url.endswith("/") else (url,)
    return (normalise(text),)


def survives(fact: Fact, summary: SummaryText | str) -> bool:
    """Whether `fact` is found in `summary` (the rules in `inspector.pipeline.facts`)."""
    if isinstance(summary, str):
        summary = SummaryText(summary)
    kind = fact.kind
    haystack = summary.numbers if kind is FactKind.NUMBER else summary.plain
    path = kind is FactKind.PATH
    # `needle in haystack` first: most needles are not there at all, and it costs no call
    return any(needle in haystack and contains(haystack, needle, path=path) for needle in _needles(kind, fact.text))


OPAQUE = "summary opaque (encrypted by the provider)"
"""What the reports say instead of a loss rate where a compaction's summary cannot be read."""


@dataclass(frozen=True, slots=True)
class FactFate:
    """`survived`: True (found in the summary, or kept verbatim beside it), False (lost), None (not
    known: the summary cannot be read and the agent did not keep it verbatim)."""

    fact: Fact
    survived: bool | None

    def to_json(self) -> dict[str, Any]:
        return {**self.fact.to_json(), "survived": self.survived}


@dataclass(frozen=True, slots=True)
class KindCount:
    facts: int = 0
    survived: int = 0
    unknown: int = 0

    @property
    def lost(self) -> int:
        return self.facts - self.survived - self.unknown

    @property
    def rate(self) -> float | None:
        """Fraction that survived; None when there was nothing to keep, or when the fate of some
        is not known (an opaque summary: a rate over the rest would be a confident wrong number)."""
        return self.survived / self.facts if self.facts and not self.unknown else None

    def __add__(self, other: KindCount) -> KindCount:
        return KindCount(self.facts + other.facts, self.survived + other.survived, self.unknown + other.unknown)

    def to_json(self) -> dict[str, Any]:
        return {"facts": self.facts, "survived": self.survived, "lost": self.lost, "unknown": self.unknown,
                "rate": None if self.rate is None else round(self.rate, 4)}


def kind_counts(fates: Iterable[FactFate]) -> dict[FactKind, KindCount]:
    """Facts, survivors and facts of unknown fate per kind, every kind present (zero when absent)."""
    counts = {kind: KindCount() for kind in KINDS}
    for fate in fates:
        counts[fate.fact.kind] += KindCount(1, int(fate.survived is True), int(fate.survived is None))
    return counts


@dataclass(frozen=True, slots=True)
class CompactionLoss:
    """One compaction: its summary, the messages it replaced and the fate of their facts."""

    summary_id: str
    source: str            # "recorded" | "extractive" | "anthropic" | ...
    request_index: int     # the request it happened before
    request_id: str
    message_ids: tuple[str, ...]
    fates: tuple[FactFate, ...]
    summary_readable: bool = True  # False: the provider kept it encrypted (`Summary.readable`)

    def counts(self) -> dict[FactKind, KindCount]:
        return kind_counts(self.fates)

    def lost(self) -> tuple[Fact, ...]:
        return tuple(f.fact for f in self.fates if f.survived is False)

    def to_json(self) -> dict[str, Any]:
        return {
            "summary_id": self.summary_id,
            "source": self.source,
            "summary_readable": self.summary_readable,
            "request_index": self.request_index,
            "request_id": self.request_id,
            "messages": len(self.message_ids),
            "first_message_id": self.message_ids[0] if self.message_ids else None,
            "last_message_id": self.message_ids[-1] if self.message_ids else None,
            "facts": [f.to_json() for f in self.fates],
            "totals": {str(k): c.to_json() for k, c in self.counts().items()},
        }


def _relative(path: str, cwd: str | None) -> str:
    """The normalised path, relative to the session's working directory where it lies inside it."""
    norm = path_forms(path)[0].rstrip("/")
    if cwd:
        root = path_forms(cwd)[0].rstrip("/") + "/"
        if norm.startswith(root) and len(norm) > len(root):
            return norm[len(root):]
    return norm


def _base_name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _lies_in(inner: str, directory: str) -> bool:
    """Whether the path `inner` lies inside `directory` (both normalised and cwd-relative)."""
    return inner.startswith(directory + "/") or f"/{directory}/" in "/" + inner


class _Inside:
    """`any(_lies_in(inner, directory) for inner in paths)` for many directories against the same paths,
    by substring searches in two joined texts: `directory + "/"` after a separator (a path that starts
    with it) or `/directory/` anywhere (no match can cross a separator: neither needle holds one). Where
    a separator occurs in a path or a directory, the plain test."""

    SEPARATOR = "\0"

    __slots__ = ("_paths", "_starts", "_anywhere")

    def __init__(self, paths: list[str]) -> None:
        sep = self.SEPARATOR
        self._paths = paths
        if any(sep in p for p in paths):
            self._starts = self._anywhere = None
        else:
            self._starts = "".join(sep + p for p in paths)
            self._anywhere = "".join(sep + "/" + p for p in paths)

    def any_in(self, directory: str) -> bool:
        if self._starts is None or self._anywhere is None or self.SEPARATOR in directory:
            return any(_lies_in(inner, directory) for inner in self._paths)
        return (self.SEPARATOR + directory + "/") in self._starts or f"/{directory}/" in self._anywhere


def _found(facts: Sequence[Fact], text: SummaryText) -> list[bool]:
    """`survives(f, text)` of each fact, in one loop (a loss line judges thousands)."""
    plain, number, path_kind = text.plain, FactKind.NUMBER, FactKind.PATH
    out: list[bool] = []
    for fact in facts:
        kind = fact.kind
        haystack = text.numbers if kind is number else plain
        path = kind is path_kind
        for needle in _needles(kind, fact.text):
            if needle in haystack and contains(haystack, needle, path=path):
                out.append(True)
                break
        else:
            out.append(False)
    return out


def judge(facts: Sequence[Fact], summary_text: str, cwd: str | None = None) -> tuple[FactFate, ...]:
    """The fate of each of a span's facts in the summary (`survives`). A path also survives where the
    summary names it relative to the session's working directory `cwd`, or by its file name where no
    other path of the span has that file name; a directory where a surviving path lies inside it."""
    text = SummaryText(summary_text)
    kept = _found(facts, text)
    paths = [i for i, f in enumerate(facts) if f.kind is FactKind.PATH]
    if paths:
        relative = {i: _relative(facts[i].text, cwd) for i in paths}
        names: dict[str, int] = {}
        for rel in set(relative.values()):
            names[_base_name(rel)] = names.get(_base_name(rel), 0) + 1
        for i in paths:
            if kept[i]:
                continue
            rel = relative[i]
            name = _base_name(rel)
            by_cwd = rel != path_forms(facts[i].text)[0] and contains(text.plain, rel, path=True)
            by_name = "." in name.lstrip(".") and names[name] == 1 and contains(text.plain, name, path=True)
            kept[i] = by_cwd or by_name
        plain = {i: path_forms(facts[i].text)[0].rstrip("/") for i in paths}
        surviving = [i for i in paths if kept[i]]
        in_relative = _Inside([relative[j] for j in surviving])
        in_plain = _Inside([plain[j] for j in surviving])
        for i in paths:
            if not kept[i] and "." not in _base_name(relative[i]).lstrip("."):
                kept[i] = in_relative.any_in(relative[i]) or in_plain.any_in(plain[i])
    return tuple(FactFate(f, k) for f, k in zip(facts, kept, strict=True))


def covered_ids(audit: RequestAudit, summary: Summary, thread: Thread) -> tuple[str, ...]:
    """The messages `audit` marks as summarized by `summary`; where it marks none (a profile that
    does not tag its blocks), the summary's recorded range in thread order."""
    ids = tuple(b.message_id for b in audit.blocks
                if b.message_id is not None and b.status is BlockStatus.SUMMARIZED and b.summary_id == summary.id)
    if ids:
        return ids
    index = thread.message_index()
    first, last = index.get(summary.first_message_id), index.get(summary.last_message_id)
    if first is None or last is None:
        return ()
    return tuple(m.id for m in thread.messages[first:last + 1])


class LossMemo:
    """What `compaction_losses` judged on one thread, for its next call on the same thread (a config
    edit replays the thread again, and the loss line waits for every compaction's fates).

    A compaction's fates are a function of its span (the message ids it replaced first), of the text
    judged (`Summary.injected_text()`, or `retained_text()` where the summary cannot be read) and of
    whether it can be read, given the thread (its messages and working directory) and the fact
    extractor: the key is (span, readable, text). A call judges only the compactions whose key it
    has not seen; it keeps what it and the call before it used, so memory is bounded by two
    replays' compactions, and an edit and its undo both hit. One memo per thread at a time: another
    thread (or extractor) starts afresh, and a call still running on the previous one keeps its own
    entries (workers may overlap: a cancelled one ends at its next check)."""

    def __init__(self) -> None:
        self._state: _ThreadLosses | None = None
        self.judged = 0  # compactions judged afresh over the memo's life (what the tests read)
        self.reused = 0  # compactions whose fates were reused

    def state(self, thread: Thread, extract: Callable[[Sequence[Message]], tuple[Fact, ...]]) -> _ThreadLosses:
        state = self._state
        if state is None or state.thread is not thread or state.extract is not extract:
            state = self._state = _ThreadLosses(thread, extract)
        return state


class _Generations:
    """Values by key from the last two calls of `compaction_losses` (`recent`: the last call's, `older`:
    the call's before): a key neither used is forgotten, so the memo holds what two edits use."""

    __slots__ = ("recent", "older", "used")

    def __init__(self) -> None:
        self.recent: dict[Any, Any] = {}
        self.older: dict[Any, Any] = {}
        self.used: dict[Any, Any] = {}  # this call's

    def get(self, key: Any) -> Any:
        """The value this call, the last or the one before gave `key` (None: none), now this call's."""
        found = self.used.get(key)
        if found is None:
            found = self.recent.get(key)
            if found is None:
                found = self.older.get(key)
            if found is not None:
                self.used[key] = found
        return found

    def put(self, key: Any, value: Any) -> Any:
        self.used[key] = value
        return value

    def next_call(self) -> None:
        self.older, self.recent, self.used = self.recent, self.used, {}


class _ThreadLosses:
    """One thread's share of a `LossMemo`: its messages by id, and fates and facts by key, by generation."""

    __slots__ = ("thread", "extract", "messages", "keyed", "cwd", "fates", "span_facts")

    def __init__(self, thread: Thread, extract: Callable[[Sequence[Message]], tuple[Fact, ...]]) -> None:
        self.thread, self.extract = thread, extract
        self.messages = {m.id: m for m in thread.messages}
        # extract_facts's facts per message id, filled as spans need them (`facts` then skips the
        # per-message cache's lookups by object)
        self.keyed: dict[str, KeyedFacts] | None = {} if extract is extract_facts else None
        cwd = thread.meta.get("cwd")
        self.cwd = cwd if isinstance(cwd, str) else None
        self.fates = _Generations()  # (span, readable, summary text) -> its facts' fates
        self.span_facts = _Generations()  # span -> its facts

    def facts(self, ids: tuple[str, ...]) -> tuple[Fact, ...]:
        found = self.span_facts.get(ids)
        return self.span_facts.put(ids, self._extract(ids)) if found is None else found

    def _extract(self, ids: tuple[str, ...]) -> tuple[Fact, ...]:
        messages, keyed = self.messages, self.keyed
        if keyed is None:
            return self.extract([messages[i] for i in ids if i in messages])
        missing = [i for i in ids if i not in keyed and i in messages]
        if missing:
            keyed.update(zip(missing, keyed_facts([messages[i] for i in missing]), strict=True))
        get = keyed.get
        return distinct_facts(get(i, ()) for i in ids)


def _timeline(replay: ReplayLike) -> tuple[Sequence[RequestAudit], Sequence[Summary]]:
    """The replay's requests (no blocks) and summary chain: a `Replay`'s own, where it has them (its
    `simulation()` also reads every request's calibration basis and rules), else `simulation()`'s."""
    timeline, summaries = getattr(replay, "timeline", None), getattr(replay, "summaries", None)
    if isinstance(timeline, tuple) and isinstance(summaries, tuple):
        return timeline, summaries
    simulation = replay.simulation(blocks=False, priced=False)
    return simulation.requests, simulation.summaries


def compaction_losses(thread: Thread, replay: ReplayLike,
                      extract: Callable[[Sequence[Message]], tuple[Fact, ...]] = extract_facts,
                      memo: LossMemo | None = None) -> tuple[CompactionLoss, ...]:
    """Every compaction of `replay`, in request order, with the fate of its span's facts. `memo`:
    reuse the fates of the compactions an earlier call on this thread judged (`LossMemo`); the
    result is the same as without it."""
    requests, summaries = _timeline(replay)
    by_id = {s.id: s for s in thread.summaries}
    by_id.update({s.id: s for s in summaries})
    state = (memo or LossMemo()).state(thread, extract)
    known = getattr(replay, "summary_spans", None)
    spans = (known() if callable(known) else None) or {}
    out: list[CompactionLoss] = []
    cwd = state.cwd
    judged = 0
    earlier: set[str] = set()  # messages an earlier compaction replaced
    for request in requests:
        compaction = request.compaction
        if compaction is None or compaction.summary_id not in by_id:
            continue
        summary = by_id[compaction.summary_id]
        ids = spans.get(summary.id) or covered_ids(replay.audit(request.index), summary, thread)
        # A summary written over the previous one (Claude Code's) replaces all history; its own
        # span is what it replaced first.
        if earlier and not earlier.isdisjoint(ids):
            ids = tuple(i for i in ids if i not in earlier)
        earlier.update(ids)
        readable = summary.readable
        key = (ids, readable, summary.injected_text() if readable else summary.retained_text())
        fates = state.fates.get(key)
        if fates is None:
            judged += 1
            fates = state.fates.put(key, fates_of(state.facts(ids), summary, cwd))
        out.append(CompactionLoss(summary.id, summary.source, request.index, request.request_id, ids,
                                  fates, readable))
    state.fates.next_call()
    state.span_facts.next_call()
    if memo is not None:
        memo.judged += judged
        memo.reused += len(out) - judged
    return tuple(out)


def fates_of(facts: Sequence[Fact], summary: Summary, cwd: str | None = None) -> tuple[FactFate, ...]:
    """Each fact judged against the summary (`judge`); where the summary cannot be read, a fact the
    agent kept verbatim beside it (`Summary.retained_text`) survived and every other one's fate is
    not known (None), never lost."""
    if summary.readable:
        return judge(facts, summary.injected_text(), cwd)
    kept = judge(facts, summary.retained_text(), cwd)
    return tuple(FactFate(f.fact, True if f.survived else None) for f in kept)


def survival_table(losses: Iterable[CompactionLoss]) -> dict[FactKind, KindCount]:
    """Totals per kind over many compactions."""
    total = {kind: KindCount() for kind in KINDS}
    for loss in losses:
        for kind, count in loss.counts().items():
            total[kind] += count
    return total
