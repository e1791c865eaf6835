"""The store's rows read cell by cell, so a damaged cell is repaired or dropped, never a traceback.

A hand-edited or damaged database can hold any value in any SQLite column: a BLOB title, text
in `prompt_tokens`, a JSON list where `meta` must be an object, JSON that does not parse. Rows
are selected without SQLAlchemy's type processing (`raw_select`) and `RowReader.read` gives each
column the type the schema declares, with one warning per repaired cell naming the table, the
row and the column, as an import does:

- text columns: a BLOB is decoded as UTF-8 (with U+FFFD), a number becomes its text;
- integer columns: text holding an integer is read as that integer, anything else is dropped (None),
  and so is a token count or window outside 0..2**53 (a negative or 1e30 window);
- `relevance`: text holding a finite number is read, anything else dropped; flags: 0/1 and
  "true"/"false" texts;
- JSON columns: text that does not parse, or a value of the wrong shape, is kept where nothing
  is lost (`meta` that is not an object goes under `meta["stored_meta"]`) and otherwise dropped
  (a list column that is not a list becomes empty; a malformed entry of a list is left out).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Float, Integer, Select, Table, select, type_coerce
from sqlalchemy.types import NullType

from inspector.model import ToolDef
from inspector.store import convert

Warn = Callable[[str], None]

MAX_COUNT = 2**53
BOUNDS = {"prompt_tokens": (0, MAX_COUNT), "cache_read_tokens": (0, MAX_COUNT),
          "cache_write_tokens": (0, MAX_COUNT), "window": (1, MAX_COUNT)}
"""Integer cells outside these ranges are not real counts (and would overflow the pipelines): dropped."""


def raw_select(table: Table, raw: bool = True, columns: Any = None) -> Select:
    """SELECT of every column of `table` (or of `columns`, those an older store has); with `raw`, no
    result processing (values as the driver gives them: SQLite, where a cell may hold any type). Other
    databases type their columns, and their JSON columns come back decoded (`RowReader(decoded=True)`)."""
    cols = list(table.columns if columns is None else columns)
    if not raw:
        return select(*cols)
    return select(*[type_coerce(c, NullType()).label(c.name) for c in cols])


_PLAIN_TYPE: dict[str, type] = {"text": str, "int": int}
"""A text cell holding a str and an integer cell an int are the schema's values (the bounded counts
excepted); every other cell goes through `RowReader._cell`."""


def _kind(column: Any) -> str:
    t = column.type
    if isinstance(t, JSON):
        return "json"
    if isinstance(t, Boolean):
        return "flag"
    if isinstance(t, (Integer, BigInteger)):
        return "int"
    if isinstance(t, Float):
        return "float"
    return "text"


class RowReader:
    """Reads rows of one table, repairing cells (see the module docstring)."""

    def __init__(self, table: Table, where: str, warn: Warn, *, decoded: bool = False) -> None:
        self.table = table.name
        self.where = where
        self.warn = warn
        self.decoded = decoded
        """Whether the driver hands JSON columns over decoded (PostgreSQL): then a string is a JSON string."""
        self.columns = [(c.name, _kind(c)) for c in table.columns]
        self._plan = [(name, kind, _PLAIN_TYPE.get(kind) if name not in BOUNDS else None)
                      for name, kind in self.columns]
        """(column, kind, the type a cell of it has when it needs no reading: kept as it is; None: read)."""

    def read(self, row: Any, label: str | Callable[[], str]) -> dict[str, Any]:
        """The row as a dict of well-typed values; `label` names the row in warnings (e.g. `thread t,
        seq 3`), or makes that name when a warning needs it (most rows need none)."""
        out: dict[str, Any] = {}
        get = row.get
        for name, kind, plain_type in self._plan:
            value = get(name)  # None where an older store has no such column
            if value is None or type(value) is plain_type:  # a cell as the schema writes it: as it is
                out[name] = value
                continue
            out[name] = self._cell(name, kind, value, label)
        return out

    def _cell(self, name: str, kind: str, value: Any, label: str | Callable[[], str]) -> Any:
        """One cell that is not already the schema's type (or is bounded): read, repaired or dropped."""
        vtype = type(value)
        if kind == "text":
            cell = value if vtype is str else self._text(value, name, label)
        elif kind == "int":
            cell = value if vtype is int else self._int(value, name, label)
        elif kind == "float":
            cell = float(value) if vtype in (float, int) else self._float(value, name, label)
        elif kind == "flag":
            cell = bool(value) if vtype in (int, bool) else self._flag(value, name, label)
        else:
            cell = self._json(value, name, label)
        if name in BOUNDS and cell is not None:
            low, high = BOUNDS[name]
            if not low <= cell <= high:
                self._say(name, label, f"{_short(cell)} is not a token count; value dropped")
                cell = None
        elif kind == "float" and cell is not None and not math.isfinite(cell):
            self._say(name, label, f"{cell!r} is not a finite number; value dropped")
            cell = None
        return cell

    def _say(self, column: str, label: str | Callable[[], str], problem: str) -> None:
        name = label if isinstance(label, str) else label()
        self.warn(f"{self.where}: {self.table} row ({name}) column {column}: {problem}")

    def _text(self, value: Any, column: str, label: str) -> str:
        if isinstance(value, (bytes, bytearray, memoryview)):
            self._say(column, label, "a BLOB, not text; decoded as UTF-8")
            return bytes(value).decode("utf-8", "replace")
        self._say(column, label, f"a {type(value).__name__}, not text; read as its text")
        return str(value)

    def _int(self, value: Any, column: str, label: str) -> int | None:
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, (str, bytes)):
            text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
            stripped = text.strip()
            if stripped.isdigit() and len(stripped) <= 18:
                what = "a BLOB" if isinstance(value, bytes) else "text"
                self._say(column, label, f"{what} {_short(text)}, not an integer; read as {int(stripped)}")
                return int(stripped)
        self._say(column, label, f"{_short(value)} is not an integer; value dropped")
        return None

    def _float(self, value: Any, column: str, label: str) -> float | None:
        try:
            number = float(value.decode() if isinstance(value, bytes) else value)
        except (TypeError, ValueError, OverflowError, UnicodeDecodeError):
            number = math.nan
        if math.isfinite(number):
            self._say(column, label, f"text {_short(value)}, not a number; read as {number!r}")
            return number
        self._say(column, label, f"{_short(value)} is not a finite number; value dropped")
        return None

    def _flag(self, value: Any, column: str, label: str) -> bool:
        text = str(value.decode("utf-8", "replace") if isinstance(value, bytes) else value).strip().lower()
        flag = text in ("1", "true", "yes", "t", "y")
        self._say(column, label, f"{_short(value)} is not 0 or 1; read as {str(flag).lower()}")
        return flag

    def _json(self, value: Any, column: str, label: str) -> Any:
        raw = value
        if self.decoded:
            return self._shape(value, column, label, raw, None)
        if isinstance(value, (bytes, bytearray, memoryview)):
            raw = bytes(value).decode("utf-8", "replace")
        if isinstance(raw, str):
            try:
                parsed = json.loads(raw)
            except (ValueError, RecursionError):
                return self._shape(None, column, label, raw, "text that is not JSON")
        else:
            parsed = raw
        return self._shape(parsed, column, label, raw, None)

    def _shape(self, parsed: Any, column: str, label: str, raw: Any, problem: str | None) -> Any:
        if column == "arguments":  # kept as given: the provider's JSON text or an object
            return raw if problem else parsed
        if column == "meta":
            if problem is None and isinstance(parsed, dict):
                return parsed
            what = problem or f"a JSON {_json_kind(parsed)}, not an object"
            self._say(column, label, f"{what}; kept as meta.stored_meta")
            return {"stored_meta": raw if problem else parsed}
        if problem is None and isinstance(parsed, list):
            return parsed
        what = problem or f"a JSON {_json_kind(parsed)}, not a list"
        self._say(column, label, f"{what}; value dropped")
        return []


