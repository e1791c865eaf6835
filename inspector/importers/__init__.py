"""Importers: transcript files -> threads in the store.

`import_paths(paths, store)` imports files (directories are walked for *.json, *.jsonl,
*.traj and their .gz copies; a Claude Code session's sub-agent files, in `<session>/subagents/`
or `agent-*.jsonl` beside it naming its session id, are imported with it, not on their own, and so are
the files of a Cline / Roo Code task folder beside its `api_conversation_history.json`). Thread ids are
deterministic (session id, file stem, record id), so importing a file again replaces its
threads instead of duplicating them, and the import record says which were replaced. A thread
id that another file already gave (`a/chat.json` and `b/chat.json`, two Claude Code files of one
resumed `sessionId`) never replaces that file's thread: the later file's threads get the suffix
`~N` (the first free N from 2, the same on every re-import) and a warning says so (same path, or the same content,
replaces).

Coverage: for the formats that record model calls (Claude Code, Codex) every file gets a line
saying how many model calls it holds and how many became requests with billed tokens, and the
same for tool results and compactions (`ImportReport.coverage`); every item short is a warning
naming its line, and the file's threads carry `meta["import_gaps"]` (listed as incomplete). A malformed line or record is reported as
`file:line: reason` (or `file: record N: reason`) and skipped; the rest imports.

Bad input never stops the other files and never loses a whole thread for one bad item: invalid
UTF-8 is decoded line by line with U+FFFD (each line reported), JSON nested deeper than
`_common.MAX_DEPTH` is refused with a one-line error, and every parsed thread is repaired by
`inspector.thread_repair.sanitize_thread` (repeated ids renamed, NUL characters replaced, impossible token
counts dropped, dangling or looping summary links cut), each repair one `file: thread X: reason`
warning. A whole file that cannot be imported is one line in `ImportReport.errors`.
"""

from __future__ import annotations

import gzip
import json
import os
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.forks import can_fork
from inspector.gcpolicy import CollectionPause
from inspector.importers import (  # noqa: F401 - opencode_db, langgraph_db register their in-place readers
    anthropic,
    claude_code,
    cline,
    codex,
    copilot_cli,
    gemini_cli,
    langgraph_db,
    native,
    openai,
    opencode,
    opencode_db,
    opencode_storage,
    swe_agent,
)
from inspector.importers._common import Coverage, FormatError, ParseResult, cap_warnings, decode_json, first_lines
from inspector.importers._database_file import database_line, is_sqlite_file
from inspector.importers._input import InputError
from inspector.importers._parallel import HERE, OneProcess, ParseChildren
from inspector.importers._sources import (
    clashes,
    expand,
    is_subagent_file,
    keep_apart,
    known_sources,
    logical_name,
    read_files,
    read_text,
    read_text_hashed,
    replace_thread,
    resolved,
    shown,
    sibling_files,
)
from inspector.importers._sources import companions as find_companions
from inspector.importers.base import Importer, Sample
from inspector.importers.native import export_native
from inspector.store import StoreError, bulk, sqlite_path
from inspector.store.native import ThreadsRefused
from inspector.thread_repair import sanitize_thread

ImportError_ = FormatError
"""Alias used by the CLI: a whole input that cannot be imported."""

_IMPORTERS: tuple[Importer, ...] = (
    codex.IMPORTER,
    gemini_cli.IMPORTER,
    copilot_cli.IMPORTER,
    claude_code.IMPORTER,
    native.IMPORTER,
    opencode.IMPORTER,
    cline.CLINE,
    cline.ROO,
    swe_agent.IMPORTER,
    anthropic.IMPORTER,
    openai.IMPORTER,
)
"""Every importer, in the order detection asks them (the first to say yes wins)."""

REGISTRY: dict[str, Importer] = {i.name: i for i in _IMPORTERS}
"""Format name -> its importer (`base.Importer`)."""
FORMAT_NAMES = ("auto", *REGISTRY)


