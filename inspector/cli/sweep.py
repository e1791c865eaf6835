"""`sweep`: every combination of config values replayed, one row per config; `--all` runs the fleet
sweep (`inspector.fleet`) on a process pool or a Dask cluster, resumable with `--out`."""

from __future__ import annotations

import csv
import io
from typing import Any

import click

from inspector.cli.common import UserError, db_option, fail, open_store, parse_overrides, print_table, say, set_option
from inspector.cli.output import json_text
from inspector.cli.progress import ProgressOnStderr
from inspector.cli.root import main
from inspector.config import PROFILES, ConfigError
from inspector.terminal_safety import safe_line, safe_text

FLEET_ONLY = ("--executor", "--scheduler", "--out", "--group-by", "--batch-threads")


@main.command("sweep")
@click.option("--thread", "thread_id", metavar="ID", help="The thread to sweep.")
@click.option("--all", "all_threads", is_flag=True, help="Every thread of the database (added up per config).")
@db_option
@click.option("--profile", type=click.Choice(PROFILES))
@set_option
@click.option("--key", "keys", multiple=True, required=True, metavar="K=V1,V2,...",
              help="A key and the values to try (repeatable: every combination is replayed).")
@click.option("--compactions", type=click.Choice(["recorded", "decide"]), default="decide", show_default=True,
              help="Follow the recorded compactions, or let each config decide them.")
@click.option("--jobs", type=click.IntRange(1, 64), default=2, show_default=True,
              help="Worker processes: the pool's or the local Dask cluster's (--all), the thread's values (--thread).")
@click.option("--executor", type=click.Choice(["local", "dask"]), default=None,
              help="--all: where the batches run: local (a process pool, the default) or dask (a local Dask "
                   "cluster, or the one at --scheduler; needs the dask extra).")
@click.option("--scheduler", metavar="ADDRESS", help="--all: an existing Dask cluster's scheduler (tcp://HOST:8786).")
@click.option("--out", metavar="FILE|URL",
              help="--all: keep one row per (thread, config) in this results store (SQLite file or SQLAlchemy "
                   "URL) as each batch finishes; a second run skips the pairs already there.")
@click.option("--group-by", "group_by", type=click.Choice(["model", "day", "source"]),
              help="--all: one row per config and per the threads' model, day or source.")
@click.option("--batch-threads", "batch_threads", type=click.IntRange(1, 10_000), default=None,
              help="--all: threads per task (default: about four tasks per worker, at most 50 threads each).")
@click.option("--max-combinations", "limit", type=click.IntRange(min=1), default=1_000, show_default=True,
              help="Refuse to replay more combinations than this (each is a whole replay).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True,
              help="The rows as a text table, CSV (for a spreadsheet) or JSON.")
@click.option("--json", "as_json", is_flag=True, help="Print {\"rows\": [...]} (same as --format json).")
def sweep_command(thread_id: str | None, all_threads: bool, db: str | None, profile: str | None,
                  sets: tuple[str, ...], keys: tuple[str, ...], compactions: str, jobs: int,
                  executor: str | None, scheduler: str | None, out: str | None, group_by: str | None,
                  batch_threads: int | None, limit: int, fmt: str, as_json: bool) -> None:
    """Replay every combination of config values; one row per config (cost, cache, compactions)."""
    from inspector import sweep
    from inspector.service import load_config
    from inspector.store import StoreError

    if bool(thread_id) == all_threads:
        raise UserError("give --thread ID or --all")
    fleet_options = dict(zip(FLEET_ONLY, (executor, scheduler, out, group_by, batch_threads), strict=True))
    given = [name for name, value in fleet_options.items() if value is not None]
    if thread_id and given:
        raise UserError(f"{', '.join(given)} need{'s' if len(given) == 1 else ''} --all")
    if scheduler is not None and executor == "local":
        raise UserError("--scheduler is a Dask scheduler's address: it needs --executor dask")
    if as_json:
        fmt = "json"
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
        ids = store.thread_ids() if all_threads else [thread_id]
        thread = None if all_threads else store.load_thread(thread_id)
        url = store.url
    except (StoreError, KeyError) as exc:
        raise fail(exc) from None
    finally:
        store.close()
    if thread is None:
        _sweep_fleet(url, ids, profile, overrides, combos, compactions, jobs=jobs,
                     executor="dask" if scheduler and executor is None else (executor or "local"),
                     scheduler=scheduler, out=out, group_by=group_by, batch_threads=batch_threads, fmt=fmt)
        return
    try:
        base = load_config(profile, overrides, thread=thread)
        for key in sweep.unread_keys(base.profile, combos):
            click.echo(f"warning: the {base.profile} profile does not read {key}: its values change nothing",
                       err=True)
        bar = ProgressOnStderr(len(combos), unit="values", quiet=len(combos) < 2)
        bar.start_at(0)
        try:
            rows = sweep.sweep_thread(thread, base, combos, compactions=compactions, on_row=bar.step, jobs=jobs,
                                      own_process=True)
        finally:
            bar.close()
    except (ConfigError, ValueError, RuntimeError) as exc:
        raise fail(exc) from None
    _print_rows([(None, r) for r in rows], combos, fmt, {"rows": [r.to_json() for r in rows]})


