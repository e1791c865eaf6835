"""`loss` on the real Claude Code compactions: the per-kind survival table, and the file-path rows
checked against an independent count written here (paths of the covered span's tool inputs,
tool outputs and text, read straight from the JSONL, searched in the summary text)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from inspector.cli import main
from tests.paths import DEMO_DATA, REAL

if not REAL.is_dir():  # CI lays shared/ beside the clone; the demo data has gzipped copies
    REAL = DEMO_DATA
KINDS = ("path", "command", "error", "identifier", "url", "number", "instruction")
FILES = [
    "claude-code-session-with-compaction.jsonl",
    "claude-code-2.1.7-parallel-tools-3-compactions.jsonl",
    "claude-code-2.1.17-stop-hook-progress.jsonl",
    "claude-code-2.1.19-auto-and-manual-compaction.jsonl",
    "claude-code-2.1.37-progress-records.jsonl",
]
if REAL.name == "demo_data":  # without shared/, the one compacted session the demo data carries
    FILES = FILES[:1]


def _real(name: str) -> Path:
    plain = REAL / name
    return plain if plain.exists() else REAL / f"{name}.gz"


def _lines(path: Path) -> list[str]:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data.decode("utf-8").splitlines()


# ---------------------------------------------------------------------------
# The independent count: the README's path rule, written again from the JSONL up
# ---------------------------------------------------------------------------

TAGS = r"system-reminder|task-notification|user-prompt-submit-hook|(?:local-)?command-[\w-]+|bash-[\w-]+"
WRAPPER = re.compile(rf"<({TAGS})>.*?</\1>|</?(?:{TAGS})>", re.DOTALL)
GREP_CONTEXT = re.compile(r"^(.*\.[A-Za-z][A-Za-z0-9]{0,9})-\d+(?:-.*)?$")  # `state.go-143`: grep -A/-B output
PLACEHOLDER = re.compile(r"YYYY|(?<![A-Za-z])(?:MM-DD|X{3,}|N{3,})(?![A-Za-z])")
WORD_LIST = re.compile(r"[a-z]+(?:/[a-z]+){2,}")
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s<>\"'`()\[\]{}]+")
_EXTENSIONS = (
    "py pyi md rst txt json jsonl toml yaml yml cfg ini conf env lock js mjs cjs ts tsx jsx vue svelte rs go java "
    "kt swift c h cc cpp hpp cs rb php sh bash zsh sql html css scss xml csv log ipynb tcss traj mk gradle sqlite "
    "db gz zip tar")
EXTENSIONS = set(_EXTENSIONS.split(" "))
PATH_CHARS = set("_./~+@-")


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        yield " ".join(value)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _runs(text: str):
    """(character before, run, character after) for every maximal run of path characters."""
    run: list[str] = []
    before = previous = " "
    for ch in text + " ":
        if ch.isalnum() or ch in PATH_CHARS:
            if not run:
                before = previous
            run.append(ch)
        elif run:
            yield before, "".join(run), ch
            run = []
        previous = ch


def _extension(name: str) -> str | None:
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem or not ext or not ext[0].isalpha() or len(ext) > 10 or not ext.isalnum():
        return None
    return ext if ext.isascii() else None


def _path(run: str) -> str | None:
    run = run.rstrip(".-").removeprefix("@")
    grep = GREP_CONTEXT.match(run)
    run = grep.group(1) if grep else run
    if len(run) < 3 or "//" in run or not any(c.isalpha() for c in run):
        return None
    if "/" not in run:
        ext = _extension(run)
        return run if ext and ext.lower() in EXTENSIONS and run[0] not in ".~+" else None
    parts = [p for p in run.split("/") if p]
    if not any(any(c.isalpha() for c in p) for p in parts):
        return None
    run = run.rstrip("/")
    last = run.split("/")[-1]
    if last and last[0] != "." and _extension(last):
        return run
    if run.startswith("/") or (run.startswith(("~/", "./", "../")) and len(parts) >= 2):
        return run if len(run) > 2 else None
    return run if len(parts) >= 3 else None


def _paths(text: str):
    for before, run, after in _runs(URL.sub(" ", text)):
        template = before in ">}" or after in "<{" or PLACEHOLDER.search(run)
        if ("/" in run or "." in run) and before != "<" and not template:
            path = _path(run)
            if path:
                yield path


def _key(path: str) -> str:
    path = path.replace("\\", "/").lower()
    while path.startswith("./"):
        path = path[2:]
    return path


def _named(form: str, text: str) -> bool:
    return re.search(r"(?<![\w.~-])" + re.escape(form) + r"(?![\w/-])(?!\.\w)", text) is not None


def _in_summary(key: str, summary: str) -> bool:
    text = summary.replace("\\", "/").lower()
    forms = [key]
    parts = [p for p in key.split("/") if p and p not in (".", "..", "~")]
    if len(parts) >= 2 and "/".join(parts[-2:]) != key:
        forms.append("/".join(parts[-2:]))
    return any(_named(f, text) for f in forms)


def _span_survivors(span: set[str], summary: str, cwd: str) -> int:
    """Paths of a span the summary keeps: by the rule above, by their name relative to the session's
    cwd, by a file name no other path of the span has, and a directory through a kept path in it."""
    text = summary.replace("\\", "/").lower()
    root = _key(cwd).rstrip("/") + "/" if cwd else None
    rel = {p: p[len(root):] if root and p.startswith(root) and len(p) > len(root) else p for p in span}
    names: dict[str, int] = {}
    for r in set(rel.values()):
        names[r.rsplit("/", 1)[-1]] = names.get(r.rsplit("/", 1)[-1], 0) + 1
    kept = set()
    for p in span:
        name = rel[p].rsplit("/", 1)[-1]
        if _in_summary(p, summary) or (rel[p] != p and _named(rel[p], text)) or \
                ("." in name.lstrip(".") and names[name] == 1 and _named(name, text)):
            kept.add(p)
    for p in span - kept:
        directory = "." not in rel[p].rsplit("/", 1)[-1].lstrip(".")
        if directory and any(k.startswith(p + "/") or f"/{p}/" in "/" + k or rel[k].startswith(rel[p] + "/")
                             or f"/{rel[p]}/" in "/" + rel[k] for k in kept):
            kept.add(p)
    return len(kept)


def _without_word_lists(span: set[str]) -> set[str]:
    """`open/closed/blocked` is a path only where another path of the span lies inside it."""
    return {p for p in span if not WORD_LIST.fullmatch(p)
            or any(f"/{p}/" in "/" + q for q in span if not WORD_LIST.fullmatch(q))}


def _texts(rec: dict) -> list[str]:
    content = rec.get("message", {}).get("content")
    user = rec["type"] == "user"
    if isinstance(content, str):
        return [WRAPPER.sub("\n", content) if user else content]
    out: list[str] = []
    for block in content if isinstance(content, list) else []:
        kind = block.get("type")
        if kind == "text":
            out.append(WRAPPER.sub("\n", block["text"]) if user else block["text"])
        elif kind == "tool_use":
            out.extend(_strings(block.get("input")))
        elif kind == "tool_result":
            result = block.get("content")
            if isinstance(result, str):
                out.append(result)
            elif isinstance(result, list):
                out.extend(b.get("text", "") for b in result if isinstance(b, dict))
    return out


def independent_path_rows(path: Path) -> list[tuple[int, int]]:
    """(distinct paths, paths found in the summary) of each compaction, in file order."""
    spans: list[set[str]] = []
    summaries: list[str] = []
    current: set[str] = set()
    cwd = ""
    for line in _lines(path):
        rec = json.loads(line)
        if rec.get("isSidechain"):
            continue
        if not cwd and rec.get("type") in ("user", "assistant") and isinstance(rec.get("cwd"), str):
            cwd = rec["cwd"]
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            spans.append(current)
            current = set()
        elif rec.get("isCompactSummary"):
            content = rec["message"]["content"]
            summaries.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
        elif rec.get("type") in ("user", "assistant"):
            current.update(_key(p) for text in _texts(rec) for p in _paths(text))
    assert len(spans) == len(summaries)
    spans = [_without_word_lists(span) for span in spans]
    return [(len(span), _span_survivors(span, summary, cwd)) for span, summary in zip(spans, summaries, strict=True)]


# ---------------------------------------------------------------------------
# The commands on the real files
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_db(tmp_path_factory) -> str:
    db = tmp_path_factory.mktemp("real") / "real.sqlite"
    for name in FILES:
        result = CliRunner().invoke(main, ["import", str(_real(name)), "--db", str(db)])
        assert result.exit_code == 0, result.output
    return str(db)


def _thread_of(db: str, name: str) -> str:
    rows = json.loads(CliRunner().invoke(main, ["threads", "--db", db, "--json"]).output)
    session = next(rec["sessionId"] for rec in map(json.loads, _lines(_real(name))) if "sessionId" in rec)
    (row,) = [r for r in rows if r["id"] == session]
    return row["id"]


@pytest.mark.parametrize("name", FILES)
def test_loss_file_path_rows_match_an_independent_count(real_db, name):
    thread = _thread_of(real_db, name)
    result = CliRunner().invoke(main, ["loss", "--thread", thread, "--db", real_db, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    rows = [(c["totals"]["path"]["facts"], c["totals"]["path"]["survived"]) for c in data["compactions"]]
    assert rows == independent_path_rows(_real(name))
    assert all(c["source"] == "recorded" for c in data["compactions"])
    total = data["totals"]["path"]
    assert (total["facts"], total["survived"]) == tuple(map(sum, zip(*rows, strict=True)))


def test_loss_all_prints_the_per_kind_survival_table(real_db):
    result = CliRunner().invoke(main, ["loss", "--all", "--db", real_db])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("survival per kind over "))
    table = lines[start + 1:]
    assert table[0].split() == ["KIND", "FACTS", "SURVIVED", "LOST", "SURVIVAL"]
    assert [row.split()[0] for row in table[1:]] == [*KINDS, "all"]
    data = json.loads(CliRunner().invoke(main, ["loss", "--all", "--db", real_db, "--json"]).output)
    for row in table[1:-1]:
        kind, facts, survived, lost, _ = row.split()
        expected = data["totals"][kind]
        assert (int(facts.replace(",", "")), int(survived.replace(",", "")), int(lost.replace(",", ""))) == (
            expected["facts"], expected["survived"], expected["lost"])
    assert sum(data["totals"][k]["facts"] for k in KINDS) > 0


def test_loss_on_a_codex_compaction_commands_against_an_independent_count(tmp_path):
    """The real Codex rollout with a `compacted` record put after its line 60: the recorded summary's
    command rows against the function calls' first command lines, read here from the JSONL."""
    lines = _lines(_real("codex-rollout.jsonl"))
    message = "Checked `git status --short` and AGENTS.md; next: set the default compaction to 90 in an env var."
    compacted = json.dumps({"timestamp": json.loads(lines[59])["timestamp"], "type": "compacted",
                            "payload": {"message": message}})
    path = tmp_path / "rollout-compacted.jsonl"
    path.write_text("\n".join([*lines[:60], compacted, *lines[60:]]) + "\n", encoding="utf-8")
    db = str(tmp_path / "codex.sqlite")
    assert CliRunner().invoke(main, ["import", str(path), "--db", db]).exit_code == 0
    (row,) = json.loads(CliRunner().invoke(main, ["threads", "--db", db, "--json"]).output)
    result = CliRunner().invoke(main, ["loss", "--thread", row["id"], "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    (compaction,) = json.loads(result.output)["compactions"]
    assert compaction["source"] == "recorded" and compaction["summary_id"] == "compacted-L61"
    expected: dict[str, bool] = {}
    for line in lines[:60]:
        payload = json.loads(line).get("payload", {})
        if payload.get("type") == "function_call":
            arguments = json.loads(payload["arguments"])
            command = arguments.get("cmd") or arguments.get("command")
            if isinstance(command, str) and command.strip():
                first = command.strip().splitlines()[0].strip()
                expected.setdefault(first, first.lower() in message.lower())
    commands = {f["text"]: f["survived"] for f in compaction["facts"] if f["kind"] == "command"}
    assert commands == expected
    assert commands["git status --short"] is True and sum(commands.values()) == 1


def test_probe_follows_a_user_instruction_through_the_real_compaction(real_db):
    name = "claude-code-session-with-compaction.jsonl"
    thread = _thread_of(real_db, name)
    text = "don't overcomplicate"
    records = [json.loads(line) for line in _lines(_real(name))]
    said = [r["uuid"] for r in records if r.get("type") == "user" and not r.get("isCompactSummary")
            and text in json.dumps(r.get("message", {}).get("content"))]
    summary = next(r for r in records if r.get("isCompactSummary"))
    assert text in json.dumps(summary["message"]["content"]).lower()  # the recorded summary kept it
    result = CliRunner().invoke(main, ["probe", "--thread", thread, "--db", real_db, text, "--json"])
    assert result.exit_code == 0, result.output
    (found,) = json.loads(result.output)["probes"]
    assert found["messages"] == said and found["lost_at"] is None
    data = json.loads(CliRunner().invoke(main, ["loss", "--thread", thread, "--db", real_db, "--json"]).output)
    (compaction,) = data["compactions"]
    seen = [r["visibility"] for r in found["requests"]]
    first = seen.index("verbatim")
    at = compaction["request_index"]
    assert set(seen[:first]) == {"absent"} and set(seen[first:at]) == {"verbatim"}
    assert {r["summary_id"] for r in found["requests"][at:]} == {compaction["summary_id"]}


def test_loss_all_reports_the_threads_it_could_not_replay_and_the_others(real_db):
    # A what-if that needs new summaries from the Anthropic API, with no key: every thread that compacts fails.
    # (iris, whose threshold 0.5 compacts where the agents did not: claude-code, the Claude Code threads' own
    # profile, compacts where Claude Code did and reuses its recorded summaries.)
    args = ["loss", "--all", "--db", real_db, "--profile", "iris", "--compactions", "decide",
            "--set", "summarization.summarizer=anthropic",
            "--set", "context.compaction_threshold=0.5"]
    result = CliRunner().invoke(main, [*args, "--json"])
    data = json.loads(result.stdout)
    threads = json.loads(CliRunner().invoke(main, ["threads", "--db", real_db, "--json"]).output)
    assert data["threads"] == [t["id"] for t in threads]
    assert data["errors"] and all("ANTHROPIC_API_KEY" in e["error"] for e in data["errors"])
    failed = {e["thread_id"] for e in data["errors"]}
    assert failed < {t["id"] for t in threads}  # the others were replayed ...
    assert not failed & {c["thread_id"] for c in data["compactions"]}  # ... and only they are reported
    assert result.exit_code == (1 if len(data["errors"]) == len(threads) else 0)
    assert sum(1 for line in result.stderr.splitlines() if line.startswith("error: thread ")) == len(data["errors"])
    text = CliRunner().invoke(main, args).stdout
    assert f"{len(data['errors'])} of them could not be replayed" in text


def test_loss_and_probe_number_requests_from_one_as_simulate_and_the_tui_do(real_db):
    """Issue 22 item 6: `loss` said "before request 50" where `simulate` and the TUI say 51. The places
    are counted here from the JSONL: 1 + the model calls (usage once per message.id) before each
    `compact_boundary`."""
    name = "claude-code-session-with-compaction.jsonl" if len(FILES) == 1 else \
        "claude-code-2.1.7-parallel-tools-3-compactions.jsonl"
    calls: set[str] = set()
    places: list[int] = []
    for line in _lines(_real(name)):
        rec = json.loads(line)
        if rec.get("isSidechain"):
            continue
        if rec.get("subtype") == "compact_boundary":
            places.append(len(calls) + 1)
        msg = rec.get("message") if rec.get("type") == "assistant" else None
        if isinstance(msg, dict) and isinstance(msg.get("usage"), dict) and msg.get("model") != "<synthetic>":
            calls.add(msg["id"])
    thread = _thread_of(real_db, name)
    text = CliRunner().invoke(main, ["loss", "--thread", thread, "--db", real_db]).stdout
    said = [int(m.group(1)) for m in re.finditer(r"compaction before request (\d+) \(index (\d+),", text)]
    assert said == places
    assert all(f"before request {n} (index {n - 1}," in text for n in places)
    probe = CliRunner().invoke(main, ["probe", "--thread", thread, "--db", real_db, "zzz-never-said"]).stdout
    assert f"  requests 1-{len(calls)}: absent" in probe.splitlines()


def _user_written(name: str) -> tuple[int, int]:
    """(messages the user wrote, harness messages on the user's side) of the main chain, read here:
    text user records, not `isMeta`, not the compaction summary, holding more than harness wrappers."""
    written = harness = 0
    for line in _lines(_real(name)):
        rec = json.loads(line)
        if rec.get("type") != "user" or rec.get("isSidechain") or rec.get("isCompactSummary"):
            continue
        content = rec["message"]["content"]
        texts = [content] if isinstance(content, str) else [b.get("text", "") for b in content
                                                             if isinstance(b, dict) and b.get("type") == "text"]
        if not texts:
            continue  # tool results
        if rec.get("isMeta") or not WRAPPER.sub("", "\n".join(texts)).strip():
            harness += 1
        else:
            written += 1
    return written, harness


@pytest.mark.parametrize("name", FILES)
def test_harness_messages_start_no_turn_and_give_no_instruction(real_db, name):
    """Issue 22 item 7 on the real sessions: the turns are the messages the user wrote (main counted the
    3-10 slash-command lines, their output and caveats of each session as turns too)."""
    from inspector.model import assign_turns
    from inspector.store import Store

    written, harness = _user_written(name)
    with Store.open(real_db) as store:
        thread = store.load_thread(_thread_of(real_db, name))
    assert max(t for t in assign_turns(thread.messages) if t) == written and harness >= 3
    data = json.loads(CliRunner().invoke(main, ["loss", "--thread", thread.id, "--db", real_db, "--json"]).output)
    wrapped = {m.group(0).casefold() for line in _lines(_real(name)) for m in WRAPPER.finditer(
        json.loads(line).get("message", {}).get("content", "") if isinstance(
            json.loads(line).get("message", {}).get("content"), str) else "")}
    for compaction in data["compactions"]:
        for fact in compaction["facts"]:
            if fact["kind"] == "instruction":
                assert not any(fact["text"].casefold() in w for w in wrapped), fact


def test_no_real_path_fact_is_a_grep_line_a_template_or_a_word_list(real_db):
    """Issue 22 item 8: over the five real sessions' compactions (`loss --all`), no path fact is a grep
    context line (`state.go-143`), a template (`YYYY-MM-DD`) or a word list (`read/write/list`), and no
    error fact is a test id on a line that passed."""
    data = json.loads(CliRunner().invoke(main, ["loss", "--all", "--db", real_db, "--json"]).output)
    facts = [f for c in data["compactions"] for f in c["facts"]]
    paths = [f["text"] for f in facts if f["kind"] == "path"]
    assert paths and not [p for p in paths if re.search(r"\.[A-Za-z]\w{0,9}-\d+", p) or "YYYY" in p]
    spans = [{f["text"].casefold() for f in c["facts"] if f["kind"] == "path"} for c in data["compactions"]]
    for span in spans:
        for p in span:
            if WORD_LIST.fullmatch(p):
                assert any(f"/{p}/" in "/" + q for q in span if not WORD_LIST.fullmatch(q)), p
    assert not [f for f in facts if f["kind"] == "error" and "::" in f["text"] and "PASSED" in f["text"]]
