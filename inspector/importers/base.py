"""What an importer is: the record each format module fills in and `inspector.importers.REGISTRY` lists.

Everything else about a format is derived from these records: detection (`detect_format_text` asks
each importer in registry order), the CLI's `--format` choices, the profile a thread from it replays
under by default, and the README's importer table (`tests/readme_tables.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.importers._common import ParseResult, Progress


@dataclass(frozen=True, slots=True)
class Sample:
    """What detection sees of a file: its name (lower case, `.gz` dropped) and either the objects of
    its first JSONL lines (`lines`) or the whole JSON document (`document`), never both."""

    name: str
    lines: tuple[dict[str, Any], ...] | None = None
    document: Any = None


@dataclass(frozen=True, slots=True)
class Importer:
    """One transcript format.

    `detect(sample)` says whether a file is in this format (asked in registry order: the first yes
    wins); `suffixes` are file endings that are this format whatever they hold (`.traj`);
    `parse(text, name, progress)` reads it (`companions`: it also takes a session's sub-agent files as
    `(name, text)` pairs, a fourth argument: those `companion_files(path)` names, where it is given, else
    a Claude Code session's sub-agent files; `siblings`: instead, the files of these names beside it,
    where they exist: a task folder read whole); `default_profile` is the profile its threads replay
    under unless one is chosen (None: iris); `reads` is the README's line on what becomes what;
    `locations` are where the agent keeps its sessions (`import --discover`): glob patterns under
    `~` (`{data}/...`: under `$XDG_DATA_HOME`, else `~/.local/share`); a `.db` match is a database
    the agent keeps, read in place."""

    name: str
    detect: Callable[[Sample], bool]
    parse: Callable[..., ParseResult]
    default_profile: str | None
    reads: str
    suffixes: tuple[str, ...] = ()
    companions: bool = False
    companion_files: Callable[[Path], list[Path]] | None = None
    siblings: tuple[str, ...] = ()
    locations: tuple[str, ...] = ()

    def parse_text(self, text: str, name: str, progress: Progress | None = None,
                   companions: list[tuple[str, str]] | None = None) -> ParseResult:
        if companions and self.companions:
            return self.parse(text, name, progress, companions)
        return self.parse(text, name, progress)
