"""An offline, deterministic summarizer that picks sentences instead of writing them.

It fills what simple patterns can find: the narrative, relevant files, active goals,
key facts (corrections and rules), accomplishments, key decisions and, as unresolved
threads, the error lines of recent tool outputs; the emotional and relationship fields
stay empty. Each message's text is capped before scanning, so the cost grows with the
number of messages, not with the size of their outputs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from inspector.model import Message, Role, Summary
from inspector.pipeline.profiles.harness.stages import CONTEXT_SUMMARY_MARKER

# Things that look like file paths: a relative or absolute path with a file extension,
# an absolute path of two or more parts, or a bare file name with a well-known extension.
_KNOWN_EXTENSIONS = (
    "py|pyi|md|rst|txt|json|jsonl|toml|yaml|yml|cfg|ini|conf|env|lock|js|mjs|cjs|ts|tsx|jsx|vue|svelte|"
    "rs|go|java|kt|swift|c|h|cc|cpp|hpp|cs|rb|php|sh|bash|zsh|sql|html|css|scss|xml|csv|log|ipynb|"
    "tcss|traj|dockerfile|mk|gradle"
)
_PATH_RE = re.compile(
    r"(?<![\w/.:-])("
    r"(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]*[\w-]\.[A-Za-z][A-Za-z0-9]{0,9}"  # dir/file.ext, /etc/x.conf
    r"|/(?:[\w.-]+/)+[\w.-]*\w"  # /usr/bin/python3, /etc/hosts
    rf"|[\w-][\w.-]*\.(?:{_KNOWN_EXTENSIONS})"  # README.md
    r")(?![\w/-])"
)
# No path match spans whitespace, and every alternative needs a "/" or a ".": only the
# whitespace-delimited runs holding one can hold a path (and the boundaries at a run's ends
# behave as whitespace would). The possessive run start keeps the search linear.
_PATH_CANDIDATE_RE = re.compile(r"(?<!\S)[^\s/.]*+[/.]\S*")
_URL_RE = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+(?=\S)|\n+")
_SPACE_RE = re.compile(r"\s+")
# Harness wrappers in user content (Claude Code's command echoes and reminders): not the user's words.
_WRAPPER_RE = re.compile(
    r"<(system-reminder|local-command-[\w-]+|command-[\w-]+)>.*?</\1>|<(?:system-reminder|command-[\w-]+)>",
    re.DOTALL,
)

_RULE_RE = re.compile(
    r"\b(corrections?|correct(?:ed|ing)?|never|always|must|mustn't|don't|do not|doesn't|should(?:n't| not)?|"
    r"important|remember|rule|make sure|avoid|only|instead of|not allowed|prefer|keep|preserve)\b",
    re.IGNORECASE,
)
_DONE_RE = re.compile(
    r"\b(fixed|added|created|updated|passed|passes|implemented|wrote|written|removed|refactored|resolved|"
    r"completed|finished|renamed|installed|merged|moved|deleted|changed|replaced|configured|succeeded)\b",
    re.IGNORECASE,
)
# An error report in tool output (pytest, tracebacks, shells, compilers), not code that mentions errors.
_ERROR_RE = re.compile(
    r"^(?:FAILED|ERROR|E {2,}|Traceback|fatal:|panic:|error(?:\[\w+\])?:)"
    r"|(?:Error|Exception):\s"  # = \b\w*(?:Error|Exception):\s for search(): a word start is always behind it
    r"|\b(?:failed:|No such file or directory|Permission denied|command not found|exited with code [1-9])"
    r"|\b[1-9]\d* (?:failed|errors?)\b",  # pytest's "1 failed, 3 passed"
)
# _ERROR_RE without its line anchor, searched once over the whole scanned text: any line that
# _ERROR_RE matches holds a match of this one starting in it, so the lines before the first
# match need no search of their own (most tool outputs have no match at all).
_ERROR_ANYWHERE_RE = re.compile(
    r"FAILED|ERROR|E {2,}|Traceback|fatal:|panic:|error(?:\[\w+\])?:"
    r"|(?:Error|Exception):\s"
    r"|\b(?:failed:|No such file or directory|Permission denied|command not found|exited with code [1-9])"
    r"|\b[1-9]\d* (?:failed|errors?)\b",
)
_LISTING_RE = re.compile(r"^\s*\d+(?:→|\t|:\s)")  # numbered file listings (cat -n, Read tools)
_USER_DECISION_RE = re.compile(
    r"\b(decided|decide|instead|let's|go with|chose|choose|switch to)\b",
    re.IGNORECASE,
)
_DECISION_RE = re.compile(
    r"\b(decided|decide|decision|will|instead|chose|choose|going to|plan to|opted|let's|we'll|i'll)\b",
    re.IGNORECASE,
)

_FRAMING = ("This summary covers", "Continuing from the previous summary")

MAX_CHARS_PER_MESSAGE = 4000  # text scanned per message
MAX_SENTENCES_PER_MESSAGE = 24
MAX_SENTENCE_CHARS = 240
MAX_FILES = 30
MAX_OUTPUT_FILES = 10  # of MAX_FILES, at most this many seen only in tool output
MAX_NARRATIVE_FILES = 12
MAX_GOALS = 3
MAX_FACTS = 10
MAX_ACCOMPLISHMENTS = 10
MAX_DECISIONS = 8
MAX_ERRORS = 3
MAX_ERROR_SCAN_CHARS = 1000
MAX_FILLER_SENTENCES = 200
MIN_WORDS = 150
MAX_WORDS = 300


def _clip(sentence: str, limit: int = MAX_SENTENCE_CHARS) -> str:
    sentence = " ".join(sentence.split())  # = _SPACE_RE.sub(" ", sentence).strip(): the same whitespace
    if len(sentence) <= limit:
        return sentence
    return sentence[: limit - 1].rstrip() + "…"


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for raw in _SENTENCE_SPLIT_RE.split(text):
        sentence = _clip(raw.strip(" \t-*•>#"))
        if len(sentence) >= 3:
            out.append(sentence)
            if len(out) >= MAX_SENTENCES_PER_MESSAGE:
                break
    return out


def find_paths(text: str) -> list[str]:
    """File paths mentioned in `text`, in order of appearance (URLs are skipped)."""
    if "://" in text:  # every URL has one
        text = _URL_RE.sub(" ", text)
    return [match.rstrip(".") for run in _PATH_CANDIDATE_RE.findall(text) for match in _PATH_RE.findall(run)]


class _Recent:
    """Distinct items, keeping the most recent `limit` in order of first appearance."""

    def __init__(self, limit: int, items: Iterable[str] = ()) -> None:
        self.limit = limit
        self.items: dict[str, None] = {}
        for item in items:
            self.add(item)

    def add(self, item: str) -> None:
        key = item
        if key in self.items:
            return
        self.items[key] = None
        if len(self.items) > self.limit:
            del self.items[next(iter(self.items))]

    def __len__(self) -> int:
        return len(self.items)

    def tuple(self) -> tuple[str, ...]:
        return tuple(self.items)


def _is_tool_result(message: Message) -> bool:
    return message.role is Role.TOOL or message.tool_call_id is not None


def _is_harness_meta(message: Message) -> bool:
    """Messages the importers flag as written by the harness, not the user (caveats, command echoes)."""
    return bool(message.meta.get("isMeta") or message.meta.get("command"))


def _merge_files(files: _Recent, seen_in_output: _Recent) -> tuple[str, ...]:
    """Paths from the conversation and tool calls first, then paths only tool output showed."""
    primary = files.tuple()
    extra = [p for p in seen_in_output.tuple() if p not in files.items]
    room = max(0, MAX_FILES - len(primary))
    return primary + tuple(extra[-room:] if room else ())


def _first_error_line(output: str) -> str | None:
    """The first error-report line in the head or tail of a tool output."""
    head = output[:MAX_ERROR_SCAN_CHARS]
    tail = output[-MAX_ERROR_SCAN_CHARS:] if len(output) > MAX_ERROR_SCAN_CHARS else ""
    scanned = head + "\n" + tail
    first = _ERROR_ANYWHERE_RE.search(scanned)
    if first is None:
        return None
    lines = scanned.splitlines(keepends=True)
    offset = skip = 0
    for skip, line in enumerate(lines):  # noqa: B007 - `skip` is the candidate line's index
        offset += len(line)
        if offset > first.start():
            break
    for line in lines[skip:]:
        line = line.strip()
        if line and not _LISTING_RE.match(line) and _ERROR_RE.search(line):
            return _clip(line, 160)
    return None


def _split_lazily(text: str) -> Iterator[str]:
    """`_SENTENCE_SPLIT_RE.split(text)`, one piece at a time (the pattern never matches empty)."""
    start = 0
    for match in _SENTENCE_SPLIT_RE.finditer(text):
        yield text[start : match.start()]
        start = match.end()
    yield text[start:]


@lru_cache(maxsize=1024)
def _opening(previous_narrative: str) -> str:
    """": <first sentence of content>" of the previous narrative (not its framing), or "".

    The same choice as `_sentences(previous_narrative)` filtered for framing, but clips only
    up to the sentence it returns: a what-if replay writes hundreds of chained summaries."""
    seen = 0
    for raw in _split_lazily(previous_narrative):
        sentence = _clip(raw.strip(" \t-*•>#"))
        if len(sentence) < 3:
            continue
        if not sentence.startswith(_FRAMING):
            return f": {_clip(sentence, 160).rstrip('.')}"
        seen += 1
        if seen >= MAX_SENTENCES_PER_MESSAGE:
            break
    return ""


def _word_count(text: str) -> int:
    return len(text.split())


def _join(items: Sequence[str]) -> str:
    return " ".join(s if s.endswith((".", "!", "?", "…")) else s + "." for s in items)


@dataclass(frozen=True, slots=True)
class _Features:
    """What one message contributes to any summary that covers it (computed once)."""

    files: tuple[str, ...] = ()
    output_files: tuple[str, ...] = ()
    error: str | None = None
    goal: str | None = None
    opener: str | None = None
    others: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    done: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()


def extract_features(message: Message) -> _Features:
    """Scan one message (at most MAX_CHARS_PER_MESSAGE of it) for the summary's fields."""
    files: list[str] = []
    text = message.content[:MAX_CHARS_PER_MESSAGE]
    for call in message.tool_calls:
        files.extend(find_paths(call.arguments_json()[:MAX_CHARS_PER_MESSAGE]))
    if _is_tool_result(message):
        # Tool output is scanned for paths and errors only; relative imports ("../x.js") are noise.
        output = tuple(p for p in find_paths(text) if not p.startswith(("./", "../")))
        return _Features(files=tuple(files), output_files=output, error=_first_error_line(message.content))
    text = _WRAPPER_RE.sub(" ", text)
    files.extend(find_paths(text))
    if text.startswith(CONTEXT_SUMMARY_MARKER) or _is_harness_meta(message):
        return _Features(files=tuple(files))
    sentences = _sentences(text)
    if not sentences:
        return _Features(files=tuple(files))
    facts: list[str] = []
    done: list[str] = []
    decisions: list[str] = []
    for sentence in sentences:
        if message.role in (Role.USER, Role.SYSTEM) and _RULE_RE.search(sentence):
            facts.append(sentence)
        elif message.role is Role.ASSISTANT:
            if _DONE_RE.search(sentence):
                done.append(sentence)
            elif _DECISION_RE.search(sentence):
                decisions.append(sentence)
        if message.role is Role.USER and _USER_DECISION_RE.search(sentence) and not _RULE_RE.search(sentence):
            decisions.append(sentence)
    talk = message.role in (Role.USER, Role.ASSISTANT)
    return _Features(
        files=tuple(files),
        goal=sentences[0] if message.role is Role.USER else None,
        opener=sentences[0] if talk else None,
        others=tuple(sentences[1:]) if talk else (),
        facts=tuple(facts),
        done=tuple(done),
        decisions=tuple(decisions),
    )


