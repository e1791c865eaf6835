"""The messages' fact extraction as it was before the sweep's issue 28 tuning: the oracle of
`tests/engine/test_facts_fast.py`.

`inspector/pipeline/facts.py` has since been tuned for speed (the `.` and `/` of the path runs found by
`str.find`, the error markers looked for as substrings, the number regex starting with its first
character, the prompt and fence regexes run only where their literal occurs, a message's empty finds
skipped); its `message_facts`, `path_runs`, `find_paths`, `may_hold_error_line`, `find_errors`,
`find_numbers` and `find_text_commands` must give what these give, kept as they were, with every
regex as it was. Only the extraction is kept here (`Fact` and `FactKind` are the module's own)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from inspector.model import Message, Role, blank_harness, is_harness_message, tool_link_id
from inspector.pipeline.facts import Fact, FactKind
from inspector.pipeline.textmatch import normalise, number_form, path_forms

KINDS: tuple[FactKind, ...] = tuple(FactKind)


# ---------------------------------------------------------------------------
# The text of a message
# ---------------------------------------------------------------------------

TEXT, TOOL_INPUT, TOOL_OUTPUT = "text", "tool_input", "tool_output"


@dataclass(frozen=True, slots=True)
class Part:
    origin: str          # TEXT | TOOL_INPUT | TOOL_OUTPUT
    text: str
    key: str | None = None  # the argument name, for a tool input
    items: tuple[str, ...] = ()  # a list-of-strings argument, item by item


def _is_tool_result(message: Message) -> bool:
    return message.role is Role.TOOL or tool_link_id(message) is not None


def _argument_parts(value: Any, key: str | None) -> Iterator[Part]:
    if isinstance(value, str):
        if value:
            yield Part(TOOL_INPUT, value, key)
    elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        yield Part(TOOL_INPUT, " ".join(value), key, tuple(value))
    elif isinstance(value, dict):
        for k in sorted(value, key=str):
            yield from _argument_parts(value[k], str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _argument_parts(v, key)


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def source_parts(message: Message) -> list[Part]:
    """The texts facts are taken from: the content, then every string of each tool call's
    arguments (a list of strings as its items joined by spaces)."""
    parts: list[Part] = []
    if message.content:
        parts.append(Part(TOOL_OUTPUT if _is_tool_result(message) else TEXT, message.content))
    for call in message.tool_calls:
        parts.extend(_argument_parts(_arguments(call.arguments), None))
    return parts


# ---------------------------------------------------------------------------
# Extraction rules
# ---------------------------------------------------------------------------

_EXTENSIONS = (
    "py pyi md rst txt json jsonl toml yaml yml cfg ini conf env lock js mjs cjs ts tsx jsx vue svelte "
    "rs go java kt swift c h cc cpp hpp cs rb php sh bash zsh sql html css scss xml csv log ipynb "
    "tcss traj mk gradle sqlite db gz zip tar"
)
KNOWN_EXTENSIONS = frozenset(_EXTENSIONS.split())

_URL_RE = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s<>\"'`()\[\]{}]+", re.IGNORECASE)
# A maximal run of path characters holding a "/" or a "." (the possessive start keeps it linear).
_PATH_RUN_RE = re.compile(r"(?<![\w./~+@-])[\w~+@-]*+[./][\w./~+@-]*")
_EXT_RE = re.compile(r"\.([A-Za-z][A-Za-z0-9]{0,9})$")


# grep's context lines name a file as `path-LINE-text` (`cli/state.go-143`, `handlers.go-55-func`)
_GREP_CONTEXT_RE = re.compile(r"^(.*\.[A-Za-z][A-Za-z0-9]{0,9})-\d+(?:-.*)?$")
# A date or counter placeholder of a template (`docs/plans/YYYY-MM-DD-<topic>-design.md`)
_PLACEHOLDER_RE = re.compile(r"YYYY|(?<![A-Za-z])(?:MM-DD|X{3,}|N{3,})(?![A-Za-z])")


def _path_of_run(run: str) -> str | None:
    """`run` (or the part of it left after trimming) when it reads as a path, else None."""
    run = run.rstrip(".-")
    if run.startswith("@"):
        run = run[1:]
    grep = _GREP_CONTEXT_RE.match(run)
    if grep:
        run = grep.group(1)
    if len(run) < 3 or "//" in run or not any(ch.isalpha() for ch in run):
        return None
    if "/" in run:
        parts = [p for p in run.split("/") if p]
        if not parts or not any(any(ch.isalpha() for ch in p) for p in parts):
            return None
        if run.endswith("/"):
            run = run.rstrip("/")
        last = run.rsplit("/", 1)[-1]
        if _EXT_RE.search(last) and last[0] != ".":
            return run
        anchored = run.startswith("/") or (run.startswith(("~/", "./", "../")) and len(parts) >= 2)
        if anchored:
            return run if len(run) > 2 else None
        return run if len(parts) >= 3 else None
    ext = _EXT_RE.search(run)
    if ext and ext.group(1).lower() in KNOWN_EXTENSIONS and run[0] not in ".~+" and ext.start() > 0:
        return run
    return None


_DOT_OR_SLASH_RE = re.compile(r"[./]")


def path_runs(text: str) -> Iterator[re.Match[str]]:
    """`_PATH_RUN_RE.finditer(text)`, found from the `.` and `/` the runs must hold: the regex is tried
    only from the whitespace before the next of them (the run holding it starts there or after: a run
    holds no whitespace, and none ended between), not at every position of every word."""
    pos = 0
    anchor, run, rfind = _DOT_OR_SLASH_RE.search, _PATH_RUN_RE.search, text.rfind
    while (hit := anchor(text, pos)) is not None:
        at = hit.start()
        match = run(text, max(pos, rfind(" ", pos, at) + 1, rfind("\n", pos, at) + 1))
        if match is None:  # cannot be: the run holding `at` matches
            return
        yield match
        pos = match.end()


def find_paths(text: str) -> list[tuple[int, str]]:
    """(offset, path) of every path in `text` (URLs skipped)."""
    if "://" in text:
        text = _URL_RE.sub(lambda m: " " * len(m.group(0)), text)
    out: list[tuple[int, str]] = []
    for match in path_runs(text):
        run = match.group(0)
        before, after = text[match.start() - 1:match.start()], text[match.end():match.end() + 1]
        if before == "<":
            continue  # "</tag>" closes markup
        if before in (">", "}") or after in ("<", "{") or _PLACEHOLDER_RE.search(run):
            continue  # a piece of a template: `docs/plans/YYYY-MM-DD-<topic>-design.md`, `{name}.py`
        path = _path_of_run(run)
        if path is not None:
            out.append((match.start() + match.group(0).find(path), path))
    return out


def find_urls(text: str) -> list[tuple[int, str]]:
    if "://" not in text:  # every URL has one
        return []
    return [(m.start(), m.group(0).rstrip(".,;:!?")) for m in _URL_RE.finditer(text)]


_ERROR_LINE_RE = re.compile(
    r"^(?:FAILED\b|ERROR\b|E {2,}\S|Traceback \(most recent call last\)|fatal:|panic:|error(?:\[\w+\])?:)"
    r"|\b\w*(?:Error|Exception):\s"
    r"|\b(?:No such file or directory|Permission denied|command not found)\b"
    r"|\b[1-9]\d* failed\b",
)
# Every line _ERROR_LINE_RE matches holds a match of this one: most outputs need no line loop.
_ERROR_ANYWHERE_RE = re.compile(
    r"FAILED|ERROR|E {2,}|Traceback \(most recent call last\)|fatal:|panic:|error(?:\[\w+\])?:"
    r"|(?:Error|Exception):\s|No such file or directory|Permission denied|command not found|[1-9]\d* failed"
)
_LISTING_RE = re.compile(r"^\s*\d+(?:→|\t|:\s)")
_TEST_ID_RE = re.compile(r"(?<![\w/.-])[\w./-]*\w\.py::[\w:\[\]./-]*[\w\]]")
# A test id is an error where its line says it failed (`FAILED tests/x.py::t - ...`), not where it passed
_FAILURE_RE = re.compile(r"fail|error", re.IGNORECASE)
MAX_ERROR_CHARS = 300


# `_ERROR_ANYWHERE_RE` split for speed: its lower-case markers as plain substrings, the rest as one
# regex whose every branch starts with a capital or a digit (so the regex engine skips to those).
_ERROR_MARKERS = ("error:", "fatal:", "panic:", "command not found")
_ERROR_BRACKET_RE = re.compile(r"error\[\w+\]:")
_ERROR_CAPITAL_RE = re.compile(
    r"FAILED|ERROR|E {2,}|Traceback \(most recent call last\)|Error:\s|Exception:\s|No such file or directory"
    r"|Permission denied|" + "|".join(f"{digit}\\d* failed" for digit in range(1, 10)))


def may_hold_error_line(text: str) -> bool:
    """`_ERROR_ANYWHERE_RE.search(text) is not None`, several times faster on long outputs."""
    return (any(marker in text for marker in _ERROR_MARKERS)
            or ("error[" in text and _ERROR_BRACKET_RE.search(text) is not None)
            or _ERROR_CAPITAL_RE.search(text) is not None)


def find_errors(text: str, *, output: bool) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    if output and may_hold_error_line(text):
        offset = 0
        for line in text.splitlines(keepends=True):
            stripped = line.strip()
            if stripped and not _LISTING_RE.match(line) and _ERROR_LINE_RE.search(stripped):
                out.append((offset + line.find(stripped), stripped[:MAX_ERROR_CHARS].rstrip()))
            offset += len(line)
    if "::" in text:
        for m in _TEST_ID_RE.finditer(text):
            start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.end())
            if _FAILURE_RE.search(text[start:end if end >= 0 else len(text)]):
                out.append((m.start(), m.group(0)))
    return out


_SHELL_FLAGS = ("-c", "-lc", "-ic", "/c", "-Command")
_FENCE_RE = re.compile(r"^```(?:bash|sh|shell|console|zsh)[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_PROMPT_RE = re.compile(r"^[ \t]*\$ (\S.*)$", re.MULTILINE)


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def command_of_argument(value: Any) -> str | None:
    """The command a `command` / `cmd` argument runs (its first line)."""
    if isinstance(value, str):
        return _first_line(value) or None
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        for i, item in enumerate(value[:-1]):
            if item in _SHELL_FLAGS:
                return _first_line(value[i + 1]) or None
        return _first_line(" ".join(value)) or None
    return None


def find_text_commands(text: str) -> list[tuple[int, str]]:
    out = [(m.start(1), m.group(1).strip()) for m in _PROMPT_RE.finditer(text)]
    for fence in _FENCE_RE.finditer(text):
        offset = fence.start(1)
        for line in fence.group(1).splitlines(keepends=True):
            stripped = line.strip()
            if stripped and not stripped.startswith("#"):
                stripped = stripped[2:].strip() if stripped.startswith("$ ") else stripped
                if stripped:
                    out.append((offset + line.find(stripped), stripped))
            offset += len(line)
    return out


_BACKTICK_RE = re.compile(r"`([^`\n]{2,80})`")
_NAME_IN_TICKS_RE = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*(?:\(\))?")
_CALL_RE = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\((?=[^\s)]*\)|\w|\))")
_SNAKE_RE = re.compile(r"(?<![\w./-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+|_[a-z][a-z0-9_]*[a-z0-9])(?![\w/-])")
_CAMEL_RE = re.compile(r"(?<![\w./-])([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+)(?![\w/-])")
_KEY_RE = re.compile(r"(?<![\w./-])([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+)(?![\w/-])")
_CAPITAL_RE = re.compile(r"[A-Z]")
_COMMON_DOTTED = frozenset(("e.g", "i.e", "etc.", "vs.", "a.m", "p.m"))


def find_identifiers(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for m in _BACKTICK_RE.finditer(text):
        inner = m.group(1).strip()
        if _NAME_IN_TICKS_RE.fullmatch(inner) and _path_of_run(inner) is None and not inner.isdigit():
            name = inner[:-2] if inner.endswith("()") else inner
            if len(name) >= 2:
                out.append((m.start(1) + m.group(1).find(name), name))
    # Each regex below needs a character some texts lack: those texts are not scanned with it.
    for m in _CALL_RE.finditer(text) if "(" in text else ():
        name = m.group(1)
        if len(name) >= 3:
            out.append((m.start(1), name))
    if "_" in text:
        out.extend((m.start(1), m.group(1)) for m in _SNAKE_RE.finditer(text))
    if _CAPITAL_RE.search(text) is not None:
        out.extend((m.start(1), m.group(1)) for m in _CAMEL_RE.finditer(text))
    for m in _KEY_RE.finditer(text) if "." in text else ():
        key = m.group(1)
        if key not in _COMMON_DOTTED and _path_of_run(key) is None and text[m.end(1):m.end(1) + 1] != "(":
            out.append((m.start(1), key))
    return out


_UNITS = (
    r"ms|msec|µs|us|ns|s|sec|secs|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|"
    r"[kmgt]i?b|bytes?|k?tokens?|k|x|px|em|rem|lines?|files?|tests?|requests?|messages?|chars?|characters?|"
    r"turns?|calls?|steps?|items?|rows?|columns?|percent|usd|eur"
)
_NUMBER_RE = re.compile(
    rf"(?<![\w.,$])(?:\$\d[\d,]*(?:\.\d+)?(?![\w%])|\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?(?:\s?(?:{_UNITS})\b|%)"
    rf"|\d+(?:\.\d+)?(?:\s?(?:{_UNITS})\b|%))",
    re.IGNORECASE,
)


def find_numbers(text: str) -> list[tuple[int, str]]:
    return [(m.start(), m.group(0)) for m in _NUMBER_RE.finditer(text)]


_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+|\n")
_TRIGGER_RE = re.compile(r"\b(?:never|don't|don’t|dont|do not|always|must|mustn't|mustn’t|instead)\b", re.IGNORECASE)
_MARKER_RE = re.compile(r"^(?:[-*•>#]+|\d{1,3}[.)])\s*")
_LABEL_RE = re.compile(r"^[A-Za-z][\w ]{0,20}:\s+(?=\S)")
MAX_INSTRUCTION_CHARS = 400


def sentences(text: str) -> Iterator[tuple[int, str]]:
    """(offset, sentence) of `text` split after `.`, `!` or `?` followed by whitespace, and at newlines."""
    start = 0
    for m in _SENTENCE_END_RE.finditer(text):
        if m.start() > start:
            yield start, text[start:m.start()]
        start = m.end()
    if start < len(text):
        yield start, text[start:]


def find_instructions(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for offset, raw in sentences(text):
        if not _TRIGGER_RE.search(raw):
            continue
        sentence = _MARKER_RE.sub("", raw.strip(), count=1).strip()
        label = _LABEL_RE.match(sentence)
        if label and _TRIGGER_RE.search(sentence[label.end():]):
            sentence = sentence[label.end():]
        sentence = sentence.rstrip(".!?;:, \t")
        if len(sentence) < 6 or len(sentence) > MAX_INSTRUCTION_CHARS or not _TRIGGER_RE.search(sentence):
            continue
        out.append((offset + raw.find(sentence), sentence))
    return out


def message_facts(message: Message) -> list[Fact]:
    """The facts of one message, in the order they appear in its parts (duplicates kept)."""
    found: list[tuple[int, int, int, FactKind, str]] = []  # (part, offset, kind order, kind, text)
    order = {kind: i for i, kind in enumerate(KINDS)}
    user_words = message.role is Role.USER and not _is_tool_result(message) and not is_harness_message(message)
    talk = message.role in (Role.USER, Role.ASSISTANT) and not _is_tool_result(message)

    def add(part: int, hits: list[tuple[int, str]], kind: FactKind) -> None:
        found.extend((part, offset, order[kind], kind, text) for offset, text in hits if text)

    for p, part in enumerate(source_parts(message)):
        text = part.text
        if part.origin == TEXT and message.role is Role.USER:
            text = blank_harness(text)
        add(p, find_paths(text), FactKind.PATH)
        add(p, find_urls(text), FactKind.URL)
        if part.origin == TOOL_INPUT:
            if part.key in ("command", "cmd"):
                command = command_of_argument(list(part.items) if part.items else part.text)
                if command:
                    add(p, [(max(0, part.text.find(command)), command)], FactKind.COMMAND)
            continue
        add(p, find_errors(text, output=part.origin == TOOL_OUTPUT), FactKind.ERROR)
        if part.origin == TEXT and talk:
            add(p, find_text_commands(text), FactKind.COMMAND)
            add(p, find_identifiers(text), FactKind.IDENTIFIER)
            add(p, find_numbers(text), FactKind.NUMBER)
            if user_words:
                add(p, find_instructions(text), FactKind.INSTRUCTION)
    found.sort(key=lambda f: f[:3])
    return [Fact(kind, text, message.id) for _, _, _, kind, text in found]


def fact_key(fact: Fact) -> tuple[str, str]:
    """What makes two facts the same: kind and normalised text (a path without its `./`)."""
    if fact.kind is FactKind.PATH:
        return str(fact.kind), path_forms(fact.text)[0]
    if fact.kind is FactKind.NUMBER:
        return str(fact.kind), number_form(normalise(fact.text))
    return str(fact.kind), normalise(fact.text)
