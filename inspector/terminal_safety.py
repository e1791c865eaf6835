"""Untrusted text made safe for a terminal: control and escape characters neutralized.

Pure. Text is never parsed as markup (widgets wrap it in `rich.text.Text`), and
characters a terminal would interpret are replaced by visible symbols, so an escape
sequence inside a tool output cannot move the cursor, change colours or set the
window title.
"""

from __future__ import annotations

import json
import math
from typing import Any

from inspector.indented_json import indented

# C0 controls map to the Unicode "control pictures" block (U+2400 + code); DEL to U+2421.
_TRANSLATION: dict[int, str] = {code: chr(0x2400 + code) for code in range(0x20) if code not in (0x09, 0x0A)}
_TRANSLATION[0x7F] = "\u2421"
# C1 controls (0x80-0x9f, CSI and OSC among them) have no pictures: a marker with the code.
_TRANSLATION.update({code: f"\u2426{code:02x}" for code in range(0x80, 0xA0)})
# Bidirectional overrides, isolates and marks can reorder what is shown, and zero-width characters hide
# text (an id that looks like another): make them visible too. The zero-width joiners (emoji sequences,
# Persian and Indic scripts) stay.
_TRANSLATION.update({code: f"<U+{code:04X}>" for code in (0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067,
                                                          0x2068, 0x2069, 0x200E, 0x200F, 0x061C, 0x200B, 0x2060,
                                                          0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF, 0x2028, 0x2029)})


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


_INVISIBLE = (0x061C, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F),
              *range(0x2060, 0x2065), *range(0x2066, 0x206A), 0xFEFF)
JSON_UNSAFE = {code: f"\\u{code:04x}" for code in (*range(0x7F, 0xA0), *_INVISIBLE)}
"""Escaped in every JSON the app prints or writes: DEL and the C1 controls (8-bit CSI, OSC), the
bidirectional marks, overrides and isolates, zero-width characters, line and paragraph separators.
The JSON value is the same; a terminal or an editor shows them as escapes instead of obeying them."""


def _finite(value: Any) -> Any:
    """`value` with every non-finite float as null (JSON has no Infinity or NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def json_dumps(value: Any, *, indent: int | None = 2) -> str:
    """JSON any parser reads, safe in a terminal or an editor: a non-finite number (a price of 1e308
    times a count) is null, never `Infinity`; the characters of `JSON_UNSAFE` escaped."""
    text = indented(value) if indent == 2 else None
    if text is not None:
        return text.translate(JSON_UNSAFE)
    try:
        text = json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(value), indent=indent, ensure_ascii=False, allow_nan=False)
    return text.translate(JSON_UNSAFE)
