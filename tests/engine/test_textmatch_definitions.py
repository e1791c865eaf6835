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
