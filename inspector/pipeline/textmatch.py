"""Normalised text matching shared by fact extraction, survival and probes.

Pure. A text is found in another after both are normalised (case folded, quote marks made
one, backslashes made `/`, whitespace runs one space), at word boundaries.
"""

from __future__ import annotations

import functools
import re

_QUOTES = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u201c": "'", "\u201d": "'",
    "\u201e": "'", "\u00b4": "'", "\u2032": "'", "`": None, '"': "'", "\\": "/",
})


_REPLACEMENTS = tuple((chr(code), into or "") for code, into in _QUOTES.items())
"""`_QUOTES` as (character, replacement) pairs: no replacement is itself replaced, so replacing them one
after another is `str.translate(_QUOTES)`, and a `str.replace` done only where the character occurs
is several times faster on long texts than `translate` through a dict (which looks every character up)."""


def normalise(text: str) -> str:
    """Case folded, quote marks made one (`'`), backticks (markdown's code marks, not quotes) dropped,
    backslashes made `/`, whitespace runs one space."""
    for char, into in _REPLACEMENTS:
        if char in text:
            text = text.replace(char, into)
    return " ".join(text.casefold().split())


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def contains(haystack: str, needle: str, *, path: bool = False) -> bool:
    """`needle` in `haystack` (both normalised) at word boundaries; for a path the character
    before may be a `/` (a longer path ending in it), and after it a sentence's full stop."""
    if not needle:
        return False
    start = haystack.find(needle)
    first_word, last_word = _is_word(needle[0]), _is_word(needle[-1])
    while start >= 0:
        end = start + len(needle)
        before = haystack[start - 1] if start else " "
        after = haystack[end] if end < len(haystack) else " "
        if path:
            ok_before = not (_is_word(before) or before in ".-~") or (before == "/" and needle[0] != "/")
            ok_after = not (_is_word(after) or after in "/-") and not (after == "." and end + 1 < len(haystack)
                                                                   and _is_word(haystack[end + 1]))
        else:
            ok_before = not (first_word and _is_word(before))
            ok_after = not (last_word and _is_word(after))
        if ok_before and ok_after:
            return True
        start = haystack.find(needle, start + 1)
    return False


# Each pattern starts with its literal character (the digit before it checked by a look-behind after
# it): the regex engine then skips to each occurrence of the literal instead of trying every position.
_DIGIT_COMMA_RE = re.compile(r",(?<=\d,)(?=\d{3}(?!\d))")
_DIGIT_SPACE_RE = re.compile(r" (?<=\d )(?=[a-z%])")


def number_form(text: str) -> str:
    """A normalised text with thousands commas and the space between a number and its unit removed."""
    return _DIGIT_SPACE_RE.sub("", _DIGIT_COMMA_RE.sub("", text))


@functools.lru_cache(maxsize=65_536)
def path_forms(path: str) -> tuple[str, ...]:
    """The normalised path, and its last directory with its base name when it has a directory
    (remembered: a sweep judges the same facts of a thread under every config)."""
    norm = normalise(path)
    while norm.startswith("./"):
        norm = norm[2:]
    forms = [norm]
    parts = [p for p in norm.split("/") if p and p not in (".", "..", "~")]
    if len(parts) >= 2:
        tail = "/".join(parts[-2:])
        if tail != norm:
            forms.append(tail)
    return tuple(forms)


