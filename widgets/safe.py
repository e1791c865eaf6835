"""Literal display of untrusted text: the engine's neutralizing plus a rich Text that is never markup."""

from __future__ import annotations

from rich.text import Text

from inspector.terminal_safety import safe_line, safe_text

__all__ = ["literal", "safe_line", "safe_text"]


def literal(value: object, style: str = "") -> Text:
    """A rich Text holding `value` literally (no markup), control characters neutralised."""
    return Text(safe_text(value), style=style, no_wrap=False)
