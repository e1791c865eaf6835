"""The `context-inspector` command: the TUI by default, headless commands beside it.

Over 400 lines on purpose: every command's click declaration in one place, so the options read
as one list (the work of each command is in the service layer and `cli_output`)."""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import sys
from dataclasses import replace
from typing import Any

import click

from inspector.cli_output import OutputRefused, check_output, json_dumps, json_text, write_output
from inspector.config import COMPACTION_MODES, PROFILES, ConfigError, parse_set
from inspector.textsafe import safe_line

FORMATS = ["auto", "native", "claude-code", "codex", "openai", "anthropic", "swe-agent"]


class UserError(click.ClickException):
    """A user's mistake: one line on stderr, exit status 2, no traceback."""

    exit_code = 2

    def show(self, file=None) -> None:  # noqa: D102
        click.echo(f"context-inspector: error: {safe_line(self.format_message())}", err=True)


def _end_on_signals(ctx: click.Context) -> None:
    """SIGTERM and SIGHUP end a command as an error would: its `finally` blocks run, so the store is
    closed and its snapshot copy in $TMPDIR removed (the TUI installs its own handlers once it runs).
    The handlers before are back when the command ends (the CLI also runs inside other programs)."""
    import signal

    def end(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):  # not the main thread
            previous = signal.signal(signum, end)
            ctx.call_on_close(functools.partial(signal.signal, signum, previous))


def _say(prefix: str, line: object) -> None:
    """One line on stderr, terminal-safe (untrusted text never reaches the terminal raw)."""
    click.echo(f"{prefix}{safe_line(line)}", err=True)


def _flush(store: Any) -> None:
    """How the database was opened (WAL-mode SQLite) and what was repaired while reading it."""
    note = getattr(store, "access_note", None)
    if note:
        _say("note: ", note)
    for line in getattr(store, "warnings", ()):
        _say("warning: ", line)
    if hasattr(store, "warnings"):
        store.warnings.clear()


def _fail(exc: Exception) -> UserError:
    text = " ".join(str(exc).split()) or exc.__class__.__name__
    return UserError(text)


def _open_store(db: str | None, *, read_only: bool = True, create: bool = False):
    from inspector.store import Store, StoreError, resolve_db_url

    try:
        url = resolve_db_url(db)
        if url is None:
            from inspector.demo import ensure_demo_db

            url = ensure_demo_db()
        return Store.open(url, read_only=read_only, create=create)
    except (StoreError, OSError) as exc:
        raise _fail(exc) from None


def _overrides(items: tuple[str, ...]) -> dict[str, Any]:
    try:
        return parse_set(items)
    except ConfigError as exc:
        raise _fail(exc) from None


db_option = click.option("--db", metavar="URL", help="SQLAlchemy URL or file path (env CONTEXT_INSPECTOR_DB).")


OUTPUT_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EPIPE)


