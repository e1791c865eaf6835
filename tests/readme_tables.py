"""The README's profile, config-key, reason-code and summarization-call tables, rendered from the
profile registry.

`tests/test_profiles.py` fails while the README's tables differ from these; after adding or
changing a profile, `python -m tests.readme_tables` rewrites them in place.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from inspector.config import DEFAULTS, KEYS
from inspector.pipeline.profiles import REGISTRY

README = Path(__file__).resolve().parents[1] / "README.md"


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


TABLES: dict[str, Callable[[], list[str]]] = {
    "| profile | reproduces |": profiles_table,
    "| profile | the summarization call sends |": summarization_table,
    "| key | default | read by |": keys_table,
    "| code | status | profile |": reasons_table,
}
"""The first cells of a table's header line in the README -> the table it must be."""


def find_table(lines: list[str], header_start: str) -> tuple[int, int]:
    """(first, end) line numbers of the README table whose header line starts with `header_start`."""
    (first,) = [i for i, line in enumerate(lines) if line.startswith(header_start)]
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
    print(f"{path}: profile, config-key, reason-code and summarization-call tables rewritten from the registry")
