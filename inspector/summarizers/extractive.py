"""An offline, deterministic summarizer that picks sentences instead of writing them.

It fills what simple patterns can find: the narrative, relevant files, active goals,
key facts (corrections and rules), accomplishments, key decisions and, as unresolved
threads, the error lines of recent tool outputs; the emotional and relationship fields
stay empty. Each message's text is capped before scanning, so the cost grows with the
number of messages, not with the size of their outputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

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
    word_count,
)

FEATURE_CACHE_SIZE = 200_000


class ExtractiveSummarizer:
    """Summarizer protocol implementation: deterministic, offline, no model.

    Each message is scanned once (per-message features are cached by id and content), so
    the many summaries of a what-if replay, and of the next replay, cost little more
    than merging those features.
    """

    name = "extractive"

    _cache: dict[tuple, Features] | None = None
    _by_object: dict[int, tuple[Message, Features]] | None = None
    _spans: dict[tuple, Summary] | None = None

    def prepare(self, messages: Iterable[Message]) -> None:
        """Scan `messages` ahead of any summary that may cover them. The app does this in the
        background once a thread is shown, so the first what-if edit that compacts much of a
        long thread (whose recorded summaries the baseline followed) writes summaries at once."""
        for message in messages:
            self._features(message)

    def sharing_features(self) -> ExtractiveSummarizer:
        """A summarizer that reuses this one's per-message features but none of its summaries:
        what a what-if replay in the app starts from (benchmarks use it to time that case)."""
        other = ExtractiveSummarizer()
        if self._cache is None:
            self._cache = {}
        if self._by_object is None:
            self._by_object = {}
        other._cache, other._by_object = self._cache, self._by_object
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
        files = Recent(MAX_FILES, previous.relevant_files if previous else ())
        seen_in_output = Recent(MAX_OUTPUT_FILES)  # paths only tool output mentions
        facts = Recent(MAX_FACTS, previous.key_facts if previous else ())
        done = Recent(MAX_ACCOMPLISHMENTS)
        decisions = Recent(MAX_DECISIONS)
        errors = Recent(MAX_ERRORS)  # the first error line of recent tool outputs
        goals: list[str] = []
        openers: list[str] = []  # first sentence of each user/assistant message, in order
        others: list[str] = []  # later sentences, used only to reach MIN_WORDS
        counts = {role: 0 for role in Role}

        for message in messages:
            counts[message.role] += 1
            f = self._features(message)
            for path in f.files:
                files.add(path)
            for path in f.output_files:
                seen_in_output.add(path)
            if f.error:
                errors.add(f.error)
            if f.goal:
                goals.append(f.goal)
            if f.opener:
                openers.append(f.opener)
                if len(others) < MAX_FILLER_SENTENCES:
                    others.extend(f.others)
            for sentence in f.facts:
                facts.add(sentence)
            for sentence in f.done:
                done.add(sentence)
            for sentence in f.decisions:
                decisions.add(sentence)

        active_goals = tuple(goals[-MAX_GOALS:]) or (previous.active_goals if previous else ())
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
            fillers=openers + others,
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
        fillers: Sequence[str],
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
        used = {s for s in (*active_goals, *facts, *done, *decisions)}
        words = sum(word_count(p) for p in parts)
        chosen: list[str] = []
        for sentence in fillers:
            if words >= MIN_WORDS:
                break
            if sentence in used:
                continue
            used.add(sentence)
            chosen.append(sentence)
            words += word_count(sentence)
        if chosen:
            parts.append("Along the way: " + join_items(chosen))
        text = " ".join(parts)
        tokens = text.split()
        if len(tokens) > MAX_WORDS:
            text = " ".join(tokens[:MAX_WORDS]).rstrip(".,;:") + "…"
        return text