def default_profile(source: str | None) -> str | None:
    """The profile a thread of this source (an importer's name) replays under unless one is chosen."""
    importer = REGISTRY.get(source or "")
    return importer.default_profile if importer is not None else None

ImportProgress = Callable[[str, int, int], None]
"""progress(path, characters done, characters in the file)."""

__all__ = [
    "FORMAT_NAMES",
    "REGISTRY",
    "Importer",
    "FormatError",
    "ImportError_",
    "ImportReport",
    "ParseResult",
    "default_jobs",
    "default_profile",
    "detect_format",
    "detect_format_text",
    "export_native",
    "import_paths",
    "parse_text",
    "read_text",
]


@dataclass
class ImportReport:
    threads: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """Whole files that could not be imported (unreadable, unknown format), one line each."""
    coverage: list[Coverage] = field(default_factory=list)
    unlisted: int = 0
    """Warnings counted but not listed (see `_common.cap_warnings`)."""
    thread_errors: list[str] = field(default_factory=list)
    """Threads the database refused to save (the rest of their file was saved), one line each."""
    folder_errors: list[str] = field(default_factory=list)
    """Folders the walk could not read (nothing under them imported), one line each."""

    def coverage_lines(self) -> list[str]:
        """One line per file that records model calls: what it holds against what was imported."""
        return [c.line() for c in self.coverage]

    def summary_line(self) -> str:
        text = f"imported {len(self.threads)} thread(s) from {len(self.files)} file(s)"
        if self.replaced:
            text += f", {len(self.replaced)} replaced"
        # every warning says what happened (a line skipped, a chain bridged, an id renamed): counted as
        # warnings, since most leave nothing out
        text += f"; {len(self.skipped) + self.unlisted} warning(s)"
        if self.errors:
            text += f"; {len(self.errors)} file(s) failed"
        if self.folder_errors:
            text += f"; {len(self.folder_errors)} folder(s) not read"
        if self.thread_errors:
            text += f"; {len(self.thread_errors)} thread(s) not saved"
        if self.coverage:
            total = Coverage("")
            for c in self.coverage:
                for key in ("calls", "calls_imported", "results", "results_imported", "compactions",
                            "compactions_imported", "calls_unbilled"):
                    setattr(total, key, getattr(total, key) + getattr(c, key))
            short = sum(1 for c in self.coverage if not c.complete)
            unbilled = f" (+{total.calls_unbilled} the files record no tokens for)" if total.calls_unbilled else ""
            text += (f"; model calls {total.calls_imported}/{total.calls} with billed tokens{unbilled}, "
                     f"tool results {total.results_imported}/{total.results}, "
                     f"compactions {total.compactions_imported}/{total.compactions}")
            text += f" ({short} file(s) incomplete, see the warnings)" if short else ""
        return text


def _detected(sample: Sample) -> str | None:
    return next((i.name for i in _IMPORTERS if i.detect(sample)), None)


def detect_format_text(name: str, text: str) -> str:
    """The format of `text` (the contents of file `name`); FormatError when unknown."""
    logical = logical_name(name).lower()
    stripped = text.lstrip()
    if not stripped:
        raise FormatError(f"{name}: empty file")
    by_suffix = next((i.name for i in _IMPORTERS if logical.endswith(i.suffixes or ("\0",))), None)
    if by_suffix is not None:
        return by_suffix
    if logical.endswith(".jsonl") or (stripped.startswith("{") and "\n{" in stripped[:200000]):
        sample: list[dict[str, Any]] = []
        for line in first_lines(text, 50):
            try:
                value = decode_json(line)
            except ValueError:  # JSONDecodeError included
                continue
            if isinstance(value, dict):
                sample.append(value)
        kind = _detected(Sample(logical, lines=tuple(sample)))
        if kind is not None:
            return kind
        if logical.endswith(".jsonl"):
            raise FormatError(f"{name}: unknown JSONL transcript format (use --format)")
    try:
        document = decode_json(text)
    except json.JSONDecodeError as exc:
        raise FormatError(f"{name}:{exc.lineno}: invalid JSON ({exc.msg}); cannot detect the format") from None
    except ValueError as exc:
        raise FormatError(f"{name}: {exc}; cannot detect the format") from None
    version = document.get("format") if isinstance(document, dict) else None
    if isinstance(version, str) and version.startswith("context-inspector/") and version != native.FORMAT:
        raise FormatError(f"{name}: unsupported format {version!r} (this version reads {native.FORMAT!r})")
    kind = _detected(Sample(logical, document=document))
    if kind is None:
        raise FormatError(f"{name}: unknown transcript format (use --format)")
    return kind


