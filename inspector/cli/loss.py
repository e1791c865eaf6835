"""`loss` and `probe`: what each compaction lost, and where a text is visible."""

from __future__ import annotations

import sys

import click

from inspector.cli.common import (
    UserError,
    compactions_option,
    db_option,
    fail,
    load_threads,
    parse_overrides,
    replay_for,
    say,
    set_option,
)
from inspector.cli.output import json_text
from inspector.cli.root import main
from inspector.config import PROFILES, ConfigError
from inspector.terminal_safety import safe_line


@main.command("loss")
@click.option("--thread", "thread_id", metavar="ID", help="The thread (or --all).")
@click.option("--all", "every", is_flag=True, help="Every thread of the database.")
@db_option
@click.option("--profile", type=click.Choice(PROFILES))
@set_option
@compactions_option
@click.option("--limit", type=click.IntRange(min=0), default=10, show_default=True,
              help="Lost facts listed per kind and compaction (0: all).")
@click.option("--json", "as_json", is_flag=True, help="Print the loss JSON.")
def loss_command(thread_id: str | None, every: bool, db: str | None, profile: str | None, sets: tuple[str, ...],
                 compactions: str | None, limit: int, as_json: bool) -> None:
    """What each compaction lost: the facts of its span and whether its summary kept them."""
    from inspector.cli.loss_report import loss_json, loss_lines
    from inspector.pipeline.survival import compaction_losses
    overrides = parse_overrides(sets)
    threads = load_threads(db, thread_id, every)
    losses: list = []
    profiles: dict[str, str] = {}
    modes: dict[str, str] = {}
    errors: list[dict[str, str]] = []
    for thread in threads:
        try:
            config, result, mode = replay_for(thread, profile, overrides, compactions)
            profiles[thread.id] = config.profile
            modes[thread.id] = mode
            losses.extend((thread.id, loss) for loss in compaction_losses(thread, result))
        except (ConfigError, ValueError, RuntimeError) as exc:
            if not every:
                raise fail(exc) from None
            message = " ".join(str(exc).split()) or exc.__class__.__name__
            errors.append({"thread_id": thread.id, "error": message})
            say("error: ", f"thread {thread.id}: {message}")
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
@set_option
@compactions_option
@click.option("--json", "as_json", is_flag=True, help="Print the probe JSON.")
def probe_command(texts: tuple[str, ...], thread_id: str, db: str | None, profile: str | None,
                  sets: tuple[str, ...], compactions: str | None, as_json: bool) -> None:
    """Where each TEXT is visible to the model, request by request, and where it stopped being."""
    from inspector.cli.loss_report import probe_json, probe_lines
    from inspector.pipeline.probe import probe

    overrides = parse_overrides(sets)
    empty = [t for t in texts if not t.strip()]
    if empty:
        raise UserError("a probe text is empty")
    (thread,) = load_threads(db, thread_id, False)
    try:
        config, result, mode = replay_for(thread, profile, overrides, compactions)
        results = probe(thread, result, list(texts))
    except (ConfigError, ValueError, RuntimeError) as exc:
        raise fail(exc) from None
    if as_json:
        click.echo(json_text(probe_json(results, thread_id=thread.id, profile=config.profile, compactions=mode)))
        return
    for line in probe_lines(results):
        click.echo(safe_line(line))
