"""`simulate`: replay a thread and print the audit (text, timeline or JSON)."""

from __future__ import annotations

from dataclasses import replace

import click

from inspector.cli.common import (
    UserError,
    compactions_option,
    db_option,
    fail,
    flush_notes,
    open_store,
    parse_overrides,
    say,
    set_option,
)
from inspector.cli.output import json_text
from inspector.cli.root import main
from inspector.cli.simulation_stream import BLOCK_MODES, rows, write_simulation
from inspector.config import PROFILES, ConfigError


@main.command("simulate")
@click.option("--thread", "thread_id", required=True, metavar="ID")
@db_option
@click.option("--profile", type=click.Choice(PROFILES), help="Pipeline (default: the thread's source's, else iris).")
@set_option
@compactions_option
@click.option("--request", "request_index", type=int, metavar="INDEX",
              help="Only the request with this index (from 0, as in the JSON; the TUI shows it as request INDEX+1).")
@click.option("--timeline", is_flag=True, help="Per-request summary without blocks.")
@click.option("--json", "as_json", is_flag=True, help="Print the simulation JSON (written request by request).")
@click.option("--blocks", type=click.Choice(BLOCK_MODES), default=None,
              help="With --json: every request's blocks (all, the default), only those that changed since the "
                   "previous request (changed; README says how to rebuild the rest), or none.")
def simulate_command(thread_id: str, db: str | None, profile: str | None, sets: tuple[str, ...],
                     compactions: str | None, request_index: int | None, timeline: bool, as_json: bool,
                     blocks: str | None) -> None:
    """Replay a thread's context pipeline and print the audit."""
    from inspector.compare.between_replays import is_manual_summary
    from inspector.service import default_compactions, load_config, reproduction, reproduction_line, run_replay
    from inspector.store import StoreError

    if blocks is not None and (not as_json or timeline):
        raise UserError("--blocks applies to --json without --timeline (the timeline lists no blocks)")
    overrides = parse_overrides(sets)
    store = open_store(db)
    try:
        thread = store.load_thread(thread_id)
        infos, kids = _subagent_threads(store, thread_id)
    except (StoreError, KeyError) as exc:
        raise fail(exc) from None
    finally:
        flush_notes(store)
        store.close()
    for line in thread.meta.get("load_warnings", ()) if isinstance(thread.meta, dict) else ():
        say("warning: ", line)
    try:
        config = load_config(profile, overrides, thread=thread)
        mode = compactions or default_compactions(thread)
        result = run_replay(thread, config, compactions=mode)
        result.costs  # noqa: B018 - the prompt cache, whose notice (not modelled) is said with the others
        subagents = _subagent_figures(infos, thread_id, kids)
        for notice in result.notices:
            say("warning: ", notice)
        if request_index is not None and not 0 <= request_index < len(result):
            raise UserError(
                f"--request {request_index} is out of range: thread {thread_id} has {len(result)} requests"
            )
        if as_json and not timeline:
            # Request by request: one request's blocks in memory at a time, whatever the output's size.
            sim = replace(result.simulation(blocks=False), subagents=subagents and subagents.to_json())
            indices = range(len(result)) if request_index is None else (request_index,)
            audits = result.audits(indices) if blocks != "none" else (sim.requests[i] for i in indices)
            write_simulation(sim, rows(sim, audits, blocks or "all"), _stdout_writer())
            return
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
        sim = replace(sim, subagents=subagents and subagents.to_json())
    except (ConfigError, ValueError, RuntimeError) as exc:
        raise fail(exc) from None
    if as_json:
        click.echo(json_text(sim.to_json(timeline=timeline, request=request_index)))
        return
    from inspector.cli.simulate_report import render_simulation

    try:
        # how the profile itself (its baseline config, no --set) reproduces the recorded compactions
        status = reproduction_line(config.profile, reproduction(thread, load_config(config.profile, {}, thread=thread)),
                                   manual=sum(map(is_manual_summary, thread.summaries)))
    except (ConfigError, ValueError, RuntimeError) as exc:
        raise fail(exc) from None
    click.echo(render_simulation(sim, thread, timeline=timeline, request=request_index, compactions=mode,
                                 status=status, calibration=result.calibration, subagents=subagents))


def _subagent_threads(store, thread_id: str) -> tuple[list, dict]:
    """The store's thread list and the thread's sub-agents loaded (an error in place of one that fails)."""
    from inspector.store import StoreError
    from inspector.thread_tree import descendants

    infos = store.list_threads()
    kids: dict = {}
    for info in descendants(infos, thread_id):
        try:
            kids[info.id] = store.load_thread(info.id)
        except (StoreError, KeyError) as exc:
            kids[info.id] = exc
    return infos, kids


def _subagent_figures(infos: list, thread_id: str, kids: dict):
    """`subagents.subagent_totals` over the sub-agents loaded before the store closed (None: none)."""
    from inspector.subagents import subagent_totals

    def load(tid: str):
        got = kids[tid]
        if isinstance(got, Exception):
            raise KeyError(tid)
        return got

    return subagent_totals(infos, thread_id, load)


def _stdout_writer():
    """Writes pieces of the JSON to standard output as they come (no ANSI stripping: JSON escapes ESC)."""
    import sys

    return sys.stdout.write