def detect_format(path: str | Path) -> str:
    path = Path(path)
    return detect_format_text(path.name, read_text(path))


def parse_text(text: str, name: str, fmt: str = "auto", progress: Callable[[int], None] | None = None,
               companions: list[tuple[str, str]] | None = None) -> tuple[str, ParseResult]:
    """(format, parse result) for the contents `text` of file `name` (`companions`: a Claude Code
    session's sub-agent files as (name, text))."""
    if fmt == "auto":
        fmt = detect_format_text(name, text)
    if fmt not in REGISTRY:
        raise FormatError(f"unknown format {fmt!r} (one of {', '.join(FORMAT_NAMES)})")
    logical = logical_name(name)
    try:
        result = REGISTRY[fmt].parse_text(text, logical, progress, companions)
    except RecursionError:
        raise FormatError(f"{name}: content nested too deeply to import") from None
    result.threads = _mark_gaps(_valid_threads(result.threads, logical, result.skipped), result.coverage)
    if logical != name:  # report the file the user named
        result.skipped = [s.replace(logical, name, 1) if s.startswith(logical) else s for s in result.skipped]
    return fmt, result


def _valid_threads(threads: list[Any], name: str, skipped: list[str]) -> list[Any]:
    """Threads the store can hold: a repeated thread id is dropped (and reported); every thread is
    repaired by `sanitize_thread` (repeated message ids renamed, bad values dropped; each reported)."""
    out, seen = [], set()
    for thread in threads:
        if thread.id in seen:
            skipped.append(f"{name}: thread {thread.id}: the same thread id appears twice in the file")
            continue
        seen.add(thread.id)
        try:
            fixed, warnings = sanitize_thread(thread, name)
        except Exception as exc:  # noqa: BLE001 - a repair bug must not lose the file's other threads
            detail = " ".join(str(exc).split())[:200]
            skipped.append(f"{name}: thread {thread.id}: internal error while repairing it ({type(exc).__name__}: "
                           f"{detail}); thread skipped, please report it")
            continue
        skipped.extend(warnings)
        out.append(fixed)
    return out


def _mark_gaps(threads: list[Any], coverage: list[Coverage]) -> list[Any]:
    """Threads of a file whose coverage is short carry `meta["import_gaps"]` (what is missing)."""
    short = [c for c in coverage if not c.complete]
    if not short:
        return threads
    gaps = {"calls": sum(c.calls - c.calls_imported for c in short),
            "results": sum(c.results - c.results_imported for c in short),
            "compactions": sum(c.compactions - c.compactions_imported for c in short),
            "files": [c.file for c in short]}
    return [replace_thread(t, meta={**t.meta, "import_gaps": gaps}) for t in threads]


