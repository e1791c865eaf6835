"""The `context-inspector` group: the TUI by default, output errors and signals made one line."""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import sys
from typing import Any

import click

from inspector.cli.common import UserError, db_option, fail, parse_overrides
from inspector.config import PROFILES, ConfigError


def _end_on_signals(ctx: click.Context) -> None:
    """SIGTERM and SIGHUP end a command as an error would: its `finally` blocks run, so the store is
    closed and its snapshot copy in $TMPDIR removed (the TUI installs its own handlers once it runs).
    The handlers before are back when the command ends (the CLI also runs inside other programs)."""
    import signal

    def end(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):  # not the main thread
            previous = signal.signal(signum, end)
            ctx.call_on_close(functools.partial(signal.signal, signum, previous))


OUTPUT_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EPIPE)


def _exit_after_signal(signum: int) -> None:
    """Exit 128 + `signum` once the TUI has ended on a signal. After a SIGHUP the terminal may be gone
    (its window closed): Python's own flush of standard output and error at exit would then fail and
    make the status 120, so what cannot be written now goes to /dev/null instead."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            with contextlib.suppress(OSError, ValueError):
                sink = os.open(os.devnull, os.O_WRONLY)
                os.dup2(sink, stream.fileno())
                os.close(sink)
    sys.exit(128 + signum)


class InspectorGroup(click.Group):
    """The commands, with what no command can catch itself made one line: standard output that cannot
    be written (a full disk, a closed pipe) and memory running out. A first argument that is not a
    command is a transcript file or a session folder to open (`context-inspector PATH`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            ctx.meta["open_path"] = args[0]
            args = args[1:]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OSError as exc:
            if exc.errno not in OUTPUT_ERRNOS or exc.filename is not None:
                raise
            _quiet_stdout()
            if exc.errno == errno.EPIPE:  # the reader went away (`| head`): nothing to say
                raise SystemExit(1) from None
            raise UserError(f"cannot write to standard output ({exc.strerror or exc}); the output is incomplete") \
                from None
        except MemoryError:
            raise UserError("out of memory: the input needs more memory than this process may use (a smaller "
                            "file, fewer threads, or a higher memory limit)") from None


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's last flush of what could not be written
    raises nothing more."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


@click.group(cls=InspectorGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@db_option
@click.option("--thread", "thread_id", metavar="ID", help="Open this thread.")
@click.option("--profile", type=click.Choice(PROFILES), help="Pipeline to replay (default: the thread's source's).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a config key.")
@click.version_option(package_name="context-inspector")
@click.pass_context
def main(ctx: click.Context, db: str | None, thread_id: str | None, profile: str | None, sets: tuple[str, ...]) -> None:
    """Inspect an LLM app's context window, request by request.

    With no command, opens the full-screen inspector (on the demo database when no
    database is configured).
    """
    _end_on_signals(ctx)
    if ctx.invoked_subcommand is not None:
        return
    overrides = parse_overrides(sets)
    if ctx.meta.get("open_path") is not None:
        if db is not None:
            raise UserError("give a PATH to open or --db, not both")
        _open_path(ctx.meta["open_path"], thread_id, profile, overrides)
        return
    from inspector.store import StoreError, resolve_db_url

    try:
        url = resolve_db_url(db)
        if url is None:
            from inspector.demo import ensure_demo_db

            url = ensure_demo_db()
    except (StoreError, OSError) as exc:
        raise fail(exc) from None
    from inspector.app import create_app

    try:
        app = create_app(db_url=url, thread_id=thread_id, profile=profile, overrides=overrides)
    except (StoreError, ConfigError) as exc:
        raise fail(exc) from None
    try:
        app.run()
    finally:
        app.sources.close()  # the snapshot copies, whatever ended the app
    if app.signalled is not None:
        _exit_after_signal(app.signalled)
    if app.startup_error:
        raise UserError(app.startup_error)


def _open_path(path: str, thread_id: str | None, profile: str | None, overrides: dict[str, Any]) -> None:
    """The TUI on a transcript file or session folder, followed as the agent writes it."""
    from inspector.app import create_app
    from inspector.cli.open_path import OpenError, SessionFollower, main_thread

    try:
        follower = SessionFollower(path)
    except OpenError as exc:
        raise UserError(str(exc)) from None
    try:
        try:
            app = create_app(db_url=follower.url, thread_id=thread_id or main_thread(follower.threads),
                             profile=profile, overrides=overrides, live=True)
        except (ConfigError, ValueError) as exc:
            raise fail(exc) from None
        follower.interval = app.settings.poll_interval  # the file is read as often as the store is
        follower.start()
        try:
            app.run()
        finally:
            app.sources.close()
    finally:
        follower.close()  # the private store, whatever ended the app
    if app.signalled is not None:
        _exit_after_signal(app.signalled)
    if app.startup_error:
        raise UserError(app.startup_error)
