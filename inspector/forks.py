"""What plain `os.fork()` children and their parent share: pickled messages framed on a pipe, the
words for how a child ended, and whether this platform forks at all.

Used by the sweep's children (`inspector.sweep._Children`) and the import's parse children
(`inspector.importers._parallel`): no pool, no queue, no lock shared with the parent, so nothing a
thread of the parent held at the fork is ever waited on in a child.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
from collections.abc import Iterator
from contextlib import contextmanager

HEADER = struct.Struct("<Q")
"""A message's frame: its pickle's length, then the pickle."""


def send(fd: int, message: tuple) -> None:
    """`message` pickled and written whole to `fd` (a child's pipe), waiting while the pipe is full."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def frames(buffer: bytearray) -> Iterator[tuple]:
    """The whole messages at the start of `buffer` (taken out of it)."""
    while len(buffer) >= HEADER.size:
        (size,) = HEADER.unpack_from(buffer)
        if len(buffer) < HEADER.size + size:
            return
        message = pickle.loads(buffer[HEADER.size:HEADER.size + size])
        del buffer[:HEADER.size + size]
        yield message


def death(status: int) -> str:
    """How a child ended, from its `os.waitpid` status ("was killed by SIGKILL")."""
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = f"signal {signum}"
        return f"was killed by {name}"
    if os.WIFEXITED(status) and os.WEXITSTATUS(status):
        return f"exited with status {os.WEXITSTATUS(status)}"
    return "ended before it sent its results"


def can_fork() -> bool:
    """Whether children are plain forks here (Linux); elsewhere the callers run in one process."""
    import multiprocessing

    return sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods()


def child_signals() -> None:
    """In a forked child: SIGINT ignored (the parent ends its children itself), SIGTERM and SIGHUP
    back to their default (the command's own handlers would run a Python exit in the copy)."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
    except ValueError:  # forked from another thread than the main one
        pass


ENDING = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
"""The signals that end a command: held while a child is forked and not yet known (`ending_held`)."""


@contextmanager
def ending_held() -> Iterator[frozenset]:
    """The signals that end the command (`ENDING`) held in this thread while the block forks a child and
    notes it, so that a Ctrl-C in between cannot leave a child its parent does not know of (the signal is
    taken when the block ends, the child known and killed on the way out). Yields the mask to restore in
    the child (`signal.pthread_sigmask(signal.SIG_SETMASK, mask)`, after `child_signals`). The CLI runs
    its forks in its one thread; where other threads could take the signal, Python still runs its handler
    in the main thread at once."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, ENDING)
    try:
        yield held
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
