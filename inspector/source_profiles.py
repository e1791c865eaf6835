"""The profile a thread of each source (an importer's name) replays under unless one is chosen.

A record of the importers' own `default_profile`s (`inspector.importers.REGISTRY`, which the
tests pin it to), light enough for a replay to read without importing every importer: the
database readers among them pull in SQLAlchemy and the store, a second of a first replay."""

from __future__ import annotations

SOURCE_PROFILES: dict[str, str] = {
    "claude-code": "claude-code",
    "codex": "codex",
    "gemini-cli": "gemini-cli",
    "opencode": "opencode",
}
"""Source -> its importer's default profile (the sources absent replay under the default profile)."""


def source_profile(source: str | None) -> str | None:
    """`inspector.importers.default_profile(source)`, without importing the importers."""
    return SOURCE_PROFILES.get(source or "")
