"""Agent versions as the agents' own transcripts write them (`2.1.37`, `0.140.0`, `0.128.0-alpha.1`),
and the rules of a version range: shared by the profiles whose rules change by version
(`claude_code_versions`, `codex_versions`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

Version = tuple[int, int, int]


def parse_version(version: object) -> Version | None:
    """(major, minor, patch) of a version string like `2.1.37` or `0.128.0-alpha.1` (a pre-release
    suffix is dropped); None when it is not one."""
    if not isinstance(version, str):
        return None
    parts = version.strip().split(".")
    numbers: list[int] = []
    for part in parts[:3]:
        digits = part.split("-", 1)[0].split("+", 1)[0]
        if not digits.isdigit():
            return None
        numbers.append(int(digits))
    if len(numbers) < 2:
        return None
    while len(numbers) < 3:
        numbers.append(0)
    return numbers[0], numbers[1], numbers[2]


class Ranged(Protocol):
    since: Version


R = TypeVar("R", bound=Ranged)


def in_range(ranges: Sequence[R], version: object) -> R:
    """The range a version falls in (`ranges` oldest first, the first from (0, 0, 0)); the newest
    where the version is unknown or unreadable."""
    parsed = parse_version(version)
    if parsed is None:
        return ranges[-1]
    found = ranges[0]
    for rules in ranges:
        if rules.since <= parsed:
            found = rules
    return found
