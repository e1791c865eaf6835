"""Untrusted text made safe for a terminal: control and escape characters neutralized.

Pure. Text is never parsed as markup (widgets wrap it in `rich.text.Text`), and
characters a terminal would interpret are replaced by visible symbols, so an escape
sequence inside a tool output cannot move the cursor, change colours or set the
window title.
"""

from __future__ import annotations

# C0 controls map to the Unicode "control pictures" block (U+2400 + code); DEL to U+2421.
_TRANSLATION: dict[int, str] = {code: chr(0x2400 + code) for code in range(0x20) if code not in (0x09, 0x0A)}
_TRANSLATION[0x7F] = "\u2421"
# C1 controls (0x80-0x9f, CSI and OSC among them) have no pictures: a marker with the code.
_TRANSLATION.update({code: f"\u2426{code:02x}" for code in range(0x80, 0xA0)})
# Bidirectional overrides can reorder what is shown; make them visible too.
_TRANSLATION.update({code: f"<U+{code:04X}>" for code in (0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067,
                                                          0x2068, 0x2069)})


def safe_text(value: object) -> str:
    """`value` as a string whose control characters (except newline and tab) are visible symbols."""
    text = value if isinstance(value, str) else str(value)
    return text.translate(_TRANSLATION)


def safe_line(value: object, limit: int | None = None) -> str:
    """One line: newlines and tabs shown as spaces, cut to `limit` characters with an ellipsis."""
    text = safe_text(value).replace("\n", " ").replace("\t", " ")
    if limit is not None and len(text) > limit:
        return text[: max(0, limit - 1)] + "…"
    return text
