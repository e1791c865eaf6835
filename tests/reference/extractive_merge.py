"""The extractive summarizer's merging of per-message features into a summary, as first written:
the oracle of `tests/data/test_extractive_merge_fast.py`.

`ExtractiveSummarizer._summarize` (`inspector/summarizers/extractive.py`) has since been tuned for
speed: it reads a span's features from arrays over the run of messages that holds it (prefix counts,
every field's items laid end to end) instead of walking the span's messages. Its summaries must be
these, field for field. Kept as it was, with `Recent` and `merge_files` as they were."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

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
    join_items,
    opening,
    word_count,
)


class Recent:
    """Distinct items, keeping the most recent `limit` in order of first appearance."""

    def __init__(self, limit: int, items: Iterable[str] = ()) -> None:
        self.limit = limit
        self.items: dict[str, None] = {}
        for item in items:
            self.add(item)

    def add(self, item: str) -> None:
        if item in self.items:
            return
        self.items[item] = None
        if len(self.items) > self.limit:
            del self.items[next(iter(self.items))]

    def tuple(self) -> tuple[str, ...]:
        return tuple(self.items)


def merge_files(files: Recent, seen_in_output: Recent) -> tuple[str, ...]:
    primary = files.tuple()
    extra = [p for p in seen_in_output.tuple() if p not in files.items]
    room = max(0, MAX_FILES - len(primary))
    return primary + tuple(extra[-room:] if room else ())


def summarize(
    features: Callable[[Message], Features],
    messages: Sequence[Message],
    previous: Summary | None,
    *,
    summary_id: str,
    before_request_id: str | None,
) -> Summary:
    files = Recent(MAX_FILES, previous.relevant_files if previous else ())
    seen_in_output = Recent(MAX_OUTPUT_FILES)
    facts = Recent(MAX_FACTS, previous.key_facts if previous else ())
    done = Recent(MAX_ACCOMPLISHMENTS)
    decisions = Recent(MAX_DECISIONS)
    errors = Recent(MAX_ERRORS)
    goals: list[str] = []
    openers: list[str] = []
    others: list[str] = []
    counts = {role: 0 for role in Role}

    for message in messages:
        counts[message.role] += 1
        f = features(message)
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
    narrative = _narrative(
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
