"""The last resort of an app ended by a signal: if it has not exited `grace` seconds after SIGTERM or
SIGHUP, its temporary files are removed and the process exits 128 + the signal anyway.

The app's own exit (the terminal given back, the snapshot copies removed) is what runs; this only
catches a shutdown that cannot finish, seen twice in the suite's runs after a SIGHUP with the
terminal gone. A signal must never leave the process running, nor its temporary files behind."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable

EXIT_GRACE = 10.0  # seconds: the app's own exit takes well under one


def arm_exit_watchdog(signum: int, cleanup: Callable[[], None], *, grace: float = EXIT_GRACE) -> threading.Timer:
    """Start a daemon timer that runs `cleanup` (errors ignored) and `os._exit(128 + signum)`; it dies
    with the process when the app exits first."""

    def force() -> None:
        with contextlib.suppress(Exception):  # the exit must happen whatever the cleanup meets
            cleanup()
        os._exit(128 + signum)

    timer = threading.Timer(grace, force)
    timer.daemon = True
    timer.start()
    return timer