@dataclass
class _Saved:
    """One file saved in the batch: what it adds to the report once the batch is committed, and what
    to save again if the batch is lost before that."""

    name: str
    threads: list[Any]
    record: dict[str, Any]
    companions: list[str]
    skipped: list[str]
    omitted: int
    coverage: list[Coverage]
    rows: list[Any] | None = None
    """Per thread, its rows built by a parse child (`_Parsed.rows`); None: built when saved."""
    flags: list[bool | None] = field(default_factory=list)
    thread_errors: list[str] = field(default_factory=list)

    def apply(self, report: ImportReport) -> None:
        report.files.append(self.name)
        report.files.extend(self.companions)
        report.skipped.extend(self.skipped)
        report.unlisted += max(0, self.omitted - 1)  # the counting line itself is one of report.skipped
        report.threads.extend(t.id for t, was in zip(self.threads, self.flags, strict=True) if was is not None)
        report.replaced.extend(t.id for t, was in zip(self.threads, self.flags, strict=True) if was)
        report.coverage.extend(self.coverage)
        report.thread_errors.extend(self.thread_errors)


@dataclass
class _Run:
    """The state of one import run: the store's batch, what is waiting for its commit, what was seen."""

    store: Any
    fmt: str
    progress: ImportProgress | None
    now: str | None
    report: ImportReport
    known: dict[str, tuple[str, str]]
    batch: Any = None
    pending: list[_Saved] = field(default_factory=list)
    consumed: set[str] = field(default_factory=set)
    heads: dict[Path, str | None] = field(default_factory=dict)
    listings: dict[Path, list[Path]] = field(default_factory=dict)
    stopped: str | None = None
    """Why the batch was lost (the database stopped accepting writes): the run goes no further."""
    pause: CollectionPause = field(default_factory=CollectionPause)
    """The collector paused over the run (`gcpolicy.CollectionPause`): its files' records, messages and
    rows are hundreds of thousands of objects that live until their batch is committed and make no
    reference cycles; each commit collects what is left of them (`commit`)."""

    def save(self, saved: _Saved) -> None:
        """Save one file's threads and import record (in the batch when the store has one); StoreError."""
        if self.batch is not None:
            saved.flags = self.batch.save_file(saved.threads, now=self.now, rows=saved.rows, **saved.record)
            errors = self.batch.errors
        else:  # a store without batches: threads, then the record
            saved.flags = self.store.save_threads(saved.threads, now=self.now)
            errors = getattr(self.store, "save_errors", [])
            pairs = list(zip(saved.threads, saved.flags, strict=True))
            self.store.add_import_record(thread_ids=[t.id for t, f in pairs if f is not None],
                                         replaced=[t.id for t, f in pairs if f], now=self.now, **saved.record)
        saved.thread_errors = [f"{saved.name}: {line}" for line in errors]

    def commit(self) -> bool:
        """Commit the batch; False (and every file waiting for it an error line) when that failed."""
        try:
            if self.batch is not None:
                self.batch.commit()
        except StoreError as exc:
            self._lost(str(exc))
            return False
        for saved in self.pending:
            saved.apply(self.report)
        self.pending = []
        self.pause.collect()
        return True

    def recover(self) -> None:
        """After a failed save: begin the batch again with the files saved before it (SQLite may have
        undone the whole transaction) and commit them."""
        if self.batch is None:
            self.commit()
            return
        self.batch.rollback()
        try:
            for saved in self.pending:
                self.save(saved)
        except StoreError as exc:
            self._lost(str(exc))
            return
        self.commit()

    def commit_while_waiting(self) -> None:
        """While this process waits for a parse child: the files saved so far committed, once the batch
        has run `WAITING_COMMIT` of its time, so the last commit has less to write (the parallel run's
        tail); a failure stops the run as a failed commit does."""
        batch = self.batch
        if (self.stopped is None and self.pending and batch is not None
                and time.monotonic() - batch.started >= batch.seconds * WAITING_COMMIT):
            self.commit()

    def _lost(self, reason: str) -> None:
        self.stopped = reason
        if self.batch is not None:
            self.batch.rollback()
        for saved in self.pending:
            self.report.errors.append(f"{saved.name}: not saved ({reason}); nothing of it imported")
        self.pending = []


