"""Bad input, table-driven: every case is a CLI run with its exit code, its one-line message and
what still imports; never a traceback, never a write to (or beside) the source file.

The corpus in tests/samples/bad/ is copied into tmp_path for each run, so "nothing new beside it"
is checked on a directory nobody else touches. Large cases (a 50 MB tool output, a
100,000-line file) and database cases are generated in tmp_path at test time.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from inspector.cli import main
from inspector.store import Store
from tests.paths import BAD

BAD_DIR = BAD
PROFILES = ("iris", "harness", "shifting")


def run(*args: str) -> Result:
    """The CLI in-process; every run must end without a traceback."""
    result = CliRunner().invoke(main, list(args))
    text = result.stdout + result.stderr
    assert "Traceback" not in text, text
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"uncaught {result.exception!r}") from result.exception
    return result


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot(directory: Path) -> dict[str, str]:
    """Every file under `directory` with its sha256 (to prove nothing was written or added)."""
    return {str(p.relative_to(directory)): sha256(p) for p in sorted(directory.rglob("*")) if p.is_file()}


@dataclass(frozen=True)
class Case:
    file: str
    exit_code: int
    messages: tuple[str, ...] = ()
    """Substrings of the output (each names the file and its line, thread or key)."""
    threads: dict[str, int] = field(default_factory=dict)
    """Thread id -> number of messages imported."""


CORPUS = [
    Case("compaction-parent-missing.jsonl", 0,
         ("compaction-parent-missing.jsonl:3: logicalParentUuid 'not-kept' is not in the file; the chain continues "
          "with line 2", "compactions 1/1"), {"bad-session": 4}),
    Case("dangling-parent.jsonl", 0,
         ("dangling-parent.jsonl:4: parentUuid 'gone-record' is not in the file; the chain continues with line 3",
          "model calls 2/2 with billed tokens"), {"bad-session": 4}),
    Case("resumed-session", 0,
         ("resumed-session/two.jsonl: thread shared-session was imported from another file",
          "both kept, this file's as shared-session~2"), {"shared-session": 2, "shared-session~2": 3}),
    Case("same-name-two-folders", 0,
         ("same-name-two-folders/b/chat.json: thread chat was imported from another file",
          "both kept, this file's as chat~2"), {"chat": 2, "chat~2": 2}),
    Case("truncated-middle.jsonl", 0,
         ("truncated-middle.jsonl:3: invalid JSON", "truncated-middle.jsonl:4: parentUuid 'u2' is not in the file; "
          "the chain continues with line 2", "model calls 3/3 with billed tokens"), {"bad-session": 5}),
    Case("call-no-result.json", 0, ("imported 1 thread(s) from 1 file(s); 0 warning(s)",), {"nocall": 3}),
    Case("deeply-nested.json", 1, ("deeply-nested.json: JSON nested deeper than 100 levels",)),
    Case("duplicate-ids.json", 0,
         ("duplicate-ids.json: thread dups: message id 'x' appears twice; the later one renamed 'x~2'",),
         {"dups": 3}),
    Case("empty-file.jsonl", 1, ("empty-file.jsonl: empty file",)),
    Case("empty-thread.json", 0, ("imported 1 thread(s)",), {"empty": 0}),
    Case("garbage-lines.jsonl", 0,
         ("garbage-lines.jsonl:2: invalid JSON", "garbage-lines.jsonl:3: not a JSON object",
          "garbage-lines.jsonl:4: not a JSON object", "3 warning(s)"),
         {"bad-session": 2}),
    Case("invalid-utf8.jsonl", 0, ("invalid-utf8.jsonl:3: invalid UTF-8 replaced with U+FFFD",), {"bad-session": 4}),
    Case("missing-content.json", 0, ("0 warning(s)",), {"nocontent": 2}),
    Case("nan-tokens.json", 0,
         ("nan-tokens.json: thread nan: request 'r1': prompt_tokens nan is not a token count; value dropped",),
         {"nan": 1}),
    Case("negative-tokens.json", 0,
         ("negative-tokens.json: thread neg: request 'r1': prompt_tokens -5 is not a token count; value dropped",),
         {"neg": 2}),
    Case("not-json.txt", 1, ("not-json.txt:1: invalid JSON",)),
    Case("nul-bytes.jsonl", 0,
         ("nul-bytes.jsonl: thread bad-session: message 'a1': NUL characters replaced with U+FFFD",),
         {"bad-session": 2}),
    Case("only-system.json", 0, ("0 warning(s)",), {"sys": 2}),
    Case("parentuuid-cycle.jsonl", 0, ("parentuuid-cycle.jsonl:1: parentUuid 'a2' closes a cycle",),
         {"bad-session": 4}),
    Case("result-before-call.json", 0, ("0 warning(s)",), {"before": 3}),
    Case("summary-cycle.json", 0,
         ("summary-cycle.json: thread scycle: summary 's2': previous_summary_id 's1' closes a cycle; link dropped",),
         {"scycle": 3}),
    Case("summary-dangling.json", 0,
         ("summary-dangling.json: thread sdangle: summary 's1': previous_summary_id 'missing' names no summary",),
         {"sdangle": 3}),
    Case("tool-result-no-call.json", 0, ("0 warning(s)",), {"orphan": 3}),
    Case("truncated.jsonl", 0, ("truncated.jsonl:4: invalid JSON (Unterminated string",), {"bad-session": 3}),
    Case("unknown-format-version.json", 1,
         ("unknown-format-version.json: unsupported format 'context-inspector/v99'",)),
    Case("unknown-role.json", 0,
         ("unknown-role.json: thread role: message 'w1': unknown role 'wizard'; message skipped",), {"role": 2}),
    Case("wrong-shape.json", 1, ('wrong-shape.json: "threads" must be a list',)),
    # Round two (issue 15): one bad item never loses its unit; untrusted text never reaches the terminal raw.
    Case("openai-null-entry.json", 0, ("openai-null-entry.json: message 2: not a chat message with a known role",
                                       "1 warning(s)"), {"openai-null-entry": 3}),
    Case("huge-relevance.json", 0,
         ("huge-relevance.json: thread bigrel: message 'a1': relevance 99999999999999999999999999999999999999"
          "9… (400 characters) is not a finite number; dropped",), {"bigrel": 3}),
    Case("huge-prompt-tokens.json", 0,
         ("thread bigtok: request 'r1': prompt_tokens 999999999999999999999999999999999999999… (400 characters) "
          "is not a token count; value dropped",
          "thread bigtok: window 999999999999999999999999999999999999999… (400 characters) is not a positive "
          "token count; dropped"), {"bigtok": 2}),
    Case("huge-intensity.json", 0,
         ("huge-intensity.json: thread bigint: summary 's1': an emotional marker's intensity is not a finite number;"
          " set to 0",), {"bigint": 2}),
    Case("summary-reversed.json", 0,
         ("summary-reversed.json: thread srev: summary 's1': first_message_id 'a1' comes after last_message_id 'u1';"
          " the range reversed",), {"srev": 3}),
    Case("summary-before-dangling.json", 0,
         ("summary-before-dangling.json: thread sbefore: summary 's1': before_request_id 'r9' names no request; "
          "link dropped",), {"sbefore": 3}),
    Case("escapes-native.json", 0,
         ("thread evil\u241b]0;owned\u2407\u241b[2J: message id 'u1' appears twice; the later one renamed 'u1~2'",),
         {"evil\x1b]0;owned\x07\x1b[2J": 2}),
    Case("escapes-codex.jsonl", 0,
         ("escapes-codex.jsonl:3: \u241b]0;title\u2407 line without a payload object",
          "escapes-codex.jsonl:4: unknown response item '\\x1b]52;c;Zm9v\\x07\\x1b[2J'"), {"esc-codex": 2}),
    Case("column-limits.json", 0, ("imported 6 thread(s) from 1 file(s); 0 warning(s)",),
         {"good1": 2, "bigtokens": 2, "longname": 3, "longdate": 2, "m" * 300: 1, "good2": 1}),
    # Round three (issue 24): a link that loops is bridged like a missing parent; the leaf is chosen by
    # structure; a count that is not a token count is unknown, never 0 or negative; one bad value never
    # loses its file.
    Case("cc-self-parent.jsonl", 0,
         ("cc-self-parent.jsonl:3: parentUuid 'u2' leads into a cycle; the chain continues with line 2",
          "model calls 2/2 with billed tokens"), {"cc-session": 4}),
    Case("cc-boundary-cycle.jsonl", 0,
         ("cc-boundary-cycle.jsonl:3: logicalParentUuid 'b2' closes a cycle; the chain continues with line 2",
          "cc-boundary-cycle.jsonl:7: logicalParentUuid 'b1' leads into a cycle; the chain continues with line 6",
          "model calls 3/3 with billed tokens, tool results 0/0, compactions 2/2", "2 warning(s)"), {"cc-session": 6}),
    Case("cc-boundary-self.jsonl", 0,
         ("cc-boundary-self.jsonl:3: logicalParentUuid 'b1' leads into a cycle; the chain continues with line 2",
          "model calls 3/3 with billed tokens, tool results 0/0, compactions 2/2", "1 warning(s)"), {"cc-session": 6}),
    Case("cc-boundary-forward.jsonl", 0,
         ("cc-boundary-forward.jsonl:3: logicalParentUuid 'a3' closes a cycle; the chain continues with line 2",
          "model calls 3/3 with billed tokens, tool results 0/0, compactions 2/2", "1 warning(s)"), {"cc-session": 6}),
    Case("cc-leaf-first.jsonl", 0,
         ("model calls 3/3 with billed tokens, tool results 1/1, compactions 1/1", "0 warning(s)"), {"cc-session": 6}),
    Case("cc-huge-output-tokens.jsonl", 0,
         ("cc-huge-output-tokens.jsonl:2: model call m1: usage output_tokens 10000000000000000000000000 is not a "
          "token count; output count dropped", "model calls 2/2 with billed tokens"), {"cc-session": 4}),
    Case("cc-negative-output-tokens.jsonl", 0,
         ("cc-negative-output-tokens.jsonl:2: model call m1: usage output_tokens -40 is not a token count; output "
          "count dropped",), {"cc-session": 2}),
    Case("cc-nan-usage.jsonl", 0,
         ("cc-nan-usage.jsonl:2: model call m1: usage input_tokens nan is not a token count; its billed prompt is "
          "unknown", "cc-nan-usage.jsonl:4: model call m2: usage cache_read_input_tokens 12.5 is not a token count",
          "cc-nan-usage.jsonl:6: model call m3: usage input_tokens True is not a token count",
          "model calls 1/4 with billed tokens"), {"cc-session": 8}),
    Case("cc-single-block-content.jsonl", 0,
         ("model calls 2/2 with billed tokens, tool results 1/1", "0 warning(s)"), {"cc-session": 4}),
    Case("cc-surrogate-arguments.jsonl", 0,
         ("cc-surrogate-arguments.jsonl: thread cc-session: message 'a1': lone surrogates replaced with U+FFFD",
          "model calls 2/2 with billed tokens, tool results 1/1"), {"cc-session": 4}),
    Case("native-surrogate-arguments.json", 0,
         ("native-surrogate-arguments.json: thread bad-args: message 'a1': lone surrogates replaced with U+FFFD",
          "imported 2 thread(s) from 1 file(s); 1 warning(s)"), {"bad-args": 3, "clean": 2}),
    Case("codex-compacted-object.jsonl", 0,
         ("codex-compacted-object.jsonl:7: compacted message is an object with no text in it; kept as its JSON text",
          "compactions 2/2"), {"codex-compacted": 5}),
]

RAW_TERMINAL = ("\x1b", "\x07", "\x9b", "\x00", "\x9d")
"""What must never reach a terminal from untrusted text: ESC, BEL, 8-bit CSI and OSC, NUL."""


def test_the_corpus_table_covers_every_transcript_file():
    transcripts = sorted(p.name for p in BAD_DIR.iterdir() if p.suffix != ".toml")
    assert sorted(c.file for c in CORPUS) == transcripts
    assert len(transcripts) + len(TOML_CASES) >= 25


def import_case(source: Path, db: Path, case: Case) -> Result:
    """Import `source`, checking the exit code, messages, what imported, and that the source is untouched."""
    before = snapshot(source.parent)
    result = run("import", str(source), "--db", str(db))
    assert snapshot(source.parent) == before, "the source file or its directory changed"
    text = result.stdout + result.stderr
    assert result.exit_code == case.exit_code, text
    assert not any(c in text for c in RAW_TERMINAL), repr(text)
    for message in case.messages:
        assert message in text, text
    for line in result.stderr.splitlines():  # warnings and errors: one line each, naming the file
        assert line.startswith(("warning: ", "error: ", "context-inspector: error: ")), line
        assert source.name in line, line
    if not case.threads and result.exit_code != 0:
        # A failed import into a new database leaves no database file (nor a journal) behind.
        assert not db.exists() and not list(db.parent.glob(db.name + "*")), list(db.parent.iterdir())
        return result
    listing = run("threads", "--db", str(db), "--json")
    assert listing.exit_code == 0, listing.stderr
    assert not any(c in listing.stdout + listing.stderr for c in RAW_TERMINAL), repr(listing.stdout)
    assert {t["id"]: t["messages"] for t in json.loads(listing.stdout)} == case.threads
    table = run("threads", "--db", str(db))
    assert table.exit_code == 0 and not any(c in table.stdout for c in RAW_TERMINAL), repr(table.stdout)
    return result


def simulate_every_thread(db: Path, thread_ids: list[str]) -> None:
    """`simulate` on every imported thread, every profile: a simulation JSON, never a traceback."""
    if not thread_ids and not db.exists():  # a failed import left no database (checked by import_case)
        return
    before = sha256(db)
    for thread_id in thread_ids:
        for profile in PROFILES:
            result = run("simulate", "--thread", thread_id, "--db", str(db), "--profile", profile, "--json")
            assert result.exit_code == 0, result.stderr
            sim = json.loads(result.stdout)
            assert sim["thread_id"] == thread_id and sim["profile"] == profile
            assert all(r["status"] in ("completed", "failed") for r in sim["requests"])
    assert sha256(db) == before, "simulate wrote to the database"


@pytest.mark.parametrize("case", CORPUS, ids=[c.file for c in CORPUS])
def test_corpus_file_imports_as_expected(case: Case, tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    source = src / case.file
    if (BAD_DIR / case.file).is_dir():  # a folder of files imported in one run
        shutil.copytree(BAD_DIR / case.file, source)
    else:
        shutil.copyfile(BAD_DIR / case.file, source)
    db = tmp_path / "out" / "store.sqlite"
    import_case(source, db, case)
    simulate_every_thread(db, list(case.threads))


def test_repairs_are_the_ones_the_warnings_name(tmp_path: Path):
    db = tmp_path / "store.sqlite"
    names = ["duplicate-ids.json", "invalid-utf8.jsonl", "nan-tokens.json", "negative-tokens.json",
             "nul-bytes.jsonl", "summary-cycle.json", "summary-dangling.json", "unknown-role.json",
             "parentuuid-cycle.jsonl"]
    for name in names:
        shutil.copyfile(BAD_DIR / name, tmp_path / name)
    result = run("import", *(str(tmp_path / n) for n in names), "--db", str(db))
    assert result.exit_code == 0, result.stderr
    with Store.open(str(db)) as store:
        assert [m.id for m in store.load_thread("dups").messages] == ["x", "x~2", "y"]
        assert [r.prompt_tokens for r in store.load_thread("nan").requests] == [None]
        assert [r.prompt_tokens for r in store.load_thread("neg").requests] == [None]
        assert {s.id: s.previous_summary_id for s in store.load_thread("scycle").summaries} == {"s1": "s2", "s2": None}
        assert [s.previous_summary_id for s in store.load_thread("sdangle").summaries] == [None]
        assert [(m.id, m.role.value) for m in store.load_thread("role").messages] == [("u1", "user"), ("a1", "assistant")]
        # Three files of session "bad-session" stay three threads; the third (a parentUuid cycle) is the
        # chain from u1 to a2.
        assert {"bad-session", "bad-session~2", "bad-session~3"} <= set(store.thread_ids())
        assert [m.id for m in store.load_thread("bad-session~3").messages] == ["u1", "a1", "u2", "a2"]
    # The invalid UTF-8 line is decoded with replacements, the NUL replaced: one run each.
    db2 = tmp_path / "second.sqlite"
    run("import", str(tmp_path / "invalid-utf8.jsonl"), "--db", str(db2))
    run("import", str(tmp_path / "nul-bytes.jsonl"), "--db", str(tmp_path / "third.sqlite"))
    with Store.open(str(db2)) as store:
        assert store.load_thread("bad-session").messages[2].content.startswith("caf\ufffd")
    with Store.open(str(tmp_path / "third.sqlite")) as store:
        assert store.load_thread("bad-session").messages[1].content == "nul\ufffdhere"


REPAIRS_TEXT = (
    '{"format": "context-inspector/v1", "threads": [{"id": "fix", "window": -5, "title": 7, "messages": ['
    '{"id": "u1", "role": "user", "content": "lone \\ud800 surrogate", "created_at": "t0"},'
    '{"id": "a1", "role": "assistant", "content": "b", "relevance": NaN, "meta": {"score": Infinity}},'
    '{"id": "u2", "role": "user", "content": "c"}],'
    '"requests": [{"id": "r1", "after_message_id": "a1", "prompt_tokens": 1e3},'
    '{"id": "r1", "after_message_id": "u2", "prompt_tokens": 10},'
    '{"id": "r3", "after_message_id": "gone", "prompt_tokens": 5}],'
    '"summaries": [{"id": "s1", "first_message_id": "u1", "last_message_id": "nowhere", "summary": "x"},'
    '{"id": "s2", "previous_summary_id": "s2", "first_message_id": "u1", "last_message_id": "a1", "summary": "y",'
    '"emotional_markers": [{"moment": "m", "intensity": NaN}]}]}]}'
)
"""A native file with one of each repair that the corpus files do not show."""

REPAIR_WARNINGS = [
    "repairs.json: thread fix: request 'r1': prompt_tokens 1000.0 is not a token count; value dropped",
    "repairs.json: thread fix: message 'u1': lone surrogates replaced with U+FFFD",
    "repairs.json: thread fix: message 'a1': non-finite numbers replaced",
    "repairs.json: thread fix: message 'a1': relevance nan is not a finite number; dropped",
    "repairs.json: thread fix: request 'r3': after_message_id 'gone' names no message; request dropped",
    "repairs.json: thread fix: request id 'r1' appears twice; the later one renamed 'r1~2'",
    "repairs.json: thread fix: summary 's1': message 'nowhere' does not exist; summary dropped",
    "repairs.json: thread fix: summary 's2': an emotional marker's intensity is not a finite number; set to 0",
    "repairs.json: thread fix: summary 's2': previous_summary_id 's2' closes a cycle; link dropped",
    "repairs.json: thread fix: window -5 is not a positive token count; dropped",
]


def test_every_repair_is_warned_once_and_stored(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    source = src / "repairs.json"
    source.write_text(REPAIRS_TEXT)
    db = tmp_path / "fix.sqlite"
    result = import_case(source, db, Case("repairs.json", 0, ("10 warning(s)",), {"fix": 3}))
    warnings = [line.removeprefix("warning: ").replace(f"{source}", "repairs.json")
                for line in result.stderr.splitlines()]
    assert sorted(warnings) == sorted(REPAIR_WARNINGS)
    with Store.open(str(db)) as store:
        thread = store.load_thread("fix")
    assert thread.title == "7" and thread.window is None
    assert thread.messages[0].content == "lone \ufffd surrogate" and thread.messages[0].created_at == "t0"
    assert thread.messages[1].relevance is None and thread.messages[1].meta == {"score": "inf"}
    assert [(r.id, r.after_message_id, r.prompt_tokens) for r in thread.requests] == [
        ("r1", "a1", None), ("r1~2", "u2", 10)]
    [summary] = thread.summaries
    assert summary.id == "s2" and summary.previous_summary_id is None
    assert summary.emotional_markers[0].intensity == 0.0
    simulate_every_thread(db, ["fix"])


# ---- generated large inputs --------------------------------------------------------------------

def test_a_50_mb_tool_output_imports_and_simulates_in_bounded_memory(tmp_path: Path):
    line = "x" * 79 + "\n"
    output = line * (50_000_000 // len(line))
    document = {"format": "context-inspector/v1", "threads": [{"id": "huge", "messages": [
        {"id": "u1", "role": "user", "content": "read the log"},
        {"id": "a1", "role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "cat", "arguments": {}}]},
        {"id": "t1", "role": "tool", "tool_call_id": "c1", "content": output},
        {"id": "a2", "role": "assistant", "content": "done"},
        {"id": "u2", "role": "user", "content": "thanks"},
        {"id": "a3", "role": "assistant", "content": "welcome"},
    ]}]}
    src = tmp_path / "src"
    src.mkdir()
    source = src / "huge.json"
    source.write_text(json.dumps(document))
    size = source.stat().st_size
    assert size >= 50_000_000
    del document
    db = tmp_path / "huge.sqlite"
    tracemalloc.start()
    try:
        import_case(source, db, Case("huge.json", 0, ("imported 1 thread(s)",), {"huge": 6}))
        _, import_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        result = run("simulate", "--thread", "huge", "--db", str(db), "--json", "--profile", "harness")
        _, simulate_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0, result.stderr
    # A few copies of the text at most (file text, decoded JSON, database parameters), never more.
    # Measured: about 3x for the import, 1x for the simulation.
    assert import_peak < 5 * size, import_peak
    assert simulate_peak < 3 * size, simulate_peak
    sim = json.loads(result.stdout)
    tool_blocks = [b for r in sim["requests"] for b in r["blocks"] if b["message_id"] == "t1"]
    assert tool_blocks and all(b["tokens"] > len(output) // 8 for b in tool_blocks)
    with Store.open(str(db)) as store:
        assert len(store.load_thread("huge").messages[2].content) == len(output)


def test_a_100000_line_rollout_imports_and_simulates(tmp_path: Path):
    """A Codex rollout of 100,000 lines, most of them events (as in real long sessions)."""
    lines = [json.dumps({"type": "session_meta", "payload": {"id": "long", "base_instructions": {"text": "sys"}}})]
    turns = 0
    while len(lines) < 100_000:
        turns += 1
        lines.append(json.dumps({"type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": f"question {turns}"}]}}))
        lines.append(json.dumps({"type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"answer {turns}"}]}}))
        lines.append(json.dumps({"type": "event_msg", "payload": {"type": "token_count", "info": {
            "last_token_usage": {"input_tokens": 100 + turns}, "model_context_window": 200000}}}))
        lines.extend(json.dumps({"type": "event_msg", "payload": {"type": "exec_command_output_delta", "chunk": "x"}})
                     for _ in range(397))
    lines = lines[:100_000]
    lines[5000] = '{"type": "response_item", "payload": {"type": "mess'  # one truncated line in the middle
    src = tmp_path / "src"
    src.mkdir()
    source = src / "rollout.jsonl"
    source.write_text("\n".join(lines) + "\n")
    db = tmp_path / "long.sqlite"
    import_case(source, db, Case("rollout.jsonl", 0, ("rollout.jsonl:5001: invalid JSON", "1 warning(s)"),
                                 {"long": 2 * turns}))
    result = run("simulate", "--thread", "long", "--db", str(db), "--timeline", "--json")
    assert result.exit_code == 0, result.stderr
    assert len(json.loads(result.stdout)["requests"]) == turns


def test_a_100000_message_jsonl_imports(tmp_path: Path):
    """100,000 chat lines import as one thread (its one bad line skipped) and replay as a timeline."""
    lines = [json.dumps({"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"}) for i in range(100_000)]
    lines[99_999] = "{oops"
    src = tmp_path / "src"
    src.mkdir()
    source = src / "chat.jsonl"
    source.write_text("\n".join(lines) + "\n")
    db = tmp_path / "chat.sqlite"
    import_case(source, db, Case("chat.jsonl", 0, ("chat.jsonl:100000: invalid JSON", "1 warning(s)"), {"chat": 99_999}))
    result = run("simulate", "--thread", "chat", "--db", str(db), "--timeline", "--json")
    assert result.exit_code == 0, result.stderr
    # One before each of the 49,999 assistant messages, one after the trailing user message.
    assert len(json.loads(result.stdout)["requests"]) == 50_000


# ---- databases ---------------------------------------------------------------------------------

def imported_db(tmp_path: Path, name: str = "store.sqlite") -> Path:
    db = tmp_path / name
    shutil.copyfile(BAD_DIR / "negative-tokens.json", tmp_path / "neg.json")
    assert run("import", str(tmp_path / "neg.json"), "--db", str(db)).exit_code == 0
    return db


def test_a_database_with_a_missing_table_is_a_one_line_error(tmp_path: Path):
    db = imported_db(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE ci_requests")
    conn.close()
    before = snapshot(tmp_path)
    for args in (["threads"], ["simulate", "--thread", "neg"], ["import", str(tmp_path / "neg.json")]):
        result = run(*args, "--db", str(db))
        assert result.exit_code == 2
        assert result.stderr.strip().splitlines() == [
            f"context-inspector: error: sqlite:///{db}: damaged context-inspector database: missing table(s) ci_requests"
        ]
    assert snapshot(tmp_path) == before


def test_a_database_missing_a_column_is_a_one_line_error(tmp_path: Path):
    db = imported_db(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE ci_messages DROP COLUMN relevance")
    conn.close()
    result = run("simulate", "--thread", "neg", "--db", str(db))
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"context-inspector: error: sqlite:///{db}: cannot load a thread (") and "relevance" in line


def test_a_database_with_extra_columns_and_tables_still_works(tmp_path: Path):
    db = imported_db(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE ci_messages ADD COLUMN extra_note TEXT DEFAULT 'x'")
        conn.execute("ALTER TABLE ci_threads ADD COLUMN owner TEXT")
        conn.execute("CREATE TABLE unrelated (id INTEGER PRIMARY KEY, v TEXT)")
    conn.close()
    listing = run("threads", "--db", str(db), "--json")
    assert listing.exit_code == 0 and [t["messages"] for t in json.loads(listing.stdout)] == [2]
    sim = run("simulate", "--thread", "neg", "--db", str(db), "--json")
    assert sim.exit_code == 0 and json.loads(sim.stdout)["thread_id"] == "neg"
    shutil.copyfile(BAD_DIR / "only-system.json", tmp_path / "sys.json")
    again = run("import", str(tmp_path / "sys.json"), "--db", str(db))
    assert again.exit_code == 0 and "imported 1 thread(s)" in again.stdout


def test_a_locked_database_is_a_bounded_wait_then_a_one_line_error(tmp_path: Path, monkeypatch):
    db = imported_db(tmp_path)
    # The wait is SQLite's busy timeout (5 s for users); a tenth of it here says the same in 1 s.
    monkeypatch.setattr("inspector.store.sqlite_open.BUSY_TIMEOUT_S", 0.5)
    locker = sqlite3.connect(db, isolation_level=None)
    try:
        locker.execute("BEGIN EXCLUSIVE")
        for args in (["threads"], ["import", str(tmp_path / "neg.json")]):
            result = run(*args, "--db", str(db))  # returns: the wait for the lock is SQLite's busy timeout
            assert result.exit_code == 2
            [line] = result.stderr.strip().splitlines()
            assert line.startswith(f"context-inspector: error: sqlite:///{db}: ") and "database is locked" in line
    finally:
        locker.rollback()
        locker.close()
    assert run("threads", "--db", str(db)).exit_code == 0


def test_a_damaged_row_is_a_one_line_error(tmp_path: Path):
    db = imported_db(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE ci_messages SET role = 'wizard' WHERE id = 'a1'")
    conn.close()
    result = run("simulate", "--thread", "neg", "--db", str(db))
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"context-inspector: error: sqlite:///{db}: cannot load a thread: damaged row "
                                     "('wizard' is not a valid Role)")


@pytest.mark.parametrize(("args", "message"), [
    (["threads", "--db", "{tmp}/missing.sqlite"], "{tmp}/missing.sqlite: no such database file"),
    (["simulate", "--thread", "t", "--db", "{tmp}/missing.sqlite"], "{tmp}/missing.sqlite: no such database file"),
    (["threads", "--db", "{tmp}/adir"], "{tmp}/adir: is a directory, not a database file"),
    (["import", "{tmp}/neg.json", "--db", "{tmp}/adir"], "{tmp}/adir: is a directory, not a database file"),
    (["threads", "--db", "nosuch://u:hunter2@host/db"], "nosuch://u:***@host/db: unknown database driver"),
    (["threads", "--db", "postgresql+nodriver://u:hunter2@host/db"],
     "postgresql+nodriver://u:***@host/db: unknown database driver"),
    (["threads", "--db", "{tmp}/neg.json"], "{tmp}/neg.json: cannot open database (file is not a database)"),
], ids=["missing-db", "missing-db-simulate", "dir-as-db", "dir-as-db-import", "unknown-driver",
        "unknown-dbapi", "json-as-db"])
def test_bad_database_paths_and_urls(args: list[str], message: str, tmp_path: Path):
    (tmp_path / "adir").mkdir()
    shutil.copyfile(BAD_DIR / "negative-tokens.json", tmp_path / "neg.json")
    before = snapshot(tmp_path)
    result = run(*(a.format(tmp=tmp_path) for a in args))
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("context-inspector: error: ") and message.format(tmp=tmp_path) in line, line
    assert "hunter2" not in result.stdout + result.stderr
    assert snapshot(tmp_path) == before


def test_a_missing_transcript_and_a_directory_of_non_transcripts(tmp_path: Path):
    db = tmp_path / "s.sqlite"
    result = run("import", str(tmp_path / "nope.json"), "--db", str(db))
    assert result.exit_code == 1
    assert f"error: {tmp_path / 'nope.json'}: no such file" in result.stderr
    folder = tmp_path / "folder.json"  # a directory with a transcript's name: walked, not read as a file
    folder.mkdir()
    (folder / "notes.txt").write_text("not a transcript")
    result = run("import", str(folder), "--db", str(db))
    assert result.exit_code == 1 and "imported 0 thread(s) from 0 file(s)" in result.stdout


# ---- configuration -----------------------------------------------------------------------------

TOML_CASES = [
    ("bad-config.toml", "config.toml: context.token_budget_ratio must be in (0, 1]: got 1.4"),
    ("bad-toml.toml", "config.toml: Expected ']' at the end of a table declaration (at line 1"),
    ("unknown-config-key.toml", "config.toml: unknown config key 'context.windoww'"),
]


@pytest.mark.parametrize(("name", "message"), TOML_CASES, ids=[n for n, _ in TOML_CASES])
def test_a_bad_config_file_is_a_one_line_error_naming_the_file_and_key(name: str, message: str, tmp_path: Path,
                                                                        isolated_dirs: Path):
    db = imported_db(tmp_path)
    config = isolated_dirs / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(BAD_DIR / name, config)
    before = snapshot(config.parent)
    result = run("simulate", "--thread", "neg", "--db", str(db))
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"context-inspector: error: {config.parent}") and message in line, line
    assert snapshot(config.parent) == before


@pytest.mark.parametrize(("setting", "message"), [
    ("context.token_budget_ratio=1.4", "context.token_budget_ratio must be in (0, 1]: got '1.4'"),
    ("context.window=-5", "context.window must be > 0: got '-5'"),
    ("context.compaction_threshold=nan", "context.compaction_threshold must be a finite number"),
    ("context.windoww=5", "unknown config key 'context.windoww'"),
    ("context.tokenizer=gpt2", "context.tokenizer must be one of"),
    ("novalue", "--set expects KEY=VALUE: got 'novalue'"),
])
def test_a_bad_set_value_is_a_one_line_error_naming_the_key(setting: str, message: str, tmp_path: Path):
    db = imported_db(tmp_path)
    result = run("simulate", "--thread", "neg", "--db", str(db), "--set", setting)
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("context-inspector: error: ") and message in line, line


def test_a_missing_parent_loses_nothing_before_it(tmp_path: Path):
    """The messages before a damaged or dangling link are the thread's, in order, with their requests."""
    db = tmp_path / "store.sqlite"
    for name in ("truncated-middle.jsonl", "dangling-parent.jsonl"):
        shutil.copyfile(BAD_DIR / name, tmp_path / name)
        assert run("import", str(tmp_path / name), "--db", str(db)).exit_code == 0
    with Store.open(str(db)) as store:
        middle = store.load_thread("bad-session")
        assert [m.id for m in middle.messages] == ["u1", "a1", "a2", "u3", "a3"]
        assert [(r.id, r.prompt_tokens) for r in middle.requests] == [("m1", 10), ("m2", 20), ("m3", 30)]
        dangling = store.load_thread("bad-session~2")
        assert [m.id for m in dangling.messages] == ["u1", "a1", "u2", "a2"]
        assert [(r.id, r.after_message_id) for r in dangling.requests] == [("m1", "u1"), ("m2", "u2")]


