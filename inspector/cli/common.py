"""What every command shares: the one-line user error, stderr notes, the store opened, `--db`, `--set`."""

from __future__ import annotations

from typing import Any

import click

from inspector.config import ConfigError, parse_set
from inspector.terminal_safety import safe_line


class UserError(click.ClickException):
    """A user's mistake: one line on stderr, exit status 2, no traceback."""

    exit_code = 2

    def show(self, file=None) -> None:  # noqa: D102
        click.echo(f"context-inspector: error: {safe_line(self.format_message())}", err=True)


def say(prefix: str, line: object) -> None:
    """One line on stderr, terminal-safe (untrusted text never reaches the terminal raw)."""
    click.echo(f"{prefix}{safe_line(line)}", err=True)


def flush_notes(store: Any) -> None:
    """How the database was opened (WAL-mode SQLite) and what was repaired while reading it."""
    note = getattr(store, "access_note", None)
    if note:
        say("note: ", note)
    for line in getattr(store, "warnings", ()):
        say("warning: ", line)
    if hasattr(store, "warnings"):
        store.warnings.clear()


def fail(exc: Exception) -> UserError:
    text = " ".join(str(exc).split()) or exc.__class__.__name__
    return UserError(text)


def open_store(db: str | None, *, read_only: bool = True, create: bool = False):
    import inspector.importers  # noqa: F401 - registers the readers of agents' own databases (opencode.db)
    from inspector.store import Store, StoreError, resolve_db_url

    try:
        url = resolve_db_url(db)
        if url is None:
            from inspector.demo import ensure_demo_db

            url = ensure_demo_db()
        return Store.open(url, read_only=read_only, create=create)
    except (StoreError, OSError) as exc:
        raise fail(exc) from None


def parse_overrides(items: tuple[str, ...]) -> dict[str, Any]:
    try:
        return parse_set(items)
    except ConfigError as exc:
        raise fail(exc) from None


db_option = click.option("--db", metavar="URL", help="SQLAlchemy URL or file path (env CONTEXT_INSPECTOR_DB).")
set_option = click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
                          help="Override a config key (repeatable).")


def compactions_option(fn):
    """`--compactions recorded|decide`, defaulting to the thread's (recorded where it recorded any)."""
    from inspector.config import COMPACTION_MODES

    return click.option("--compactions", type=click.Choice(COMPACTION_MODES),
                        help="recorded: follow the thread's compactions; decide: the profile decides every one "
                             "(default: recorded where the thread recorded any).")(fn)


def load_threads(db: str | None, thread_id: str | None, every: bool) -> list:
    """The one thread asked for, or every thread of the database (`--all`)."""
    from inspector.store import StoreError

    if (thread_id is None) == (not every):
        raise UserError("give --thread ID or --all")
    store = open_store(db)
    try:
        ids = [thread_id] if thread_id is not None else [i.id for i in store.list_threads()]
        return [store.load_thread(i) for i in ids]
    except (StoreError, KeyError) as exc:
        raise fail(exc) from None
    finally:
        flush_notes(store)
        store.close()


def replay_for(thread, profile: str | None, overrides: dict[str, Any], compactions: str | None):
    """The replay `loss` and `probe` read: in `compactions` mode, else the thread's default mode
    (recorded where it recorded compactions), as `simulate` replays it."""
    from inspector.service import default_compactions, load_config, run_replay

    config = load_config(profile, overrides, thread=thread)
    mode = compactions or default_compactions(thread)
    result = run_replay(thread, config, compactions=mode)
    for notice in result.notices:
        say("warning: ", notice)
    return config, result, mode


def print_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    click.echo("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    for r in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