def import_paths(
    paths: Iterable[str | Path],
    store: Any,
    fmt: str = "auto",
    progress: ImportProgress | None = None,
    *,
    now: str | None = None,
    jobs: int = 1,
) -> ImportReport:
    """Import every file of `paths` into `store` (opened for writing); see the module docstring.

    Each file's threads and its import record are saved together or not at all (a savepoint of the
    run's batch, committed every second: `inspector.store.native.ImportBatch`). When the database
    stops accepting writes (a full disk), the files not committed are error lines and the run stops.
    `progress(path, done, total)` counts bytes over the whole run (one bar for every file).

    `jobs` > 1: the files are parsed in that many processes (`jobs - 1` forked children, and this one
    while it waits) and written by this one in the same order, with the same result (`_parallel`); one
    process for a single file, for less than `PARALLEL_BYTES` to parse, for a store without batches or
    rows built ahead, and where the platform cannot fork."""
    report = ImportReport()
    database = sqlite_path(getattr(store, "url", "") or "")
    walk = expand(paths, exclude=[database.with_name(database.name + s) for s in ("", "-wal", "-shm", "-journal")]
                  if database is not None else ())
    report.skipped.extend(walk.warnings)
    report.folder_errors.extend(walk.errors)
    files = walk.files
    sizes: list[int] = []
    for f in files:
        try:
            sizes.append(f.stat().st_size)
        except OSError:
            sizes.append(0)
    grand = sum(sizes)
    done_before = 0
    run = _Run(store, fmt, progress, now, report, known_sources(store))
    run.batch = store.import_batch() if hasattr(store, "import_batch") else None
    # sessions first: a sub-agent file, or a message or part file of opencode's storage tree, comes with its session
    pairs = list(zip(files, sizes, strict=True))
    members = [is_subagent_file(p) or opencode_storage.is_member_file(p) for p in files]
    ordered = [*(p for p, m in zip(pairs, members, strict=True) if not m),
               *(p for p, m in zip(pairs, members, strict=True) if m)]
    try:
        with _parsers(ordered, run, jobs) as parsers, run.pause:  # the children forked with the collector on
            if isinstance(parsers, ParseChildren):
                parsers.idle = run.commit_while_waiting
            for number, (path, size) in enumerate(ordered):
                if resolved(str(path)) in run.consumed:
                    parsers.skip(number)
                    done_before += size
                    continue
                stored = opencode_storage.storage_kind(path)
                if stored is not None and stored[0] != "session":  # no session file brought it
                    if stored[0] != "other":  # project, todo, permission files hold no conversation
                        report.skipped.append(f"{shown(path)}: a message or part of opencode's storage tree whose "
                                              "session file is not in it; not imported")
                    parsers.skip(number)
                    done_before += size
                    continue
                if not _import_one(path, run, (done_before, size, grand), parsers, number):
                    left = len(ordered) - number - 1
                    if left:
                        report.errors.append(f"{left} more file(s) not imported: the database stopped accepting writes")
                    break
                done_before += size
                if (run.batch is None or run.batch.due()) and not run.commit():
                    break
            else:
                parsers.finish()
                run.commit()
    finally:
        if run.batch is not None:
            run.batch.close()
    if progress is not None and grand:
        progress("", grand, grand)
    return report


MAX_DEFAULT_JOBS = 4
"""`default_jobs`' ceiling: more processes hold more files' rows at once (`_parallel.BUDGET` bounds them)."""


