"""widgets.safe: untrusted text is neutralised before display."""

from widgets.safe import literal, safe_line, safe_text


def test_safe_text_replaces_escape_and_controls_but_keeps_newline_and_tab():
    raw = "a\x1b[31mred\x07\tb\nc\x00\x7f\x9b"
    out = safe_text(raw)
    assert "\x1b" not in out and "\x07" not in out and "\x00" not in out and "\x7f" not in out and "\x9b" not in out
    assert out.startswith("a␛[31mred␇\tb\nc␀␡")
    assert "\u24269b" in out


def test_safe_text_shows_bidi_overrides():
    assert safe_text("x\u202ey") == "x<U+202E>y"


def test_safe_line_flattens_and_cuts():
    assert safe_line("one\ntwo\tthree", limit=9) == "one two …"
    assert safe_line("short", limit=10) == "short"


def test_literal_is_not_markup():
    text = literal("[bold]not bold[/bold] \x1b]0;title\x07")
    assert text.plain == "[bold]not bold[/bold] ␛]0;title␇"
    assert text.spans == []