def test_different_files_never_replace_each_other_and_the_same_file_does(tmp_path: Path):
    src = tmp_path / "src"
    shutil.copytree(BAD_DIR / "same-name-two-folders", src / "two")
    shutil.copytree(BAD_DIR / "resumed-session", src / "resumed")
    db = tmp_path / "store.sqlite"
    first = run("import", str(src), "--db", str(db))
    assert first.exit_code == 0 and "replaced" not in first.stdout
    again = run("import", str(src), "--db", str(db))  # the same files again: each replaces its own
    assert again.exit_code == 0 and "4 replaced" in again.stdout, again.stdout
    assert "imported from another file" in again.stderr  # and says which ids it keeps apart
    with Store.open(str(db)) as store:
        assert sorted(store.thread_ids()) == ["chat", "chat~2", "shared-session", "shared-session~2"]
        assert store.load_thread("chat").messages[0].content == "first conversation"
        assert store.load_thread("chat~2").messages[0].content == "second conversation"
        assert store.load_thread("shared-session~2").messages[0].content == "second part"
    # One file edited in place (the session went on): it replaces its own thread, not the other.
    two = src / "resumed" / "two.jsonl"
    grown = json.loads(two.read_text().splitlines()[1])
    grown.update(uuid="b9", parentUuid="v2")
    grown["message"]["id"] = "n9"
    two.write_text(two.read_text() + json.dumps(grown) + "\n")
    result = run("import", str(two), "--db", str(db))
    assert "1 replaced" in result.stdout, result.stdout
    with Store.open(str(db)) as store:
        assert len(store.load_thread("shared-session~2").messages) == 4
        assert len(store.load_thread("shared-session").messages) == 2
