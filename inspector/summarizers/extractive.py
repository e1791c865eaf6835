"""An offline, deterministic summarizer that picks sentences instead of writing them.

It fills what simple patterns can find: the narrative, relevant files, active goals,
key facts (corrections and rules), accomplishments, key decisions and, as unresolved
threads, the error lines of recent tool outputs; the emotional and relationship fields
stay empty. Each message's text is capped before scanning, so the cost grows with the
number of messages, not with the size of their outputs.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import accumulate, chain, compress, islice, repeat
from operator import eq
from threading import Lock

from inspector.model import Message, Role, Summary
from inspector.summarizers.extractive_scan import (
    MAX_ACCOMPLISHMENTS,
    MAX_DECISIONS,
    MAX_ERRORS,
    MAX_FACTS,
    MAX_FILES,
    MAX_FILLER_SENTENCES,
    MAX_GOALS,
    MAX_NARRATIVE_FILES,
    MAX_OUTPUT_FILES,
    MAX_WORDS,
    MIN_WORDS,
    Features,
    Recent,
    extract_features,
    is_harness_meta,
    join_items,
    merge_files,
    opening,
)

FEATURE_CACHE_SIZE = 200_000
RUN_SIZE = 200_000
"""Messages a run holds at most before the next span that is not in it starts a new one."""


class _Run:
    """Messages laid end to end, with what their features give a summary, as arrays over them: a
    span [a, b) of the run has `users[b] - users[a]` user messages, its files are
    `files[files_at[a]:files_at[b]]` (the messages' files in order), and so on for every field.
    Only ever appended to (under `_Runs.lock`): a reader of [a, b) never sees it change."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.where: dict[int, int] = {}  # id(message) -> its last place in `messages`
        self.users, self.assistants, self.tools = _offsets(), _offsets(), _offsets()
        self.files: list[str] = []
        self.output_files: list[str] = []
        self.errors: list[str] = []
        self.goals: list[str] = []
        self.openers: list[str] = []
        self.others: list[str] = []  # the later sentences of the messages with an opener
        self.facts: list[str] = []
        self.done: list[str] = []
        self.decisions: list[str] = []
        self.files_at, self.output_files_at, self.errors_at = _offsets(), _offsets(), _offsets()
        self.goals_at, self.openers_at, self.others_at = _offsets(), _offsets(), _offsets()
        self.facts_at, self.done_at, self.decisions_at = _offsets(), _offsets(), _offsets()

    def extend(self, messages: Sequence[Message], features: Callable[[Message], Features]) -> None:
        """Append `messages`: all of them or, where a scan or a role fails, none (the arrays stay aligned)."""
        scanned = [features(message) for message in messages]
        roles = [message.role for message in messages]
        if not _COUNTED.issuperset(roles):
            raise KeyError(next(role for role in roles if role not in _COUNTED))  # as counting by role did
        at = len(self.messages)
        self.where.update(zip(map(id, messages), range(at, at + len(messages)), strict=True))
        self.messages.extend(messages)
        for counts, role in ((self.users, Role.USER), (self.assistants, Role.ASSISTANT), (self.tools, Role.TOOL)):
            counts.extend(_running(counts[-1], map(eq, roles, repeat(role))))
        for items, offsets, each in (
            (self.files, self.files_at, [f.files for f in scanned]),
            (self.output_files, self.output_files_at, [f.output_files for f in scanned]),
            (self.facts, self.facts_at, [f.facts for f in scanned]),
            (self.done, self.done_at, [f.done for f in scanned]),
            (self.decisions, self.decisions_at, [f.decisions for f in scanned]),
            (self.others, self.others_at, [f.others if f.opener else () for f in scanned]),
        ):
            items.extend(chain.from_iterable(each))
            offsets.extend(_running(offsets[-1], map(len, each)))
        for items, offsets, each in (
            (self.errors, self.errors_at, [f.error for f in scanned]),
            (self.goals, self.goals_at, [f.goal for f in scanned]),
            (self.openers, self.openers_at, [f.opener for f in scanned]),
        ):
            present = list(map(bool, each))
            items.extend(compress(each, present))
            offsets.extend(_running(offsets[-1], present))


def _offsets() -> array[int]:
    """[0], as machine integers (a run's arrays hold a dozen of them per message)."""
    return array("q", (0,))


def _running(start: int, steps: Iterable[int]) -> Iterator[int]:
    """start + steps[0], start + steps[0] + steps[1], ..."""
    return islice(accumulate(steps, initial=start), 1, None)


_COUNTED = frozenset(Role)
"""The roles a summary counts messages of (`Role`: a message of any other fails, as it always has)."""


class _Runs:
    """The run that spans are looked for in, shared by the summarizers that share features."""

    def __init__(self) -> None:
        self.lock = Lock()
        self.current = _Run()


class ExtractiveSummarizer:
    """Summarizer protocol implementation: deterministic, offline, no model.

    Each message is scanned once (per-message features are cached by id and content), and
    laid out once in a run (`_Run`: the features as arrays over the messages, end to end), so
    the many summaries of a what-if replay, and of the next replay, cost a few slices of those
    arrays each, not a walk over their spans.
    """

    name = "extractive"

    _cache: dict[tuple, Features] | None = None
    _by_object: dict[int, tuple[Message, Features]] | None = None
    _spans: dict[tuple, Summary] | None = None
    _runs: _Runs | None = None

    def prepare(self, messages: Iterable[Message]) -> None:
        """Scan `messages` ahead of any summary that may cover them. The app does this in the
        background once a thread is shown (a chunk at a time, in order: the chunks lay the thread out
        as one run), so the first what-if edit that compacts much of a long thread (whose recorded
        summaries the baseline followed) writes summaries at once."""
        span = list(messages)
        if span:
            self._locate(span)

    def sharing_features(self) -> ExtractiveSummarizer:
        """A summarizer that reuses this one's per-message features but none of its summaries:
        what a what-if replay in the app starts from (benchmarks use it to time that case)."""
        other = ExtractiveSummarizer()
        if self._cache is None:
            self._cache = {}
        if self._by_object is None:
            self._by_object = {}
        if self._runs is None:
            self._runs = _Runs()
        other._cache, other._by_object, other._runs = self._cache, self._by_object, self._runs
        return other

    def _features(self, message: Message) -> Features:
        # Fast path: the same Message object as last time (a replay of the same loaded thread).
        # The entry holds the message, so its id() cannot be reused while the entry lives.
        if self._by_object is None:
            self._by_object = {}
        known = self._by_object.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        features = self._features_by_content(message)
        if len(self._by_object) >= FEATURE_CACHE_SIZE:
            self._by_object.clear()
        self._by_object[id(message)] = (message, features)
        return features

    def _features_by_content(self, message: Message) -> Features:
        if self._cache is None:
            self._cache = {}
        key = (
            message.id,
            str(message.role),
            str(message.kind),
            message.content,
            is_harness_meta(message),
            tuple((c.id, c.name) for c in message.tool_calls),
        )
        hit = self._cache.get(key)
        if hit is None:
            hit = extract_features(message)
            if len(self._cache) >= FEATURE_CACHE_SIZE:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    def summarize(
        self,
        messages: Sequence[Message],
        previous: Summary | None,
        *,
        summary_id: str,
        before_request_id: str | None = None,
    ) -> Summary:
        if not messages:
            raise ValueError("cannot summarize an empty span of messages")
        # The same span after the same previous summary gives the same summary: reuse it.
        if self._spans is None:
            self._spans = {}
        span_key = (
            messages[0].id, messages[-1].id, len(messages), messages[-1].content,
            (previous.id, previous.summary, previous.key_facts, previous.relevant_files) if previous else None,
        )
        known = self._spans.get(span_key)
        if known is not None:
            return replace(known, id=summary_id, before_request_id=before_request_id)
        made = self._summarize(messages, previous, summary_id=summary_id, before_request_id=before_request_id)
        if len(self._spans) >= FEATURE_CACHE_SIZE // 10:
            self._spans.clear()
        self._spans[span_key] = made
        return made

    def _summarize(
        self,
        messages: Sequence[Message],
        previous: Summary | None,
        *,
        summary_id: str,
        before_request_id: str | None,
    ) -> Summary:
        """What walking the span's messages in order and merging their features gives (the merge as
        first written is `tests/reference/extractive_merge.py`), read from the arrays of the run
        that holds the span: a what-if replay's summaries cover stretches of the thread that other
        replays laid out already."""
        run, a = self._locate(messages)
        b = a + len(messages)
        files = Recent(MAX_FILES, previous.relevant_files if previous else ())
        files.add_all(run.files[run.files_at[a] : run.files_at[b]])
        seen_in_output = Recent(MAX_OUTPUT_FILES)  # paths only tool output mentions
        seen_in_output.add_all(run.output_files[run.output_files_at[a] : run.output_files_at[b]])
        facts = Recent(MAX_FACTS, previous.key_facts if previous else ())
        facts.add_all(run.facts[run.facts_at[a] : run.facts_at[b]])
        done = Recent(MAX_ACCOMPLISHMENTS)
        done.add_all(run.done[run.done_at[a] : run.done_at[b]])
        decisions = Recent(MAX_DECISIONS)
        decisions.add_all(run.decisions[run.decisions_at[a] : run.decisions_at[b]])
        errors = Recent(MAX_ERRORS)  # the first error line of recent tool outputs
        errors.add_all(run.errors[run.errors_at[a] : run.errors_at[b]])
        goals_at = run.goals_at
        active_goals = tuple(run.goals[max(goals_at[a], goals_at[b] - MAX_GOALS) : goals_at[b]]) or (
            previous.active_goals if previous else ()
        )
        # Each message with an opener extends the later sentences while fewer than
        # MAX_FILLER_SENTENCES are held: the messages up to the first whose start has that many.
        others_at = run.others_at
        last = bisect_left(others_at, others_at[a] + MAX_FILLER_SENTENCES, a, b)
        counts = {
            Role.USER: run.users[b] - run.users[a],
            Role.ASSISTANT: run.assistants[b] - run.assistants[a],
            Role.TOOL: run.tools[b] - run.tools[a],
        }
        relevant_files = merge_files(files, seen_in_output)
        narrative = self._narrative(
            messages,
            previous,
            counts,
            active_goals=active_goals,
            facts=facts.tuple(),
            done=done.tuple(),
            decisions=decisions.tuple(),
            errors=errors.tuple(),
            files=relevant_files[:MAX_NARRATIVE_FILES],
            fillers=chain(run.openers[run.openers_at[a] : run.openers_at[b]],
                          run.others[others_at[a] : others_at[last]]),
        )
        return Summary(
            id=summary_id,
            first_message_id=messages[0].id,
            last_message_id=messages[-1].id,
            summary=narrative,
            previous_summary_id=previous.id if previous else None,
            before_request_id=before_request_id,
            accomplishments=done.tuple(),
            key_decisions=decisions.tuple(),
            relevant_files=relevant_files,
            unresolved_threads=errors.tuple(),
            active_goals=active_goals,
            key_facts=facts.tuple(),
            source="extractive",
        )

    def _locate(self, messages: Sequence[Message]) -> tuple[_Run, int]:
        """The run holding `messages` end to end and where they start in it. A span that starts in
        the run and runs past its end extends it; any other is laid out after its end (a run holds
        what the summaries asked for, in the order they asked: a replay's spans tile the thread)."""
        if self._runs is None:
            self._runs = _Runs()
        runs = self._runs
        span = messages if isinstance(messages, list) else list(messages)
        with runs.lock:
            run = runs.current
            at = run.where.get(id(span[0]))  # the run holds its messages: an id there is this message's
            if at is not None:
                have = len(run.messages) - at
                if have >= len(span):
                    if run.messages[at : at + len(span)] == span:  # each the same message (or an equal one)
                        return run, at
                elif run.messages[at:] == span[:have]:
                    run.extend(span[have:], self._features)
                    return run, at
            if len(run.messages) + len(span) > RUN_SIZE:
                run = runs.current = _Run()  # a fresh one: a replay still reading the old one keeps it
            at = len(run.messages)
            run.extend(span, self._features)
            return run, at

    @staticmethod
    def _narrative(
        messages: Sequence[Message],
        previous: Summary | None,
        counts: dict[Role, int],
        *,
        active_goals: Sequence[str],
        facts: Sequence[str],
        done: Sequence[str],
        decisions: Sequence[str],
        errors: Sequence[str],
        files: Sequence[str],
        fillers: Iterable[str],
    ) -> str:
        """Priority-ordered parts, cut at MAX_WORDS; filler sentences only up to MIN_WORDS
        beyond the structured parts."""
        parts: list[str] = []
        noun = "message" if len(messages) == 1 else "messages"
        span = (
            f"{len(messages)} {noun} ({counts[Role.USER]} user, {counts[Role.ASSISTANT]} assistant, "
            f"{counts[Role.TOOL]} tool)"
        )
        if previous is not None:
            about = opening(previous.summary)
            parts.append(
                f"Continuing from the previous summary ({previous.first_message_id} to "
                f"{previous.last_message_id}{about}), the next {span} followed."
            )
        else:
            parts.append(f"This summary covers {span}.")
        asked = [goal for goal in active_goals if goal not in facts]
        if asked:
            parts.append("The user asked: " + join_items(asked))
        if facts:
            parts.append("Corrections and rules to keep: " + join_items(facts))
        if done:
            parts.append("Done so far: " + join_items(done))
        if decisions:
            parts.append("Decisions: " + join_items(decisions))
        if errors:
            parts.append("Errors seen: " + join_items(errors))
        if files:
            parts.append("Files involved: " + ", ".join(files) + ".")
        used = set(active_goals).union(facts, done, decisions)
        text = " ".join(parts)
        words = total = len(text.split())
        chosen: list[str] = []
        for sentence in fillers:
            if words >= MIN_WORDS:
                break
            if sentence in used:
                continue
            used.add(sentence)
            chosen.append(sentence)
            words += len(sentence.split())
        if chosen:
            along = "Along the way: " + join_items(chosen)
            text = f"{text} {along}"
            total += len(along.split())  # joining by a space neither merges words nor adds any
        if total > MAX_WORDS:
            text = " ".join(text.split()[:MAX_WORDS]).rstrip(".,;:") + "…"
        return text
