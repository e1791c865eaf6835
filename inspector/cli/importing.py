"""`import`: transcripts into a database, with a progress bar on a large run."""

from __future__ import annotations

import contextlib
import sys

import click

from inspector.cli.common import UserError, db_option, fail, flush_notes, open_store
from inspector.cli.root import main
from inspector.importers import FORMAT_NAMES
from inspector.terminal_safety import safe_line


@main.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@db_option
@click.option("--format", "fmt", type=click.Choice(FORMAT_NAMES), default="auto", show_default=True)
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
    store = open_store(db, read_only=False, create=True)
    progress = _progress_bar()
    report = None
    try:
        report = import_paths(list(paths), store, fmt=fmt, progress=progress)
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