def _sweep_fleet(url: str, ids: list[str], profile: str | None, overrides: dict[str, Any], combos: list,
                 compactions: str, *, jobs: int, executor: str, scheduler: str | None, out: str | None,
                 group_by: str | None, batch_threads: int | None, fmt: str) -> None:
    from inspector.fleet import DaskUnavailable, FleetSpec, make_executor, run_fleet
    from inspector.fleet.results import ResultsStore
    from inspector.service import read_config_file
    from inspector.store import StoreError

    results = None
    try:
        spec = FleetSpec(url, profile, overrides, combos, compactions, *read_config_file())
        if out is not None:
            results = ResultsStore.open(out, source_url=url)
        runner = make_executor(executor, jobs=jobs, scheduler=scheduler)
    except (StoreError, DaskUnavailable, ConfigError, ValueError, RuntimeError, OSError) as exc:
        if results is not None:
            results.close()
        raise fail(exc) from None
    bar = ProgressOnStderr(len(ids))
    try:
        if runner.dashboard:
            say("note: ", f"Dask dashboard: {runner.dashboard}")
        first = [True]

        def progress(done: int, total: int) -> None:
            if first[0]:
                first[0] = False
                bar.start_at(done)
            else:
                bar.update(done)

        result = run_fleet(spec, ids, runner, results=results, group_by=group_by, progress=progress,
                           batch_threads=batch_threads)
    except (StoreError, ConfigError, ValueError, RuntimeError) as exc:
        raise fail(exc) from None
    finally:
        bar.close()
        runner.close()
        if results is not None:
            results.close()
    if result.skipped:
        say("note: ", f"{result.skipped:,} (thread, config) pairs already in {out}: skipped")
    for line in result.errors:
        say("warning: ", line)
    payload = {"rows": [_with_group(group_by, g, r.to_json()) for g, r in result.rows],
               "executor": result.executor, "threads": result.threads, "skipped": result.skipped}
    _print_rows(result.rows, combos, fmt, payload, group_by=group_by)


def _with_group(group_by: str | None, group: str | None, row: dict[str, Any]) -> dict[str, Any]:
    return row if group_by is None else {"group": {group_by: group}, **row}


CSV_COLUMNS = ("threads", "compactions", "back_to_back", "failures", "prompt_tokens", "cache_read_share",
               "cache_breaks", "cost", "summarization_cost", "unpriced_threads", "facts_lost", "baseline")


def _print_rows(rows: list, combos: list, fmt: str, payload: dict[str, Any], *, group_by: str | None = None) -> None:
    from inspector import sweep

    if fmt == "json":
        click.echo(json_text(payload))
        return
    names = tuple(combos[0]) if combos else ()
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow([*([group_by] if group_by else []), *names, *CSV_COLUMNS])
        for group, row in rows:
            data = row.to_json() | {"threads": row.threads, "baseline": row.baseline}
            writer.writerow([*([group] if group_by else []), *(row.config[n] for n in names),
                             *("" if data[c] is None else data[c] for c in CSV_COLUMNS)])
        click.echo(safe_text(buffer.getvalue()), nl=False)  # a model's or a source's name is untrusted
        return
    plain = [r for _, r in rows]
    header = (*([group_by.upper()] if group_by else []), *names, *sweep.HEADER, "")
    cells = [((safe_line(g),) if group_by else ()) + tuple(safe_line(c) for c in t)
             for (g, _), t in zip(rows, sweep.iter_table(plain), strict=True)]
    print_table(header, cells)
    if any(r.baseline for r in plain):
        click.echo("* the thread's own config")
    for line in sweep.footnotes(plain):
        click.echo(line)
