"""Untrusted text made safe for a terminal: control and escape characters neutralized.

Pure. Widgets additionally render through rich.text.Text / Content so markup is
never interpreted.
"""

from __future__ import annotations

import re

# C0 controls except tab/newline, DEL, and C1 controls (incl. CSI 0x9b, OSC 0x9d).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ .. ␟ (ESC -> ␛)
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\x{code:02x}"


def safe_text(text: str) -> str:
    """Keep newlines and tabs; show every other control character as a visible symbol."""
    return _BIDI.sub("\ufffd", _CONTROL.sub(_visible, text))


def safe_line(text: str, limit: int | None = None) -> str:
    """One line: newlines and tabs shown as spaces, optionally cut to `limit` characters."""
    out = safe_text(text).replace("\r", " ").replace("\n", " ").replace("\t", " ")
    if limit is not None and len(out) > limit:
        out = out[: max(0, limit - 1)] + "…"
    return out
