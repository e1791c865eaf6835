"""`export`: threads in the native format, to stdout or a checked file."""

from __future__ import annotations

import click

from inspector.cli.common import UserError, db_option, fail, flush_notes, open_store
from inspector.cli.output import OutputRefused, check_output, json_dumps, write_output
from inspector.cli.root import main


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

    store = open_store(db)
    target = None
    try:
        if output:
            target = check_output(output, store, force)
        ids = list(thread_ids) or [i.id for i in store.list_threads()]
        threads = [store.load_thread(i) for i in ids]
    except OutputRefused as exc:
        raise UserError(str(exc)) from None
    except (StoreError, KeyError) as exc:
        raise fail(exc) from None
    finally:
        flush_notes(store)
        store.close()
    text = json_dumps(export_native(threads))
    if target is not None:
        try:
            write_output(target, text + "\n")
        except OSError as exc:
            raise UserError(f"{output}: cannot write ({exc.strerror or exc}); nothing written") from None
    else:
        click.echo(text)
