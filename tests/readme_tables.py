"""The README's profile, config-key, reason-code, summarization-call and importer tables, rendered
from the profile and importer registries (and the `import --format` choices line).

`tests/profiles/test_profiles.py` fails while the README's tables differ from these; after adding or
changing a profile or an importer, `python -m tests.readme_tables` rewrites them in place.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from inspector.config import DEFAULTS, KEYS
from inspector.importers import FORMAT_NAMES
from inspector.importers import REGISTRY as IMPORTERS
from inspector.pipeline.profiles import REGISTRY
from tests.paths import README


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [_row(header), "|" + "---|" * len(header), *(_row(r) for r in rows)]


def profiles_table() -> list[str]:
    rows = [[f"`{p.name}`", p.reproduces, p.summary, ", ".join(p.sources)] for p in REGISTRY.values()]
    return _table(["profile", "reproduces", "in short", "source documents"], rows)


def _default_cell(key: str) -> str:
    """The default most profiles share, then the profiles that differ: "`200000`; shifting `8192`"."""
    values = [DEFAULTS[name][key] for name in REGISTRY]
    common = max(values, key=values.count)
    cell = f"`{common}`" if common != "" else '`""`'
    others = [f"{name} `{DEFAULTS[name][key]}`" for name in REGISTRY if DEFAULTS[name][key] != common]
    return cell + ("; " + ", ".join(others) if others else "")


def keys_table() -> list[str]:
    rows = []
    for spec in KEYS:
        meaning = spec.help + (f" ({', '.join(spec.choices)})" if spec.choices else "")
        readers = [name for name, profile in REGISTRY.items() if spec.key in profile.reads]
        read_by = "all" if len(readers) == len(REGISTRY) else ", ".join(readers) or "none"
        rows.append([f"`{spec.key}`", _default_cell(spec.key), read_by, meaning])
    return _table(["key", "default", "read by", "meaning"], rows)


def reasons_table() -> list[str]:
    docs: dict[str, tuple[str, str]] = {}
    given_by: dict[str, list[str]] = {}
    for name, profile in REGISTRY.items():
        for doc in profile.reasons:
            docs.setdefault(str(doc.code), (doc.status, doc.meaning))
            given_by.setdefault(str(doc.code), []).append(name)
    rows = []
    for code, (status, meaning) in docs.items():
        names = given_by[code]
        rows.append([f"`{code}`", status, "all" if len(names) == len(REGISTRY) else ", ".join(names), meaning])
    return _table(["code", "status", "profile", "meaning"], rows)


def summarization_table() -> list[str]:
    """How each profile's compactions write their summary, for the price of that call."""
    sends = {"history": "the conversation it would have sent next (its instruction, not in the transcript, "
                        "left out)",
             "span": "the summarized messages (and the summary they continue)"}
    models = {"thread": "the thread's own", "summarization": "`summarization.model`"}
    rows = []
    for name, profile in REGISTRY.items():
        call = profile.summarization
        if call is None:
            rows.append([f"`{name}`", "no model call (a local summary)", "-", "-", "-"])
        else:
            rows.append([f"`{name}`", sends[call.sends], "read" if call.cached else "not read", models[call.model],
                         call.source])
    return _table(["profile", "the summarization call sends", "the conversation's cache", "model", "source"], rows)


def importers_table() -> list[str]:
    rows = [[f"`{i.name}`", f"`{i.default_profile}`" if i.default_profile else "the default profile", i.reads]
            for i in sorted(IMPORTERS.values(), key=lambda i: i.name in ("native",))]
    return _table(["format", "replays under", "what becomes what"], rows)


FORMATS_LINE = "`context-inspector import PATH... [--format "


def formats_line() -> list[str]:
    return [f"{FORMATS_LINE}{'|'.join(FORMAT_NAMES)}]`"]


TABLES: dict[str, Callable[[], list[str]]] = {
    "| format | ": importers_table,
    "| profile | reproduces |": profiles_table,
    "| profile | the summarization call sends |": summarization_table,
    "| key | default | read by |": keys_table,
    "| code | status | profile |": reasons_table,
    FORMATS_LINE: formats_line,
}
"""The first cells of a table's header line in the README -> the table it must be."""


def find_table(lines: list[str], header_start: str) -> tuple[int, int]:
    """(first, end) line numbers of the README table whose header line starts with `header_start`
    (or of the one line starting so, for a line that is not a table)."""
    (first,) = [i for i, line in enumerate(lines) if line.startswith(header_start)]
    if not header_start.startswith("|"):
        return first, first + 1
    end = first
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return first, end


def rewrite(text: str) -> str:
    lines = text.split("\n")
    for header_start, render in TABLES.items():
        first, end = find_table(lines, header_start)
        lines[first:end] = render()
    return "\n".join(lines)


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else README
    path.write_text(rewrite(path.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"{path}: profile, config-key, reason-code, summarization-call and importer tables rewritten from the registries")
