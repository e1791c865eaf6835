"""Issue 26 item 1: opencode's older JSON `storage/` tree, read in place with no `--format`.

Written to opencode's own layout: anomalyco/opencode `packages/opencode/src/storage/json-migration.ts`
at commit 062aa8c0 (which reads `storage/session/<projectID>/<sessionID>.json`,
`storage/message/<sessionID>/<messageID>.json` and `storage/part/<messageID>/<partID>.json`, ids taken
from the paths) with the `MessageV2.Info` / `MessageV2.Part` records of `session/message-v2.ts` (commit
007a9409), the same records as `opencode export`'s. The expected figures are those of the export
test's own small parser (`tests/data/test_import_opencode.py::_expected`), and the tree must give the
very thread the export of the same records gives."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from inspector.cli import main
from inspector.importers import REGISTRY, import_paths
from inspector.store import Store
from tests.data.test_import_opencode import _expected, export


def with_part_ids(doc: dict) -> dict:
    """Every part with an id that sorts in the message's order (storage names each part file by its id)."""
    for m in doc["messages"]:
        m["parts"] = [{**p, "id": f"prt_{m['info']['id']}_{k:03d}"} for k, p in enumerate(m["parts"])]
    return doc


def write_storage(root: Path, doc: dict, project: str = "prj") -> Path:
    """`doc` (an export) as opencode's storage tree under `root`; returns the session file."""
    info = doc["info"]
    session = root / "session" / project / f"{info['id']}.json"
    session.parent.mkdir(parents=True, exist_ok=True)
    session.write_text(json.dumps(info, indent=2), encoding="utf-8")
    for m in doc["messages"]:
        mid = m["info"]["id"]
        path = root / "message" / info["id"] / f"{mid}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**m["info"], "sessionID": info["id"]}, indent=2), encoding="utf-8")
        for part in m["parts"]:
            where = root / "part" / mid / f"{part['id']}.json"
            where.parent.mkdir(parents=True, exist_ok=True)
            where.write_text(json.dumps({**part, "sessionID": info["id"], "messageID": mid}), encoding="utf-8")
    return session


def child_export() -> dict:
    doc = with_part_ids(export())
    doc["info"] = {**doc["info"], "id": "ses_2", "parentID": "ses_1", "title": "Review"}
    doc["messages"] = doc["messages"][:2]
    for m in doc["messages"]:
        m["info"] = {**m["info"], "id": m["info"]["id"].replace("msg_", "msg_c")}
    return doc


def test_the_storage_tree_imports_whole_as_the_export_does(tmp_path: Path):
    doc = with_part_ids(export())
    data = tmp_path / "opencode"  # opencode's data folder, as `import` is given it
    write_storage(data / "storage", doc)
    write_storage(data / "storage", child_export())
    (data / "storage" / "project").mkdir()
    (data / "storage" / "project" / "prj.json").write_text(json.dumps({"id": "prj", "worktree": "/home/u/proj"}))
    with Store.open(str(tmp_path / "s.sqlite"), create=True) as store:
        report = import_paths([data], store)
        thread = store.load_thread("ses_1")
        child = store.load_thread("ses_2")
        listed = {i.id: i for i in store.list_threads()}
    assert report.errors == [] and report.skipped == [], (report.errors, report.skipped)
    assert sorted(report.threads) == ["ses_1", "ses_2"]
    want = _expected(doc)
    assert [r.prompt_tokens for r in thread.requests] == want["prompts"]
    assert abs(sum(r.billed_cost for r in thread.requests) - want["cost"]) < 1e-9
    assert len([c for m in thread.messages for c in m.tool_calls]) == want["tools"] == 4
    assert len(thread.summaries) == want["compactions"] == 1
    assert thread.source == "opencode" and child.meta["parent_thread_id"] == "ses_1"
    assert listed["ses_2"].parent_thread_id == "ses_1"  # a child session sits under its parent
    # the very thread the export of the same records gives
    [exported] = REGISTRY["opencode"].parse_text(json.dumps(doc), "session.json").threads
    assert (thread.messages, thread.requests, thread.summaries) == (
        exported.messages, exported.requests, exported.summaries)
    assert [c.line() for c in report.coverage if c.line().startswith("ses_1.json")] == [
        "ses_1.json: model calls 5/5 with billed tokens, tool results 4/4, compactions 1/1"]


def test_the_cli_detects_the_tree_and_replays_it_under_the_opencode_profile(tmp_path: Path):
    write_storage(tmp_path / "storage", with_part_ids(export()))
    db = str(tmp_path / "s.sqlite")
    runner = CliRunner()
    out = runner.invoke(main, ["import", str(tmp_path / "storage"), "--db", db])
    assert out.exit_code == 0, out.output
    files = sum(1 for _ in (tmp_path / "storage").rglob("*.json"))  # the session, its messages and parts
    assert f"imported 1 thread(s) from {files} file(s); 0 warning(s)" in out.output and files == 31
    sim = json.loads(runner.invoke(main, ["simulate", "--thread", "ses_1", "--db", db, "--json", "--timeline"]).stdout)
    assert sim["profile"] == "opencode" and len(sim["requests"]) == 5


def test_bad_files_of_the_tree_are_one_line_each_and_the_rest_imports(tmp_path: Path):
    root = tmp_path / "storage"
    write_storage(root, with_part_ids(export()))
    (root / "message" / "ses_1" / "msg_09.json").write_text("{not json", encoding="utf-8")
    lost = root / "part" / "msg_99" / "prt_x.json"  # a part whose message has no file
    lost.parent.mkdir(parents=True)
    lost.write_text(json.dumps({"type": "text", "text": "lost"}), encoding="utf-8")
    stray = root / "message" / "ses_gone" / "msg_01.json"  # a message whose session has no file
    stray.parent.mkdir(parents=True)
    stray.write_text(json.dumps({"role": "user"}), encoding="utf-8")
    with Store.open(str(tmp_path / "s.sqlite"), create=True) as store:
        report = import_paths([root], store)
        thread = store.load_thread("ses_1")
    assert report.errors == [] and report.threads == ["ses_1"]
    assert len(thread.requests) == 5
    joined = "\n".join(report.skipped)
    assert "msg_09.json: not JSON" in joined
    assert f"{stray}: a message or part of opencode's storage tree whose session file is not in it" in joined
    # msg_99's part is not one of ses_1's files: the walk reports it, nothing else does
    assert f"{lost}: a message or part of opencode's storage tree" in joined
    assert len(report.skipped) == 3, report.skipped


def test_import_discover_finds_the_storage_sessions_under_opencode_s_data_folder(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    home = tmp_path / "home"
    write_storage(home / ".local" / "share" / "opencode" / "storage", with_part_ids(export()))
    db = str(tmp_path / "all.sqlite")
    runner = CliRunner()
    out = runner.invoke(main, ["import", "--discover", "--home", str(home), "--db", db])
    assert out.exit_code == 0, out.output
    assert "opencode: 1 file(s)" in out.stderr, out.stderr  # the session file; its messages come with it
    listed = json.loads(runner.invoke(main, ["threads", "--db", db, "--json"]).stdout)
    assert [(row["id"], row["requests"]) for row in listed] == [("ses_1", 5)]
