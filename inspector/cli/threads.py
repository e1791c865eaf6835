"""`threads`: the threads of a database."""

from __future__ import annotations

import click

from inspector.cli.common import db_option, fail, flush_notes, open_store, print_table
from inspector.cli.output import json_text
from inspector.cli.root import main
from inspector.terminal_safety import safe_line


@main.command("threads")
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def threads_command(db: str | None, as_json: bool) -> None:
    """List the threads of a database."""
    from inspector.store import StoreError

    store = open_store(db)
    try:
        infos = store.list_threads()
    except StoreError as exc:
        raise fail(exc) from None
    finally:
        flush_notes(store)
        store.close()
    if as_json:
        click.echo(json_text([i.to_json() for i in infos]))
        return
    rows = [(i.id, i.source, str(i.messages), str(i.requests) + ("!" if i.incomplete else ""),
             str(i.summaries) + (f" ({i.manual_summaries} manual (/compact))" if i.manual_summaries else ""),
             i.title) for i in infos]
    # COMP: the compactions (recorded summaries) of the thread, as the TUI's thread list calls them; those
    # the user asked for (Claude Code's /compact) are counted apart
    print_table(("ID", "SOURCE", "MSGS", "REQS", "COMP", "TITLE"), [tuple(safe_line(c) for c in r) for r in rows])
    if any(i.incomplete for i in infos):
        click.echo("! incomplete import: the source file holds model calls, tool results or compactions this "
                   "thread lacks (the import warnings name them)")