def default_jobs() -> int:
    """The processes parsing the files of the CLI's `import` (its `--jobs`): the CPUs this process may
    run on, at most `MAX_DEFAULT_JOBS`."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_DEFAULT_JOBS))


WAITING_COMMIT = 0.25
"""A parallel run commits while it waits for a child once its batch is this share of `COMMIT_SECONDS`
old (the commits' fsyncs stay few; the last one has less left to write)."""

PARALLEL_BYTES = 4 << 20
"""Less to parse than this (in files parse children could take) is parsed in one process: forking the
children and sending the rows back would cost about what they save."""


def _parsers(ordered: list[tuple[Path, int]], run: _Run, jobs: int) -> ParseChildren | OneProcess:
    """The run's parse children (`_parallel.ParseChildren`), or `OneProcess` (see `import_paths`)."""
    if jobs <= 1 or run.batch is None or not can_fork():
        return OneProcess()
    # Sub-agent files and opencode's message and part files come with their session (parsed with it);
    # the few left over are parsed here, at the end, in order.
    planned = [n for n, (path, _) in enumerate(ordered)
               if not (is_subagent_file(path) or opencode_storage.is_member_file(path))
               and opencode_storage.storage_kind(path) is None]
    if len(planned) < 2 or sum(ordered[n][1] for n in planned) < PARALLEL_BYTES:
        return OneProcess()
    try:
        ascii = run.batch.prebuilt_ascii()
    except StoreError:
        ascii = None
    if ascii is None:  # a driver whose rows this process builds (SQLAlchemy's inserts)
        return OneProcess()
    fmt, heads, listings = run.fmt, {}, {}  # the child's own caches of the sub-agent files' heads and folders

    def work(number: int, progress: Callable[[int, int], None] | None) -> _Parsed | str:
        with CollectionPause():  # as in this process (`import_paths`): a file's objects live until sent
            return _prebuilt(_parse_one(ordered[number][0], fmt, heads, listings, progress), ascii)

    return ParseChildren(min(jobs, len(planned)) - 1, work, planned, progress=run.progress is not None,
                         sizes={n: ordered[n][1] for n in planned})


@dataclass
class _Parsed:
    """One file read and parsed, with its sub-agent (or sibling) files, before the store is asked anything."""

    name: str
    used: str
    sha: str
    result: ParseResult
    companions: list[Path]
    rows: list[Any] | None = None
    """Built in a parse child (`_prebuilt`): per thread its store rows (`bulk.thread_rows`), the thread in
    `result` then its header alone; None for a thread whose rows could not be built (the whole thread)."""


def _prebuilt(parsed: _Parsed | str, ascii: bool) -> _Parsed | str:
    """`parsed` with its threads' store rows built, and the threads made headers (what is pickled)."""
    if isinstance(parsed, str):
        return parsed
    threads, rows = [], []
    for thread in parsed.result.threads:
        try:
            rows.append(bulk.thread_rows(thread, ascii))
        except (TypeError, ValueError):  # the store says what it refuses, as it does in one process
            rows.append(None)
            threads.append(thread)
        else:
            threads.append(replace_thread(thread, messages=(), requests=(), summaries=()))
    parsed.result.threads = threads
    parsed.rows = rows
    return parsed


def _import_one(path: Path, run: _Run, span: tuple[int, int, int], parsers: ParseChildren | OneProcess | None = None,
                number: int = 0) -> bool:
    """Read, parse and save one file (with its sub-agent files); False when the database failed and the
    run must stop. `parsers`: where its parse may have been done already (file `number` of the run)."""
    name = shown(path)
    said = [0]

    def progress(done: int, total: int) -> None:
        if run.progress is not None and done >= said[0]:  # the whole run's bytes: the files before, this one's share
            said[0] = done
            before, size, grand = span
            run.progress(name, before + done * size // total, grand)

    kind, parsed = parsers.take(number, progress) if parsers is not None else HERE
    if run.stopped is not None:  # a commit while waiting for this file failed: the run stops here
        run.report.errors.append(f"{name}: not saved ({run.stopped}); nothing of it imported")
        return False
    if kind == "died":
        run.report.errors.append(f"{name}: the process parsing it {parsed}; nothing of it imported")
        return True
    if kind == "here" or (isinstance(parsed, _Parsed) and clashes(parsed.result.threads, path, parsed.sha, run.known)):
        # parsed here: as one process does (a clash renames the threads, their rows with them)
        parsed = _parse_one(path, run.fmt, run.heads, run.listings, progress if kind == "here" else None)
    if isinstance(parsed, str):
        run.report.errors.append(parsed)
        return True
    return _save_one(parsed, path, run)


def _parse_one(path: Path, fmt: str, heads: dict[Path, str | None], listings: dict[Path, list[Path]],
               progress: Callable[[int, int], None] | None) -> _Parsed | str:
    """One file read and parsed with its companions, or the line saying why it cannot be (for `errors`).
    `heads`, `listings`: the caches `find_companions` keeps over a run."""
    name = shown(path)
    decode_warnings: list[str] = []
    if is_sqlite_file(path):  # an app's database: opened in place with --db, never imported
        return database_line(path, name)
    try:
        text, sha = read_text_hashed(path, decode_warnings)
    except FileNotFoundError:
        return f"{name}: no such file"
    except IsADirectoryError:
        return f"{name}: is a directory"
    except InputError as exc:
        return f"{name}: {exc}"
    except MemoryError:
        return f"{name}: out of memory reading it ({_size(path)}); nothing of it imported"
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
        return f"{name}: cannot read ({' '.join(str(exc).split())})"
    total = max(len(text), 1)

    def file_progress(done: int, _total: int = total) -> None:
        if progress is not None:
            progress(min(done, _total), _total)

    companions: list[tuple[Path, str]] = []
    try:
        used = fmt if fmt != "auto" else detect_format_text(name, text)
        if used in REGISTRY and REGISTRY[used].companion_files is not None:
            companions = read_files(REGISTRY[used].companion_files(path), decode_warnings)
        elif used in REGISTRY and REGISTRY[used].siblings:
            companions = sibling_files(path, REGISTRY[used].siblings, decode_warnings)
        elif used in REGISTRY and REGISTRY[used].companions and not is_subagent_file(path):
            companions = find_companions(path, text, decode_warnings, heads, listings)
        used, result = parse_text(text, name, used, file_progress, [(shown(p), t) for p, t in companions])
    except FormatError as exc:
        return str(exc)
    except MemoryError:
        return f"{name}: out of memory importing it ({_size(path)}); nothing of it imported"
    except Exception as exc:  # noqa: BLE001 - a parser bug must not lose the other files
        detail = " ".join(str(exc).split())[:200]
        return f"{name}: internal error while importing ({type(exc).__name__}: {detail}); please report it"
    result.skipped[:0] = decode_warnings
    return _Parsed(name, used, sha, result, [p for p, _ in companions])


def _save_one(parsed: _Parsed, path: Path, run: _Run) -> bool:
    """Save one parsed file in the run's batch (see `_import_one`)."""
    report, store, name, result = run.report, run.store, parsed.name, parsed.result
    result.threads = keep_apart(result.threads, path, parsed.sha, run.known, run.batch or store, result.skipped)
    result.skipped, omitted = cap_warnings(result.skipped, name)
    # The record names the file by its absolute path: what it says holds wherever the next command runs.
    record = {"path": shown(os.path.abspath(path)), "sha256": parsed.sha, "fmt": parsed.used, "skipped": result.skipped}
    saved = _Saved(name, result.threads, record, [shown(p) for p in parsed.companions], result.skipped, omitted,
                   result.coverage, parsed.rows)
    try:
        run.save(saved)
    except ThreadsRefused as exc:  # this file's data: nothing of it saved, the other files go on
        report.errors.append(f"{name}: {exc}")
        return True
    except StoreError as exc:  # the database failed (a full disk): keep what came before, then stop
        run.recover()
        report.errors.append(f"{name}: not saved ({exc}); nothing of it imported")
        return False
    run.pending.append(saved)
    run.consumed.update(resolved(str(p)) for p in parsed.companions)
    where = resolved(str(path))
    run.known.update((t.id, (where, parsed.sha)) for t, was in zip(saved.threads, saved.flags, strict=True)
                     if was is not None)
    return True


def _size(path: Path) -> str:
    try:
        return f"{path.stat().st_size / (1 << 20):.0f} MiB"
    except OSError:
        return "size unknown"
