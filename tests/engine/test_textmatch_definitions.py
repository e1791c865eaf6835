"""`normalise` and `number_form` are the definitions they replaced (`str.translate` through the quote
table; look-behinds before the comma and the space), on any text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.pipeline.textmatch import _QUOTES, normalise, number_form

_QUOTE_CHARS = "".join(chr(code) for code in _QUOTES)
_texts = st.text(alphabet=st.sampled_from(_QUOTE_CHARS + "aZ9 ,.%\t\n\u00dfﬁ'/0123"), max_size=60) | st.text(max_size=40)


def _normalise_by_definition(text: str) -> str:
    return " ".join(text.translate(_QUOTES).casefold().split())


def _number_form_by_definition(text: str) -> str:
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    return re.sub(r"(?<=\d) (?=[a-z%])", "", text)


@settings(max_examples=300, deadline=None)
@given(_texts)
def test_normalise_is_translate_casefold_and_one_space(text):
    assert normalise(text) == _normalise_by_definition(text)


@settings(max_examples=300, deadline=None)
@given(_texts)
def test_number_form_drops_thousands_commas_and_the_space_before_a_unit(text):
    plain = normalise(text)
    assert number_form(plain) == _number_form_by_definition(plain)


def test_the_definitions_change_texts():
    """The companion: the texts above are ones the rules change."""
    assert normalise("Don\u2019t  `run` C:\\tmp \"x\"") == "don't run c:/tmp 'x'"
    assert number_form("1,200 ms and 12 % of 3,4567") == "1200ms and 12% of 3,4567"


_path_parts = st.text(alphabet=st.sampled_from("ab/.\0~-"), max_size=8)


@settings(max_examples=400, deadline=None)
@given(st.lists(_path_parts, max_size=5), _path_parts)
def test_a_directory_lies_in_joined_paths_as_in_each(paths, directory):
    from inspector.pipeline.survival import _Inside, _lies_in

    assert _Inside(paths).any_in(directory) == any(_lies_in(p, directory) for p in paths)


def test_a_directory_lies_in_a_path_inside_it_only():
    """The companion: both answers occur."""
    from inspector.pipeline.survival import _Inside

    inside = _Inside(["src/app/main.py", "docs/x.md"])
    assert inside.any_in("src/app") and inside.any_in("app") and inside.any_in("src")
    assert not inside.any_in("src/ap") and not inside.any_in("main.py") and not inside.any_in("docs/x")