class InspectorGroup(click.Group):
    """The commands, with what no command can catch itself made one line: standard output that cannot
    be written (a full disk, a closed pipe) and memory running out."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OSError as exc:
            if exc.errno not in OUTPUT_ERRNOS or exc.filename is not None:
                raise
            _quiet_stdout()
            if exc.errno == errno.EPIPE:  # the reader went away (`| head`): nothing to say
                raise SystemExit(1) from None
            raise UserError(f"cannot write to standard output ({exc.strerror or exc}); the output is incomplete") \
                from None
        except MemoryError:
            raise UserError("out of memory: the input needs more memory than this process may use (a smaller "
                            "file, fewer threads, or a higher memory limit)") from None


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's last flush of what could not be written
    raises nothing more."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


@click.group(cls=InspectorGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@db_option
@click.option("--thread", "thread_id", metavar="ID", help="Open this thread.")
@click.option("--profile", type=click.Choice(PROFILES), help="Pipeline to replay (default: the thread's source's).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a config key.")
@click.version_option(package_name="context-inspector")
@click.pass_context
def main(ctx: click.Context, db: str | None, thread_id: str | None, profile: str | None, sets: tuple[str, ...]) -> None:
    """Inspect an LLM app's context window, request by request.

    With no command, opens the full-screen inspector (on the demo database when no
    database is configured).
    """
    _end_on_signals(ctx)
    if ctx.invoked_subcommand is not None:
        return
    overrides = _overrides(sets)
    from inspector.store import StoreError, resolve_db_url

    try:
        url = resolve_db_url(db)
        if url is None:
            from inspector.demo import ensure_demo_db

            url = ensure_demo_db()
    except (StoreError, OSError) as exc:
        raise _fail(exc) from None
    from inspector.app import create_app

    try:
        app = create_app(db_url=url, thread_id=thread_id, profile=profile, overrides=overrides)
    except (StoreError, ConfigError) as exc:
        raise _fail(exc) from None
    try:
        app.run()
    finally:
        app.replayer.close()  # the snapshot copies, whatever ended the app
    if app.signalled is not None:
        sys.exit(128 + app.signalled)
    if app.startup_error:
        raise UserError(app.startup_error)


@main.command("threads")
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def threads_command(db: str | None, as_json: bool) -> None:
    """List the threads of a database."""
    from inspector.store import StoreError

    store = _open_store(db)
    try:
        infos = store.list_threads()
    except StoreError as exc:
        raise _fail(exc) from None
    finally:
        _flush(store)
        store.close()
    if as_json:
        click.echo(json_text([i.to_json() for i in infos]))
        return
    from inspector.textsafe import safe_line

    rows = [(i.id, i.source, str(i.messages), str(i.requests) + ("!" if i.incomplete else ""),
             str(i.summaries) + (f" ({i.manual_summaries} manual (/compact))" if i.manual_summaries else ""),
             i.title) for i in infos]
    # COMP: the compactions (recorded summaries) of the thread, as the TUI's thread list calls them; those
    # the user asked for (Claude Code's /compact) are counted apart
    _print_table(("ID", "SOURCE", "MSGS", "REQS", "COMP", "TITLE"), [tuple(safe_line(c) for c in r) for r in rows])
    if any(i.incomplete for i in infos):
        click.echo("! incomplete import: the source file holds model calls, tool results or compactions this "
                   "thread lacks (the import warnings name them)")


@main.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@db_option
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True)
def import_command(paths: tuple[str, ...], db: str | None, fmt: str) -> None:
    """Import transcripts into a database (created when missing)."""
    from inspector.importers import ImportError_, import_paths
    from inspector.importers._input import InputError, input_limit
    from inspector.store import StoreError, resolve_db_url, sqlite_path

    try:
        input_limit()  # a bad $CONTEXT_INSPECTOR_MAX_INPUT_MB is one line before anything is read
    except InputError as exc:
        raise UserError(str(exc)) from None
    url = resolve_db_url(db)
    new_file = sqlite_path(url) if url is not None else None
    if new_file is not None and new_file.exists():
        new_file = None  # an existing database is never removed
    store = _open_store(db, read_only=False, create=True)
    progress = _progress_bar()
    report = None
    try:
        report = import_paths(list(paths), store, fmt=fmt, progress=progress)
    except (ImportError_, OSError, StoreError) as exc:
        raise _fail(exc) from None
    finally:
        progress.close()
        _flush(store)
        store.close()
        if new_file is not None and (report is None or not report.threads):
            _remove_new_database(new_file)  # a failed import leaves no empty database behind
    from inspector.textsafe import safe_line

    for line in report.skipped:
        click.echo(f"warning: {safe_line(line)}", err=True)
    for line in [*report.folder_errors, *report.errors, *report.thread_errors]:
        click.echo(f"error: {safe_line(line)}", err=True)
    for line in report.coverage_lines():
        click.echo(safe_line(line))
    click.echo(safe_line(report.summary_line()))
    if not report.threads:
        sys.exit(1)


@main.command("export")
@click.argument("thread_ids", nargs=-1)
@db_option
@click.option("-o", "--output", type=click.Path(), help="File to write (default stdout).")
@click.option("--force", is_flag=True,
              help="Overwrite an existing file that is not one of this tool's exports (never the database or an "
                   "import's source).")
def export_command(thread_ids: tuple[str, ...], db: str | None, output: str | None, force: bool) -> None:
    """Export threads in the native format (all threads when none are named)."""
    from inspector.importers.native import export_native
    from inspector.store import StoreError

    store = _open_store(db)
    target = None
    try:
        if output:
            target = check_output(output, store, force)
        ids = list(thread_ids) or [i.id for i in store.list_threads()]
        threads = [store.load_thread(i) for i in ids]
    except OutputRefused as exc:
        raise UserError(str(exc)) from None
    except (StoreError, KeyError) as exc:
        raise _fail(exc) from None
    finally:
        _flush(store)
        store.close()
    text = json_dumps(export_native(threads))
    if target is not None:
        try:
            write_output(target, text + "\n")
        except OSError as exc:
            raise UserError(f"{output}: cannot write ({exc.strerror or exc}); nothing written") from None
    else:
        click.echo(text)


@main.command("simulate")
@click.option("--thread", "thread_id", required=True, metavar="ID")
@db_option
@click.option("--profile", type=click.Choice(PROFILES), help="Pipeline (default: the thread's source's, else iris).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a config key (repeatable).")
@click.option("--compactions", type=click.Choice(COMPACTION_MODES),
              help="recorded: follow the thread's compactions; decide: the profile decides every one "
                   "(default: recorded where the thread recorded any).")
@click.option("--request", "request_index", type=int, metavar="INDEX",
              help="Only the request with this index (from 0, as in the JSON; the TUI shows it as request INDEX+1).")
@click.option("--timeline", is_flag=True, help="Per-request summary without blocks.")
@click.option("--json", "as_json", is_flag=True, help="Print the simulation JSON.")
def simulate_command(thread_id: str, db: str | None, profile: str | None, sets: tuple[str, ...],
                     compactions: str | None, request_index: int | None, timeline: bool, as_json: bool) -> None:
    """Replay a thread's context pipeline and print the audit."""
    from inspector.service import default_compactions, load_config, reproduction, reproduction_line, run_replay
    from inspector.store import StoreError

    overrides = _overrides(sets)
    store = _open_store(db)
    try:
        thread = store.load_thread(thread_id)
    except (StoreError, KeyError) as exc:
        raise _fail(exc) from None
    finally:
        _flush(store)
        store.close()
    for line in thread.meta.get("load_warnings", ()) if isinstance(thread.meta, dict) else ():
        _say("warning: ", line)
    try:
        config = load_config(profile, overrides, thread=thread)
        mode = compactions or default_compactions(thread)
        result = run_replay(thread, config, compactions=mode)
        result.costs  # noqa: B018 - the prompt cache, whose notice (not modelled) is said with the others
        for notice in result.notices:
            _say("warning: ", notice)
        if request_index is not None and not 0 <= request_index < len(result):
            raise UserError(
                f"--request {request_index} is out of range: thread {thread_id} has {len(result)} requests"
            )
        # Block lists are built only where they are printed.
        detailed = request_index
        if detailed is None and not as_json and not timeline and len(result):
            detailed = len(result) - 1  # the text report shows the last request in full
        if detailed is not None:
            sim = result.simulation(blocks=False)
            sim = replace(sim, requests=tuple(
                result.audit(r.index) if r.index == detailed else r for r in sim.requests))
        else:
            sim = result.simulation(blocks=as_json and not timeline)
    except (ConfigError, ValueError, RuntimeError) as exc:
        raise _fail(exc) from None
    if as_json:
        click.echo(json_text(sim.to_json(timeline=timeline, request=request_index)))
        return
    from inspector.report import render_simulation

    try:
        # how the profile itself (its baseline config, no --set) reproduces the recorded compactions
        status = reproduction_line(config.profile, reproduction(thread, load_config(config.profile, {}, thread=thread)))
    except (ConfigError, ValueError, RuntimeError) as exc:
        raise _fail(exc) from None
    click.echo(render_simulation(sim, thread, timeline=timeline, request=request_index, compactions=mode,
                                 status=status, calibration=result.calibration))


