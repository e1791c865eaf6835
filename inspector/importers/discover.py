"""`import --discover`: the sessions every agent keeps under its standard location (each importer's
`locations`), found without reading them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Found:
    """What one agent keeps: its transcript files and the databases it keeps (read in place)."""

    agent: str
    patterns: tuple[str, ...]
    files: tuple[Path, ...]
    databases: tuple[Path, ...]

    @property
    def count(self) -> int:
        return len(self.files) + len(self.databases)


def data_home(home: Path, env: Mapping[str, str]) -> Path:
    value = env.get("XDG_DATA_HOME")
    return Path(value) if value and os.path.isabs(value) else home / ".local" / "share"


def discover(home: Path, env: Mapping[str, str] | None = None) -> list[Found]:
    """Per registered importer with locations: what is there (sorted, each file once; links followed
    only to files)."""
    from inspector.importers import REGISTRY

    env = os.environ if env is None else env
    data = data_home(home, env)
    out: list[Found] = []
    for importer in REGISTRY.values():
        if not importer.locations:
            continue
        files: dict[Path, None] = {}
        for pattern in importer.locations:
            base, rest = (data, pattern.removeprefix("{data}/")) if pattern.startswith("{data}/") else (home, pattern)
            try:
                for path in sorted(base.glob(rest)):
                    if path.is_file():
                        files[path] = None
            except OSError:
                continue
        databases = tuple(p for p in files if p.suffix == ".db")
        out.append(Found(importer.name, importer.locations, tuple(p for p in files if p.suffix != ".db"), databases))
    return out


__all__ = ["Found", "data_home", "discover"]
