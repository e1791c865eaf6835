"""What the extractive summarizer finds in one message: the patterns (paths, URLs, rules,
decisions, errors), the caps on how much of a message is scanned, and `extract_features`, the
per-message scan the summarizer caches. Kept apart from `extractive` so the summarizer module
is the merging of features into a summary, and this one the reading of a message."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from inspector.model import HARNESS_WRAPPER_RE, Message, Role, is_harness_message
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
# Harness wrappers in user content (Claude Code's command echoes, reminders, sub-agent reports): not
# the user's words (`inspector.model.HARNESS_WRAPPER_RE`).

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
# What every match of _ERROR_ANYWHERE_RE holds: one of these substrings (those with a capital, those
# with a colon, the rest), or a count (a digit, a space) before "failed" or "error". Looking for them
# (a substring search is a fast scan; that regex is tried at every position) rules out the outputs
# that hold no error line, most of them.
_ERROR_CAPITALS = ("FAILED", "ERROR", "E  ", "Traceback", "Error:", "Exception:", "No such file or directory",
                   "Permission denied")
_ERROR_COLONS = ("error:", "failed:", "fatal:", "panic:")
_ERROR_OTHERS = ("error[", "command not found", "exited with code ")
# each starts with its word (the regex engine skips to it), the count looked for behind it
_ERROR_COUNT_RES = (re.compile(r"failed(?<=\d failed)"), re.compile(r"error(?<=\d error)"))
_LISTING_RE = re.compile(r"^\s*\d+(?:→|\t|:\s)")  # numbered file listings (cat -n, Read tools)
_USER_DECISION_RE = re.compile(
    r"\b(decided|decide|instead|let's|go with|chose|choose|switch to)\b",
    re.IGNORECASE,
)
_DECISION_RE = re.compile(
    r"\b(decided|decide|decision|will|instead|chose|choose|going to|plan to|opted|let's|we'll|i'll)\b",
    re.IGNORECASE,
)

# What a match of each of these regexes holds, lower-cased (a word of each alternative): a sentence
# can match only where its message's text, lower-cased, holds one of them (see `_word_gate`).
_RULE_WORDS = ("correct", "never", "always", "must", "don't", "not", "doesn't", "should", "important", "remember",
               "rule", "sure", "avoid", "only", "instead", "prefer", "keep", "preserve")
_DONE_WORDS = ("fixed", "added", "created", "updated", "passe", "implemented", "wrote", "written", "removed",
               "refactored", "resolved", "completed", "finished", "renamed", "installed", "merged", "moved",
               "deleted", "changed", "replaced", "configured", "succeeded")
_DECISION_WORDS = ("decid", "decision", "will", "instead", "chose", "choose", "going", "plan", "opted", "let's",
                   "we'll", "i'll")
_USER_DECISION_WORDS = ("decide", "instead", "let's", "with", "chose", "choose", "switch")
# The characters other than a letter's two cases that the regexes' IGNORECASE matches to an ASCII
# letter but `str.lower` does not map to it: İ (to "i" and a combining dot), ı (i), ſ (s). The
# Kelvin sign, the only other, lower-cases to k.
_CASE_EXTRAS = ("\u0130", "\u0131", "\u017f")

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
    if "." in text or "!" in text or "?" in text:
        pieces = _SENTENCE_SPLIT_RE.split(text)
    else:  # only the newline runs split: the empty pieces between two newlines make no sentence
        pieces = text.split("\n")
    for raw in pieces:
        sentence = _clip(raw.strip(" \t-*•>#"))
        if len(sentence) >= 3:
            out.append(sentence)
            if len(out) >= MAX_SENTENCES_PER_MESSAGE:
                break
    return out


def find_paths(text: str) -> list[str]:
    """File paths mentioned in `text`, in order of appearance (URLs are skipped)."""
    if "/" not in text and "." not in text:  # every path holds one (and every URL a "/")
        return []
    if "://" in text:  # every URL has one
        text = _URL_RE.sub(" ", text)
    return [match.rstrip(".") for run in _PATH_CANDIDATE_RE.findall(text) for match in _PATH_RE.findall(run)]


class Recent:
    """Distinct items, keeping the most recent `limit` in order of first appearance."""

    def __init__(self, limit: int, items: Iterable[str] = ()) -> None:
        self.limit = limit
        self.items: dict[str, None] = {}
        seq = items if isinstance(items, (tuple, list)) else tuple(items)
        start = dict.fromkeys(seq)
        if len(start) == len(seq):  # distinct (a previous summary's field): adding each keeps the last `limit`
            self.items = start if len(start) <= limit else dict.fromkeys(seq[len(seq) - limit:])
            return
        for item in seq:
            self.add(item)

    def add(self, item: str) -> None:
        key = item
        if key in self.items:
            return
        self.items[key] = None
        if len(self.items) > self.limit:
            del self.items[next(iter(self.items))]

    def add_all(self, items: Sequence[str]) -> None:
        """`add` each of `items` in order."""
        if not items:
            return
        held, limit = self.items, self.limit
        merged = held | dict.fromkeys(items)
        if len(merged) <= limit:  # never more than `limit`, so none dropped: first appearances, in order
            self.items = merged
            return
        for item in items:
            if item not in held:
                held[item] = None
                if len(held) > limit:
                    del held[next(iter(held))]

    def __len__(self) -> int:
        return len(self.items)

    def tuple(self) -> tuple[str, ...]:
        return tuple(self.items)


def _is_tool_result(message: Message) -> bool:
    return message.role is Role.TOOL or message.tool_call_id is not None


def is_harness_meta(message: Message) -> bool:
    """Messages written by the harness, not the user (caveats, command echoes, sub-agent reports)."""
    return is_harness_message(message)


def merge_files(files: Recent, seen_in_output: Recent) -> tuple[str, ...]:
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
    if not _may_report(scanned):
        return None
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


def _may_report(text: str) -> bool:
    """False where `_ERROR_ANYWHERE_RE.search(text)` finds nothing (True need not mean it finds one)."""
    if text.lower() != text:  # equal: no capital letter (lower-casing and comparing are fast scans)
        for literal in _ERROR_CAPITALS:
            if literal in text:
                return True
    if ":" in text:
        for literal in _ERROR_COLONS:
            if literal in text:
                return True
    for literal in _ERROR_OTHERS:
        if literal in text:
            return True
    return any(regex.search(text) is not None for regex in _ERROR_COUNT_RES)


def _split_lazily(text: str) -> Iterator[str]:
    """`_SENTENCE_SPLIT_RE.split(text)`, one piece at a time (the pattern never matches empty)."""
    start = 0
    for match in _SENTENCE_SPLIT_RE.finditer(text):
        yield text[start : match.start()]
        start = match.end()
    yield text[start:]


@lru_cache(maxsize=1024)
def opening(previous_narrative: str) -> str:
    """": <first sentence of content>" of the previous narrative (not its framing), or "".

    The same choice as `_sentences(previous_narrative)` filtered for framing, but clips only
    up to the sentence it returns: a what-if replay writes hundreds of chained summaries."""
    seen = 0
    for raw in _split_lazily(previous_narrative):
        stripped = raw.strip(" \t-*•>#")
        # Starting with the framing, it starts with it clipped too (its words kept, single-spaced,
        # and far more than the framing's length kept): no need to clip it.
        if not stripped.startswith(_FRAMING):
            sentence = _clip(stripped)
            if len(sentence) < 3:
                continue
            if not sentence.startswith(_FRAMING):
                # clipped already: clipping again to 160 only cuts it (its whitespace is single spaces)
                short = sentence if len(sentence) <= 160 else sentence[:159].rstrip() + "…"
                return f": {short.rstrip('.')}"
        seen += 1
        if seen >= MAX_SENTENCES_PER_MESSAGE:
            break
    return ""


def word_count(text: str) -> int:
    return len(text.split())


def join_items(items: Sequence[str]) -> str:
    return " ".join(s if s.endswith((".", "!", "?", "…")) else s + "." for s in items)


@dataclass(frozen=True, slots=True)
class Features:
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


def _never(sentence: str) -> None:
    return None


def _word_gate(text: str) -> Callable[[tuple[str, ...], re.Pattern[str]], Callable[[str], object]]:
    """gate(words, regex): `regex.search`, or a search that finds nothing where `text` (the text the
    sentences are cut from), lower-cased, holds none of `words`. Sound because each match's letters
    come from one word of `text` (a sentence is the text's words joined by single spaces, clipped),
    each matched letter is an ASCII letter of either case (but for `_CASE_EXTRAS`: then no gate), and
    lower-casing a text maps each of those letters in place to its lower case."""
    if not text.isascii() and any(extra in text for extra in _CASE_EXTRAS):
        return lambda words, regex: regex.search
    lowered = text.lower()

    def gate(words: tuple[str, ...], regex: re.Pattern[str]) -> Callable[[str], object]:
        for word in words:
            if word in lowered:
                return regex.search
        return _never

    return gate


def extract_features(message: Message) -> Features:
    """Scan one message (at most MAX_CHARS_PER_MESSAGE of it) for the summary's fields."""
    files: list[str] = []
    text = message.content[:MAX_CHARS_PER_MESSAGE]
    for call in message.tool_calls:
        files.extend(find_paths(call.arguments_json()[:MAX_CHARS_PER_MESSAGE]))
    if _is_tool_result(message):
        # Tool output is scanned for paths and errors only; relative imports ("../x.js") are noise.
        output = tuple(p for p in find_paths(text) if not p.startswith(("./", "../")))
        return Features(files=tuple(files), output_files=output, error=_first_error_line(message.content))
    if "<" in text:  # every wrapper starts with one
        text = HARNESS_WRAPPER_RE.sub(" ", text)
    files.extend(find_paths(text))
    if text.startswith(CONTEXT_SUMMARY_MARKER) or is_harness_meta(message):
        return Features(files=tuple(files))
    sentences = _sentences(text)
    if not sentences:
        return Features(files=tuple(files))
    facts: list[str] = []
    done: list[str] = []
    decisions: list[str] = []
    role = message.role
    gate = _word_gate(text)  # each regex's search, or none where the text holds none of its words
    if role is Role.ASSISTANT:
        did, decided = gate(_DONE_WORDS, _DONE_RE), gate(_DECISION_WORDS, _DECISION_RE)
        for sentence in sentences:
            if did(sentence):
                done.append(sentence)
            elif decided(sentence):
                decisions.append(sentence)
    elif role in (Role.USER, Role.SYSTEM):
        rule = gate(_RULE_WORDS, _RULE_RE)
        chose = gate(_USER_DECISION_WORDS, _USER_DECISION_RE) if role is Role.USER else _never
        for sentence in sentences:
            if rule(sentence):
                facts.append(sentence)
            if chose(sentence) and not rule(sentence):
                decisions.append(sentence)
    talk = message.role in (Role.USER, Role.ASSISTANT)
    return Features(
        files=tuple(files),
        goal=sentences[0] if message.role is Role.USER else None,
        opener=sentences[0] if talk else None,
        others=tuple(sentences[1:]) if talk else (),
        facts=tuple(facts),
        done=tuple(done),
        decisions=tuple(decisions),
    )