def _remove_new_database(path) -> None:
    """Remove a SQLite file this command created, with its journal files."""
    for candidate in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"),
                      path.with_name(path.name + "-journal")):
        with contextlib.suppress(OSError):
            candidate.unlink(missing_ok=True)


def _load_threads(db: str | None, thread_id: str | None, every: bool) -> list:
    """The one thread asked for, or every thread of the database (`--all`)."""
    from inspector.store import StoreError

    if (thread_id is None) == (not every):
        raise UserError("give --thread ID or --all")
    store = _open_store(db)
    try:
        ids = [thread_id] if thread_id is not None else [i.id for i in store.list_threads()]
        return [store.load_thread(i) for i in ids]
    except (StoreError, KeyError) as exc:
        raise _fail(exc) from None
    finally:
        _flush(store)
        store.close()


def _replay_for(thread, profile: str | None, overrides: dict[str, Any], compactions: str | None):
    """The replay `loss` and `probe` read: in `compactions` mode, else the thread's default mode
    (recorded where it recorded compactions), as `simulate` replays it."""
    from inspector.service import default_compactions, load_config, run_replay

    config = load_config(profile, overrides, thread=thread)
    mode = compactions or default_compactions(thread)
    result = run_replay(thread, config, compactions=mode)
    for notice in result.notices:
        _say("warning: ", notice)
    return config, result, mode