def cell_text(value: Any, thread_id: Any, column: str, store: Any) -> str:
    """A text cell of `ci_threads` as listed (a BLOB decoded, with a line in `store.warnings`)."""
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, (bytes, bytearray, memoryview)):
        store.warnings.append(f"{store_where(store)}: ci_threads row (id {thread_id}) column {column}: "
                              "a BLOB, not text; decoded as UTF-8")
        return bytes(value).decode("utf-8", "replace")
    store.warnings.append(f"{store_where(store)}: ci_threads row (id {thread_id}) column {column}: "
                          f"a {type(value).__name__}, not text; read as its text")
    return str(value)


def row_label(thread_id: str, row: Any) -> str:
    seq = row.get("seq") if hasattr(row, "get") else None
    label = f"thread {thread_id}, seq {seq}"
    if "message_seq" in row:
        label = f"thread {thread_id}, message seq {row['message_seq']}, seq {seq}"
    return label


def tools_from_cell(raw: Any, where: str, thread_id: str, warn: Any) -> tuple[ToolDef, ...]:
    out: list[ToolDef] = []
    for index, item in enumerate(raw):
        try:
            out.append(convert.tool_def_from_dict(item))
        except (ValueError, TypeError) as exc:
            warn(f"{where}: ci_threads row (id {thread_id}) column tools: entry {index}: {exc}; entry dropped")
    return tuple(out)


def summary_cells(row: dict[str, Any], where: str, thread_id: str, warn: Any) -> dict[str, Any]:
    """Emotional-marker entries that are not objects with a finite intensity are repaired (cells.py does the rest)."""
    markers = []
    for index, entry in enumerate(row.get("emotional_markers") or ()):
        label = f"{where}: ci_summaries row (thread {thread_id}, seq {row.get('seq')}) column emotional_markers"
        if not isinstance(entry, dict):
            warn(f"{label}: entry {index} is not an object; entry dropped")
            continue
        intensity = entry.get("intensity", 0.0)
        if isinstance(intensity, bool) or not isinstance(intensity, (int, float)) or not math.isfinite(intensity):
            warn(f"{label}: entry {index}: intensity {intensity!r} is not a finite number; set to 0")
            entry = {**entry, "intensity": 0.0}
        markers.append(entry)
    for key in ("id", "first_message_id", "last_message_id"):
        if row.get(key) is None:
            warn(f"{where}: ci_summaries row (thread {thread_id}, seq {row.get('seq')}) column {key}: empty; set to ''")
            row[key] = ""
    return {**row, "emotional_markers": markers}


def store_where(store: Any) -> str:
    from inspector.store.engine import mask_url

    return mask_url(store.url)


def _json_kind(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = ["RowReader", "cell_text", "raw_select", "row_label", "summary_cells", "tools_from_cell"]
