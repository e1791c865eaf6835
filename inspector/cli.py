"""The `context-inspector` command: the TUI by default, headless commands beside it."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from typing import Any

import click

from inspector.config import PROFILES, ConfigError, parse_set

FORMATS = ["auto", "native", "claude-code", "codex", "openai", "anthropic", "swe-agent"]


class UserError(click.ClickException):
    """A user's mistake: one line on stderr, exit status 2, no traceback."""

    exit_code = 2

    def show(self, file=None) -> None:  # noqa: D102
        click.echo(f"context-inspector: error: {self.format_message()}", err=True)


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


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@db_option
@click.option("--thread", "thread_id", metavar="ID", help="Open this thread.")
@click.option("--profile", type=click.Choice(PROFILES), help="Pipeline to replay.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a config key.")
@click.version_option(package_name="context-inspector")
@click.pass_context
def main(ctx: click.Context, db: str | None, thread_id: str | None, profile: str | None, sets: tuple[str, ...]) -> None:
    """Inspect an LLM app's context window, request by request.

    With no command, opens the full-screen inspector (on the demo database when no
    database is configured).
    """
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
    app.run()
    if getattr(app, "startup_error", None):
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
        store.close()
    if as_json:
        click.echo(json.dumps([i.to_json() for i in infos], indent=2, ensure_ascii=False))
        return
    from inspector.textsafe import safe_line

    rows = [(i.id, i.source, str(i.messages), str(i.requests), str(i.summaries), i.title) for i in infos]
    _print_table(("ID", "SOURCE", "MSGS", "REQS", "SUMS", "TITLE"), [tuple(safe_line(c) for c in r) for r in rows])


@main.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@db_option
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True)
def import_command(paths: tuple[str, ...], db: str | None, fmt: str) -> None:
    """Import transcripts into a database (created when missing)."""
    from inspector.importers import ImportError_, import_paths
    from inspector.store import StoreError

    store = _open_store(db, read_only=False, create=True)
    progress = _progress_bar()
    try:
        report = import_paths(list(paths), store, fmt=fmt, progress=progress)
    except (ImportError_, OSError, StoreError) as exc:
        raise _fail(exc) from None
    finally:
        progress.close()
        store.close()
    from inspector.textsafe import safe_line

    for line in report.skipped:
        click.echo(f"warning: {safe_line(line)}", err=True)
    for line in getattr(report, "errors", []):
        click.echo(f"error: {safe_line(line)}", err=True)
    for line in report.coverage_lines():
        click.echo(safe_line(line))
    click.echo(safe_line(report.summary_line()))
    if not report.threads:
        sys.exit(1)


@main.command("export")
@click.argument("thread_ids", nargs=-1)
@db_option
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="File to write (default stdout).")
def export_command(thread_ids: tuple[str, ...], db: str | None, output: str | None) -> None:
    """Export threads in the native format (all threads when none are named)."""
    from inspector.importers.native import export_native
    from inspector.store import StoreError

    store = _open_store(db)
    try:
        ids = list(thread_ids) or [i.id for i in store.list_threads()]
        threads = [store.load_thread(i) for i in ids]
    except (StoreError, KeyError) as exc:
        raise _fail(exc) from None
    finally:
        store.close()
    text = json.dumps(export_native(threads), indent=2, ensure_ascii=False)
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    else:
        click.echo(text)


@main.command("simulate")
@click.option("--thread", "thread_id", required=True, metavar="ID")
@db_option
@click.option("--profile", type=click.Choice(PROFILES))
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a config key (repeatable).")
@click.option("--request", "request_index", type=int, metavar="N", help="Only request N (0-based).")
@click.option("--timeline", is_flag=True, help="Per-request summary without blocks.")
@click.option("--json", "as_json", is_flag=True, help="Print the simulation JSON.")
def simulate_command(thread_id: str, db: str | None, profile: str | None, sets: tuple[str, ...],
                     request_index: int | None, timeline: bool, as_json: bool) -> None:
    """Replay a thread's context pipeline and print the audit."""
    from inspector.service import load_config, run_replay
    from inspector.store import StoreError

    overrides = _overrides(sets)
    store = _open_store(db)
    try:
        thread = store.load_thread(thread_id)
    except (StoreError, KeyError) as exc:
        raise _fail(exc) from None
    finally:
        store.close()
    try:
        config = load_config(profile, overrides, thread=thread)
        result = run_replay(thread, config, baseline=not overrides)
        for notice in result.notices:
            click.echo(f"warning: {notice}", err=True)
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
        click.echo(json.dumps(sim.to_json(timeline=timeline, request=request_index), indent=2, ensure_ascii=False))
        return
    from inspector.report import render_simulation

    click.echo(render_simulation(sim, thread, timeline=timeline, request=request_index))


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