@main.command("loss")
@click.option("--thread", "thread_id", metavar="ID", help="The thread (or --all).")
@click.option("--all", "every", is_flag=True, help="Every thread of the database.")
@db_option
@click.option("--profile", type=click.Choice(PROFILES))
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a config key (repeatable).")
@click.option("--compactions", type=click.Choice(COMPACTION_MODES),
              help="recorded: follow the thread's compactions; decide: the profile decides every one "
                   "(default: recorded where the thread recorded any).")
@click.option("--limit", type=click.IntRange(min=0), default=10, show_default=True,
              help="Lost facts listed per kind and compaction (0: all).")
@click.option("--json", "as_json", is_flag=True, help="Print the loss JSON.")
def loss_command(thread_id: str | None, every: bool, db: str | None, profile: str | None, sets: tuple[str, ...],
                 compactions: str | None, limit: int, as_json: bool) -> None:
    """What each compaction lost: the facts of its span and whether its summary kept them."""
    from inspector.lossreport import loss_json, loss_lines
    from inspector.pipeline.survival import compaction_losses
    from inspector.textsafe import safe_line

    overrides = _overrides(sets)
    threads = _load_threads(db, thread_id, every)
    losses: list = []
    profiles: dict[str, str] = {}
    modes: dict[str, str] = {}
    errors: list[dict[str, str]] = []
    for thread in threads:
        try:
            config, result, mode = _replay_for(thread, profile, overrides, compactions)
            profiles[thread.id] = config.profile
            modes[thread.id] = mode
            losses.extend((thread.id, loss) for loss in compaction_losses(thread, result))
        except (ConfigError, ValueError, RuntimeError) as exc:
            if not every:
                raise _fail(exc) from None
            message = " ".join(str(exc).split()) or exc.__class__.__name__
            errors.append({"thread_id": thread.id, "error": message})
            _say("error: ", f"thread {thread.id}: {message}")
    if as_json:
        click.echo(json_text(loss_json(losses, profile=profile, thread_ids=[t.id for t in threads], errors=errors,
                                       profiles=profiles, compactions=compactions, modes=modes)))
        if errors and len(errors) == len(threads):
            sys.exit(1)
        return
    for line in loss_lines(losses, threads=len(threads), limit=limit or None, failed=len(errors)):
        click.echo(safe_line(line))
    if errors and len(errors) == len(threads):
        sys.exit(1)


@main.command("probe")
@click.argument("texts", nargs=-1, required=True)
@click.option("--thread", "thread_id", required=True, metavar="ID")
@db_option
@click.option("--profile", type=click.Choice(PROFILES))
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a config key (repeatable).")
@click.option("--compactions", type=click.Choice(COMPACTION_MODES),
              help="recorded: follow the thread's compactions; decide: the profile decides every one "
                   "(default: recorded where the thread recorded any).")
@click.option("--json", "as_json", is_flag=True, help="Print the probe JSON.")
def probe_command(texts: tuple[str, ...], thread_id: str, db: str | None, profile: str | None,
                  sets: tuple[str, ...], compactions: str | None, as_json: bool) -> None:
    """Where each TEXT is visible to the model, request by request, and where it stopped being."""
    from inspector.lossreport import probe_json, probe_lines
    from inspector.pipeline.probe import probe

    overrides = _overrides(sets)
    empty = [t for t in texts if not t.strip()]
    if empty:
        raise UserError("a probe text is empty")
    (thread,) = _load_threads(db, thread_id, False)
    try:
        config, result, mode = _replay_for(thread, profile, overrides, compactions)
        results = probe(thread, result, list(texts))
    except (ConfigError, ValueError, RuntimeError) as exc:
        raise _fail(exc) from None
    if as_json:
        click.echo(json_text(probe_json(results, thread_id=thread.id, profile=config.profile, compactions=mode)))
        return
    for line in probe_lines(results):
        click.echo(safe_line(line))


@main.command("sweep")
@click.option("--thread", "thread_id", metavar="ID", help="The thread to sweep.")
@click.option("--all", "all_threads", is_flag=True, help="Every thread of the database (added up per config).")
@db_option
@click.option("--profile", type=click.Choice(PROFILES))
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a config key (repeatable).")
@click.option("--key", "keys", multiple=True, required=True, metavar="K=V1,V2,...",
              help="A key and the values to try (repeatable: every combination is replayed).")
