"""`import`: transcripts into a database, with a progress bar on a large run."""

from __future__ import annotations

import contextlib
import sys
from dataclasses import replace

import click

from inspector.cli.common import UserError, db_option, fail, flush_notes, open_store
from inspector.cli.root import main
from inspector.importers import FORMAT_NAMES
from inspector.terminal_safety import safe_line


@main.command("import")
@click.argument("paths", nargs=-1, type=click.Path())
@db_option
@click.option("--format", "fmt", type=click.Choice(FORMAT_NAMES), default="auto", show_default=True)
@click.option("--discover", is_flag=True,
              help="Find the sessions every agent keeps under its standard location and import them all.")
@click.option("--home", type=click.Path(file_okay=False), default=None,
              help="With --discover: the home folder to look under (default: yours).")
@click.option("--jobs", type=click.IntRange(1, 64), default=None,
              help="Processes parsing the files while this one writes them (default: the CPUs this process "
                   "may use, at most 4); 1: all in one process. The result is the same.")
def import_command(paths: tuple[str, ...], db: str | None, fmt: str, discover: bool, home: str | None,
                   jobs: int | None) -> None:
    """Import transcripts into a database (created when missing)."""
    from inspector.importers import ImportError_, default_jobs, import_paths
    from inspector.importers._input import InputError, input_limit
    from inspector.store import StoreError, resolve_db_url, sqlite_path

    try:
        input_limit()  # a bad $CONTEXT_INSPECTOR_MAX_INPUT_MB is one line before anything is read
    except InputError as exc:
        raise UserError(str(exc)) from None
    databases: list = []
    if discover:
        if paths:
            raise UserError("give PATHS or --discover, not both")
        paths, databases = _discovered(home)
        if not paths and not databases:
            click.echo("no agent sessions found", err=True)
            sys.exit(1)
    elif not paths:
        raise UserError("give the PATHS to import (or --discover)")
    elif home is not None:
        raise UserError("--home applies to --discover")
    url = resolve_db_url(db)
    new_file = sqlite_path(url) if url is not None else None
    if new_file is not None and new_file.exists():
        new_file = None  # an existing database is never removed
    store = open_store(db, read_only=False, create=True)
    progress = _progress_bar()
    report = None
    try:
        report = import_paths(list(paths), store, fmt=fmt, progress=progress, jobs=jobs or default_jobs())
        for database in databases:
            _copy_database(database, store, report)
    except (ImportError_, OSError, StoreError) as exc:
        raise fail(exc) from None
    finally:
        progress.close()
        flush_notes(store)
        store.close()
        if new_file is not None and (report is None or not report.threads):
            _remove_new_database(new_file)  # a failed import leaves no empty database behind
    for line in report.skipped:
        click.echo(f"warning: {safe_line(line)}", err=True)
    for line in [*report.folder_errors, *report.errors, *report.thread_errors]:
        click.echo(f"error: {safe_line(line)}", err=True)
    for line in report.coverage_lines():
        click.echo(safe_line(line))
    click.echo(safe_line(report.summary_line()))
    if not report.threads:
        sys.exit(1)


def _remove_new_database(path) -> None:
    """Remove a SQLite file this command created, with its journal files."""
    for candidate in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"),
                      path.with_name(path.name + "-journal")):
        with contextlib.suppress(OSError):
            candidate.unlink(missing_ok=True)


class _progress_bar:
    """One progress bar on stderr for the whole import run when it is large, silent otherwise."""

    def __init__(self) -> None:
        self._bar = None

    def __call__(self, path: str, done: int, total: int) -> None:
        if total < 5_000_000 or not sys.stderr.isatty():
            return
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


def _discovered(home: str | None):
    """(the transcript files, the agents' own databases) under each agent's location, said per agent."""
    from pathlib import Path

    from inspector.importers.discover import discover

    found = discover(Path(home).expanduser() if home else Path.home())
    files, databases = [], []
    for agent in found:
        where = ", ".join(agent.patterns)
        click.echo(safe_line(f"{agent.agent}: {len(agent.files)} file(s)"
                             + (f", {len(agent.databases)} database(s)" if agent.databases else "")
                             + f" ({where})"), err=True)
        files.extend(str(f) for f in agent.files)
        databases.extend(agent.databases)
    return tuple(files), databases


def _copy_database(path, store, report) -> None:
    """Every thread of an agent's own database (opencode.db, read in place) saved into `store`."""
    from inspector.store import Store, StoreError

    try:
        source = Store.open(str(path))
    except StoreError as exc:
        report.errors.append(f"{path}: {exc}")
        return
    try:
        for thread_id in source.thread_ids():
            try:
                thread = source.load_thread(thread_id)
            except StoreError as exc:
                report.errors.append(f"{path}: {exc}")
                continue
            warnings = thread.meta.get("load_warnings", ()) if isinstance(thread.meta, dict) else ()
            report.skipped.extend(warnings)
            if warnings:
                thread = replace(thread, meta={k: v for k, v in thread.meta.items() if k != "load_warnings"})
            store.save_thread(thread)
            report.threads.append(thread.id)
        report.files.append(str(path))
    finally:
        source.close()
