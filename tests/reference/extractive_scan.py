"""The extractive summarizer's per-message scan as first written: the oracle of
`tests/data/test_extractive_scan_fast.py`.

`inspector/summarizers/extractive_scan.py` has since been tuned for speed (the path, error and
sentence scans skipped where the characters they need are missing, the rule and decision words
looked for in the lower-cased text before any sentence is searched); its `extract_features`,
`find_paths`, `_first_error_line` and `_sentences` must give the same results as these, kept
as they were, with every regex as it was."""

from __future__ import annotations

import re

from inspector.model import HARNESS_WRAPPER_RE, Message, Role, is_harness_message
from inspector.pipeline.profiles.harness.stages import CONTEXT_SUMMARY_MARKER
from inspector.summarizers.extractive_scan import (
    MAX_CHARS_PER_MESSAGE,
    MAX_ERROR_SCAN_CHARS,
    MAX_SENTENCE_CHARS,
    MAX_SENTENCES_PER_MESSAGE,
    Features,
)

_KNOWN_EXTENSIONS = (
    "py|pyi|md|rst|txt|json|jsonl|toml|yaml|yml|cfg|ini|conf|env|lock|js|mjs|cjs|ts|tsx|jsx|vue|svelte|"
    "rs|go|java|kt|swift|c|h|cc|cpp|hpp|cs|rb|php|sh|bash|zsh|sql|html|css|scss|xml|csv|log|ipynb|"
    "tcss|traj|dockerfile|mk|gradle"
)
_PATH_RE = re.compile(
    r"(?<![\w/.:-])("
    r"(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]*[\w-]\.[A-Za-z][A-Za-z0-9]{0,9}"
    r"|/(?:[\w.-]+/)+[\w.-]*\w"
    rf"|[\w-][\w.-]*\.(?:{_KNOWN_EXTENSIONS})"
    r")(?![\w/-])"
)
_PATH_CANDIDATE_RE = re.compile(r"(?<!\S)[^\s/.]*+[/.]\S*")
_URL_RE = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+(?=\S)|\n+")
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
_ERROR_RE = re.compile(
    r"^(?:FAILED|ERROR|E {2,}|Traceback|fatal:|panic:|error(?:\[\w+\])?:)"
    r"|(?:Error|Exception):\s"
    r"|\b(?:failed:|No such file or directory|Permission denied|command not found|exited with code [1-9])"
    r"|\b[1-9]\d* (?:failed|errors?)\b",
)
_ERROR_ANYWHERE_RE = re.compile(
    r"FAILED|ERROR|E {2,}|Traceback|fatal:|panic:|error(?:\[\w+\])?:"
    r"|(?:Error|Exception):\s"
    r"|\b(?:failed:|No such file or directory|Permission denied|command not found|exited with code [1-9])"
    r"|\b[1-9]\d* (?:failed|errors?)\b",
)
_LISTING_RE = re.compile(r"^\s*\d+(?:→|\t|:\s)")
_USER_DECISION_RE = re.compile(
    r"\b(decided|decide|instead|let's|go with|chose|choose|switch to)\b",
    re.IGNORECASE,
)
_DECISION_RE = re.compile(
    r"\b(decided|decide|decision|will|instead|chose|choose|going to|plan to|opted|let's|we'll|i'll)\b",
    re.IGNORECASE,
)


def _clip(sentence: str, limit: int = MAX_SENTENCE_CHARS) -> str:
    sentence = " ".join(sentence.split())
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
    if "://" in text:
        text = _URL_RE.sub(" ", text)
    return [match.rstrip(".") for run in _PATH_CANDIDATE_RE.findall(text) for match in _PATH_RE.findall(run)]


def _first_error_line(output: str) -> str | None:
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


def _is_tool_result(message: Message) -> bool:
    return message.role is Role.TOOL or message.tool_call_id is not None


def extract_features(message: Message) -> Features:
    files: list[str] = []
    text = message.content[:MAX_CHARS_PER_MESSAGE]
    for call in message.tool_calls:
        files.extend(find_paths(call.arguments_json()[:MAX_CHARS_PER_MESSAGE]))
    if _is_tool_result(message):
        output = tuple(p for p in find_paths(text) if not p.startswith(("./", "../")))
        return Features(files=tuple(files), output_files=output, error=_first_error_line(message.content))
    text = HARNESS_WRAPPER_RE.sub(" ", text)
    files.extend(find_paths(text))
    if text.startswith(CONTEXT_SUMMARY_MARKER) or is_harness_message(message):
        return Features(files=tuple(files))
    sentences = _sentences(text)
    if not sentences:
        return Features(files=tuple(files))
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
    return Features(
        files=tuple(files),
        goal=sentences[0] if message.role is Role.USER else None,
        opener=sentences[0] if talk else None,
        others=tuple(sentences[1:]) if talk else (),
        facts=tuple(facts),
        done=tuple(done),
        decisions=tuple(decisions),
    )