FEATURE_CACHE_SIZE = 200_000


class ExtractiveSummarizer:
    """Summarizer protocol implementation: deterministic, offline, no model.

    Each message is scanned once (per-message features are cached by id and content), so
    the many summaries of a what-if replay, and of the next replay, cost little more
    than merging those features.
    """

    name = "extractive"

    _cache: dict[tuple, _Features] | None = None
    _by_object: dict[int, tuple[Message, _Features]] | None = None
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

    def _features(self, message: Message) -> _Features:
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

    def _features_by_content(self, message: Message) -> _Features:
        if self._cache is None:
            self._cache = {}
        key = (
            message.id,
            str(message.role),
            str(message.kind),
            message.content,
            _is_harness_meta(message),
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
        files = _Recent(MAX_FILES, previous.relevant_files if previous else ())
        seen_in_output = _Recent(MAX_OUTPUT_FILES)  # paths only tool output mentions
        facts = _Recent(MAX_FACTS, previous.key_facts if previous else ())
        done = _Recent(MAX_ACCOMPLISHMENTS)
        decisions = _Recent(MAX_DECISIONS)
        errors = _Recent(MAX_ERRORS)  # the first error line of recent tool outputs
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
        relevant_files = _merge_files(files, seen_in_output)
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
            about = _opening(previous.summary)
            parts.append(
                f"Continuing from the previous summary ({previous.first_message_id} to "
                f"{previous.last_message_id}{about}), the next {span} followed."
            )
        else:
            parts.append(f"This summary covers {span}.")
        asked = [goal for goal in active_goals if goal not in facts]
        if asked:
            parts.append("The user asked: " + _join(asked))
        if facts:
            parts.append("Corrections and rules to keep: " + _join(facts))
        if done:
            parts.append("Done so far: " + _join(done))
        if decisions:
            parts.append("Decisions: " + _join(decisions))
        if errors:
            parts.append("Errors seen: " + _join(errors))
        if files:
            parts.append("Files involved: " + ", ".join(files) + ".")
        used = {s for s in (*active_goals, *facts, *done, *decisions)}
        words = sum(_word_count(p) for p in parts)
        chosen: list[str] = []
        for sentence in fillers:
            if words >= MIN_WORDS:
                break
            if sentence in used:
                continue
            used.add(sentence)
            chosen.append(sentence)
            words += _word_count(sentence)
        if chosen:
            parts.append("Along the way: " + _join(chosen))
        text = " ".join(parts)
        tokens = text.split()
        if len(tokens) > MAX_WORDS:
            text = " ".join(tokens[:MAX_WORDS]).rstrip(".,;:") + "…"
        return text
