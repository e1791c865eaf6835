"""opencode's older JSON `storage/` tree, read in place: one thread per session file.

The layout (anomalyco/opencode `packages/opencode/src/storage/json-migration.ts`, commit 062aa8c0,
which reads it into `opencode.db`; the records are `MessageV2.Info` and `MessageV2.Part` of
`session/message-v2.ts`, as in the export):

    <data>/opencode/storage/session/<projectID>/<sessionID>.json   Session.Info
    <data>/opencode/storage/message/<sessionID>/<messageID>.json   MessageV2.Info
    <data>/opencode/storage/part/<messageID>/<partID>.json         MessageV2.Part

As opencode's migration does, ids come from the paths (a moved session's JSON may name another
project), messages are read in id order (opencode's ids ascend with time) and each message's parts
in id order. The session file is the one imported: its messages and parts come with it (an import of
the `storage` folder, or of opencode's data folder, reads every session once and none of the other
files on its own). The records then become a thread exactly as the export's do
(`opencode.parse` gives `session_records` to `opencode.thread_from_records`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any

from inspector.importers._common import FormatError, decode_json

KINDS = ("session", "message", "part")


def storage_kind(path: Path) -> tuple[str, Path] | None:
    """(what the file is, the storage root) for a JSON file of a storage tree (a folder holding
    `session/` and `message/`), else None: `session`, `message` or `part` two folders under those, or
    `other` (`project/`, `todo/`, `permission/`, `session_share/`: no conversation in them)."""
    if not path.name.lower().endswith(".json"):
        return None
    for root in path.parents[1:4]:
        if _is_root(root):
            inside = path.parts[len(root.parts):]
            return (inside[0] if len(inside) == 3 and inside[0] in KINDS else "other"), root
    return None


def is_member_file(path: Path) -> bool:
    """A file of a storage tree other than a session file (its messages and parts are read with their
    session, never on their own)."""
    found = storage_kind(path)
    return found is not None and found[0] != "session"


@lru_cache(maxsize=64)
def _is_root(folder: Path) -> bool:
    """A folder holding `session/` and `message/` (asked once per folder, not once per file of it)."""
    try:
        return (folder / "session").is_dir() and (folder / "message").is_dir()
    except OSError:
        return False


def _json_files(folder: Path) -> list[Path]:
    try:
        return sorted((f for f in folder.iterdir() if f.name.lower().endswith(".json") and f.is_file()),
                      key=lambda f: f.name)
    except OSError:
        return []


def member_files(session_file: Path) -> list[Path]:
    """The message files of a storage session (id order), then each message's part files (id order)."""
    found = storage_kind(session_file)
    if found is None or found[0] != "session":
        return []
    root = found[1]
    session_id = session_file.name[: -len(".json")]
    messages = _json_files(root / "message" / session_id)
    parts = [p for m in messages for p in _json_files(root / "part" / m.name[: -len(".json")])]
    return [*messages, *parts]


def is_session_document(doc: Any, name: str) -> bool:
    """A storage session file: `Session.Info` (an `id` and `time`, no `messages`) under `session/<project>/`."""
    parts = PurePath(name.replace("\\", "/")).parts
    return (len(parts) >= 3 and parts[-3] == "session" and isinstance(doc, dict) and isinstance(doc.get("id"), str)
            and isinstance(doc.get("time"), dict) and "messages" not in doc and "info" not in doc)


def _record(text: str, name: str, skipped: list[str]) -> dict[str, Any] | None:
    try:
        value = decode_json(text)
    except ValueError as exc:  # JSONDecodeError included
        skipped.append(f"{name}: not JSON ({' '.join(str(exc).split())[:120]}); skipped")
        return None
    if not isinstance(value, dict):
        skipped.append(f"{name}: not a JSON object; skipped")
        return None
    return value


def session_records(text: str, name: str, companions: Sequence[tuple[str, str]],
                    skipped: list[str]) -> tuple[dict[str, Any], list[tuple[dict[str, Any], list[dict[str, Any]]]]]:
    """(the session's info, its messages' `(info, parts)` in id order) from the session file `name`
    (text `text`) and its message and part files as `companions` (name, text); what cannot be read
    is a line in `skipped`."""
    session = _record(text, name, skipped)
    if session is None:
        raise FormatError(f"{name}: not an opencode storage session (a JSON object)")
    session = {**session, "id": PurePath(name).name.removesuffix(".json")}  # ids from the paths, as opencode
    infos: dict[str, dict[str, Any]] = {}
    parts: dict[str, list[dict[str, Any]]] = {}
    for cname, ctext in companions:
        path = PurePath(cname.replace("\\", "/"))
        kind, owner, own_id = path.parent.parent.name, path.parent.name, path.name.removesuffix(".json")
        record = _record(ctext, cname, skipped)
        if record is None:
            continue
        if kind == "message":
            infos[own_id] = {**record, "id": own_id}
        elif kind == "part":
            parts.setdefault(owner, []).append({**record, "id": own_id})
    for owner in sorted(set(parts) - set(infos)):
        skipped.append(f"{name}: {len(parts[owner])} part file(s) of message {owner}, which has no message file; "
                       "skipped")
    return session, [(infos[mid], parts.get(mid, [])) for mid in sorted(infos)]


__all__ = ["is_member_file", "is_session_document", "member_files", "session_records", "storage_kind"]
