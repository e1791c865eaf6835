"""`sweep`: every combination of config values replayed, one row per config."""

from __future__ import annotations

import contextlib
import sys

import click

from inspector.cli.common import UserError, db_option, fail, open_store, parse_overrides, print_table, say
from inspector.cli.output import json_text
from inspector.cli.root import main
from inspector.config import PROFILES, ConfigError
from inspector.terminal_safety import safe_line


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
    overrides = parse_overrides(sets)
    try:
        combos = sweep.combinations([sweep.parse_key(k) for k in keys], limit)
    except ConfigError as exc:
        raise fail(exc) from None
    if len(combos) >= sweep.MANY_COMBINATIONS:
        say("note: ", f"{len(combos):,} combinations to replay, each a whole replay of "
                       f"{'every thread' if all_threads else 'the thread'}; a progress bar follows on a terminal")
    store = open_store(db)
    try:
        ids = [i.id for i in store.list_threads()] if all_threads else [thread_id]
        thread = None if all_threads else store.load_thread(thread_id)
        url = store.url
    except (StoreError, KeyError) as exc:
        raise fail(exc) from None
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
        raise fail(exc) from None
    for line in errors:
        click.echo(f"warning: {safe_line(line)}", err=True)
    if as_json:
        click.echo(json_text({"rows": [r.to_json() for r in rows]}))
        return
    names = tuple(combos[0]) if combos else ()
    header = (*names, *sweep.HEADER, "")
    print_table(header, [tuple(safe_line(c) for c in r) for r in sweep.iter_table(rows)])
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