@click.option("--compactions", type=click.Choice(["recorded", "decide"]), default="decide", show_default=True,
              help="Follow the recorded compactions, or let each config decide them.")
@click.option("--jobs", type=click.IntRange(1, 64), default=2, show_default=True, help="Worker processes (--all).")
@click.option("--max-combinations", "limit", type=click.IntRange(min=1), default=1_000, show_default=True,
              help="Refuse to replay more combinations than this (each is a whole replay).")
@click.option("--json", "as_json", is_flag=True, help="Print {\"rows\": [...]}.")
def sweep_command(thread_id: str | None, all_threads: bool, db: str | None, profile: str | None,
                  sets: tuple[str, ...], keys: tuple[str, ...], compactions: str, jobs: int, limit: int,
                  as_json: bool) -> None:
    """Replay every combination of config values; one row per config (cost, cache, compactions)."""
    from inspector import sweep
    from inspector.service import load_config
    from inspector.store import StoreError

    if bool(thread_id) == all_threads:
        raise UserError("give --thread ID or --all")
    overrides = _overrides(sets)
    try:
        combos = sweep.combinations([sweep.parse_key(k) for k in keys], limit)
    except ConfigError as exc:
        raise _fail(exc) from None
    if len(combos) >= sweep.MANY_COMBINATIONS:
        _say("note: ", f"{len(combos):,} combinations to replay, each a whole replay of "
                       f"{'every thread' if all_threads else 'the thread'}; a progress bar follows on a terminal")
    store = _open_store(db)
    try:
        ids = [i.id for i in store.list_threads()] if all_threads else [thread_id]
        thread = None if all_threads else store.load_thread(thread_id)
        url = store.url
    except (StoreError, KeyError) as exc:
        raise _fail(exc) from None
    finally:
        store.close()
    errors: list[str] = []
    try:
        if thread is not None:
            base = load_config(profile, overrides, thread=thread)
            for key in sweep.unread_keys(base.profile, combos):
                click.echo(f"warning: the {base.profile} profile does not read {key}: its values change nothing",
                           err=True)
            with _sweep_bar(len(combos)) as step:
                rows = sweep.sweep_thread(thread, base, combos, compactions=compactions, on_row=step)
        else:
            bar = click.progressbar(length=len(ids), label="sweeping", file=sys.stderr) if sys.stderr.isatty() \
                else None
            if bar is not None:
                bar.__enter__()
            try:
                rows, errors = sweep.sweep_all(url, ids, profile, overrides, combos, compactions=compactions,
                                               jobs=jobs, progress=(lambda _tid: bar.update(1)) if bar else None)
            finally:
                if bar is not None:
                    bar.__exit__(None, None, None)
    except (ConfigError, ValueError, RuntimeError) as exc:
        raise _fail(exc) from None
    for line in errors:
        click.echo(f"warning: {safe_line(line)}", err=True)
    if as_json:
        click.echo(json_text({"rows": [r.to_json() for r in rows]}))
        return
    names = tuple(combos[0]) if combos else ()
    header = (*names, *sweep.HEADER, "")
    _print_table(header, [tuple(safe_line(c) for c in r) for r in sweep.iter_table(rows)])
    if any(r.baseline for r in rows):
        click.echo("* the thread's own config")
    for line in sweep.footnotes(rows):
        click.echo(line)


@contextlib.contextmanager
def _sweep_bar(total: int):
    """A step function for each combination replayed: a progress bar on a terminal's stderr."""
    if total < 2 or not sys.stderr.isatty():
        yield lambda _row: None
        return
    with click.progressbar(length=total, label="sweeping", file=sys.stderr) as bar:
        yield lambda _row: bar.update(1)


def _print_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    click.echo("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    for r in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


class _progress_bar:
    """One progress bar on stderr for the whole import run when it is large, silent otherwise."""

    def __init__(self) -> None:
        self._bar = None

    def __call__(self, path: str, done: int, total: int) -> None:
        if total < 5_000_000 or not sys.stderr.isatty():
            return
        from inspector.textsafe import safe_line

        if self._bar is None:
            self._bar = click.progressbar(length=total, label="importing", file=sys.stderr)
            self._bar.__enter__()
        if path:
            self._bar.label = safe_line(path[-40:])
        self._bar.update(max(0, done - self._bar.pos))

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


if __name__ == "__main__":  # pragma: no cover
    main()
