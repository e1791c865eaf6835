"""An import's files parsed in forked children while this process writes them to the store, in order.

`import_paths(..., jobs=N)` (the CLI's `import --jobs`) forks N - 1 children (`ParseChildren`) when
there is enough to parse: each reads, decodes, detects, parses and repairs the files it is given and
builds their store rows (`bulk.thread_rows`), then sends them, pickled, through its own pipe. This
process takes the files in the serial order and saves each in its savepoint, exactly as one process
does; while the file whose turn it is is still in a child, it parses the next file no child has been
given itself (`_steal`), so N processes parse on N cores and none waits on another for long.

Plain `os.fork()` children, as the sweep's (`inspector.forks`): no pool, no queue or lock shared with
this process. A spawned interpreter would first import the importers and the store (0.37-0.39 s
measured here, more than the parse of the 24 MiB of real fixtures that it would share), and a
`multiprocessing` pool's worker once hung a sweep test for want of a lock a thread held at the fork.
A child writes its pipe from a thread it starts itself (`_Outbox`), so it parses on while this
process is busy. Each child is given file numbers through a pipe of its own (`DEPTH` ahead); the
files parsed ahead of this process's writes are at most `window` and `BUDGET` bytes (one larger file
alone): memory holds about that many files' rows besides the batch being written, whatever the
number of files.

Nothing differs from one process's import: the same threads, rows, records, warnings and error lines
in the same order, and the same progress calls (a file's are replayed when this process reaches it).
A file whose parse raised in its child (a result that could not be pickled, say) is parsed again
here at its turn; a child that dies (a signal, the kernel's out-of-memory killer) costs the file it
was parsing, one error line, and the files it had been given go to the others (or to this process).
On any way out (an error, Ctrl-C, SIGTERM/SIGHUP through the CLI's handlers) every child is killed by
its pid and reaped; there is no temporary file.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import queue
import selectors
import signal
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.forks import HEADER, child_signals, death, ending_held

Progress = Callable[[int, int], None]
"""progress(characters done, characters in the file) of one file."""

Work = Callable[[int, Progress | None], Any]
"""What a child does with file number `n`: the payload it sends back (pickled)."""

DEPTH = 2
"""File numbers a child is given ahead: the next one waits in its pipe while it parses one."""

PIPE_SIZE = 1 << 20
"""A child's result pipe (Linux's default most an unprivileged process may ask): fewer, larger reads."""

BUDGET = 256 << 20
"""Bytes of the files parsed ahead of this process's writes (their rows held until written), at most:
one file larger than this is parsed alone."""

_NUMBER = struct.Struct("<q")

HERE = ("here", None)
"""`take`'s answer for a file this process parses itself."""


@dataclass
class _Child:
    pid: int
    results: int  # read end of the child's result pipe
    numbers: int  # write end of the child's pipe of file numbers
    buffer: bytearray = field(default_factory=bytearray)  # what was read of the next messages
    body: bytearray | None = None  # a large message being read straight into its own buffer
    filled: int = 0  # of `body`
    given: deque[int] = field(default_factory=deque)  # numbers given, not yet sent back, in order


class ParseChildren:
    """`count` forked children running `work` on the numbers of `planned` (ascending), while this process
    `take`s every file's payload in its order and, while it waits, runs `work` itself on the next
    number no child was given when that leaves it no more to do than each child (`_worth_stealing`).
    See the module docstring."""

    def __init__(self, count: int, work: Work, planned: Sequence[int], *, progress: bool,
                 sizes: Mapping[int, int] | None = None, window: int | None = None,
                 budget: int = BUDGET) -> None:
        self.count = count
        self.work = work
        self.progress = progress
        self.window = window if window is not None else (DEPTH + 2) * (count + 1)
        self.sizes = sizes or {}
        self.budget = budget
        self.idle: Callable[[], None] | None = None
        """Called when `take` is about to wait for a child (the import commits its batch then)."""
        self._unwritten = sum(self.sizes.get(n, 0) for n in planned)  # bytes not yet taken by this process
        self._timing = [0.0, 0, 0.0, 0]  # this process's parse seconds, bytes; its write (and read) seconds, bytes
        self._left: tuple[float, int] | None = None  # (when `take` last returned, the size of that file)
        self._queue: deque[int] = deque(sorted(planned))  # not yet given to a child
        self._children: dict[int, _Child] = {}  # by the read end of its result pipe
        self._owner: dict[int, _Child] = {}  # number -> the child parsing it
        self._results: dict[int, tuple[str, Any]] = {}  # sent back, not yet taken
        self._progress: dict[int, list[tuple[int, int]]] = {}  # progress sent ahead of its file's turn
        self._dropped: set[int] = set()  # given out, then skipped by this process: whatever comes back is dropped

    def __enter__(self) -> ParseChildren:
        # What this process holds moved out of the collector's sight for the forks: a child's full
        # collections would otherwise walk (and so copy, page by page) every object it inherited.
        gc.freeze()
        try:
            for _ in range(self.count):
                self._fork()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        finally:
            gc.unfreeze()
        self._feed()
        return self

    def _fork(self) -> None:
        """One child forked and known (killed by `__exit__`), the signals that end the command held from
        the pipes' making to the child's registration (`forks.ending_held`)."""
        with ending_held() as held:
            numbers_read, numbers_write = os.pipe()
            results_read, results_write = os.pipe()
            with contextlib.suppress(ImportError, OSError, AttributeError):  # Linux: a larger pipe
                import fcntl

                fcntl.fcntl(results_write, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
            pid = os.fork()
            if pid == 0:  # the child: parse, pickle, os.write; never returns
                code = 1
                try:
                    for child in self._children.values():
                        os.close(child.results)
                        os.close(child.numbers)
                    os.close(numbers_write)
                    os.close(results_read)
                    child_signals()
                    signal.pthread_sigmask(signal.SIG_SETMASK, held)
                    self._serve(numbers_read, results_write)
                    code = 0
                finally:
                    os._exit(code)
            os.close(numbers_read)
            os.close(results_write)
            self._children[results_read] = _Child(pid, results_read, numbers_write)

    def _serve(self, numbers: int, out: int) -> None:
        """In a child: every file number given, its payload sent back (its progress before it). The
        pipe is written by a thread of the child's own (`_Outbox`), so the child parses its next file
        while this process, busy with a parse or a write of its own, has not read the last one yet."""
        outbox = _Outbox(out)
        try:
            while True:
                data = _read_exactly(numbers, _NUMBER.size)
                if data is None:
                    return
                (number,) = _NUMBER.unpack(data)
                report = ((lambda done, total, n=number: outbox.send(("progress", n, done, total)))
                          if self.progress else None)
                try:
                    outbox.send(("file", number, self.work(number, report)))
                except Exception as exc:  # noqa: BLE001 - this process parses it again and says what it finds
                    outbox.send(("failed", number, f"{type(exc).__name__}: {exc}"))
        finally:
            outbox.close()

    def take(self, number: int, progress: Progress | None) -> tuple[str, Any]:
        """File `number`'s answer: ("ok", the payload), `HERE` (this process parses it now: its turn came
        before a child's, its parse raised, or no child is left) or ("died", how its child ended).
        Its progress calls are made meanwhile (those sent ahead first). While a child parses it, this
        process parses the next file no child has been given (`_steal`) rather than wait."""
        self._written()
        self._forget_before(number)
        for done, total in self._progress.pop(number, ()):
            if progress is not None:
                progress(done, total)
        while number not in self._results:
            if number not in self._owner:  # no child has it: parsed here, now
                self._unqueue(number)
                self._feed()
                return self._leave(number, HERE)
            if self._queue and self._room() and self._worth_stealing() and not self._readable():
                self._steal()
            else:
                if self.idle is not None and not self._readable():
                    self.idle()  # this process would wait: what it could do meanwhile
                self._read(number, progress)
        answer = self._results.pop(number)
        self._feed()
        return self._leave(number, answer)

    def _leave(self, number: int, answer: tuple[str, Any]) -> tuple[str, Any]:
        """`take`'s answer, and the time it was given (what this process does until its next `take`
        is writing that file)."""
        size = self.sizes.get(number, 0)
        self._unwritten -= size
        self._left = (time.perf_counter(), size)
        return answer

    def _written(self) -> None:
        if self._left is not None:
            since, size = self._left
            self._timing[2] += time.perf_counter() - since
            self._timing[3] += size
            self._left = None

    def _worth_stealing(self) -> bool:
        """Whether this process parsing the next file leaves it no more to do than each child (so all
        finish together): that file and the writes of every file not written yet, against the
        children's share of what they have and what is left (by bytes; the writing against the
        parsing as measured here, 0.3 until both were)."""
        size = self.sizes.get(self._queue[0], 0)
        parse_time, parsed, write_time, written = self._timing
        ratio = (write_time / written) / (parse_time / parsed) if parsed and written and parse_time else 0.3
        theirs = sum(self.sizes.get(n, 0) for n in self._owner) + sum(self.sizes.get(n, 0) for n in self._queue)
        return size + self._unwritten * ratio <= (theirs - size) / max(1, len(self._children))

    def _steal(self) -> None:
        """The lowest file no child has been given, parsed here (its progress kept for its turn)."""
        number = self._queue.popleft()
        said = self._progress.setdefault(number, [])
        start = time.perf_counter()
        try:
            self._results[number] = ("ok", self.work(number, (lambda done, total: said.append((done, total)))
                                                     if self.progress else None))
        except Exception:  # noqa: BLE001 - parsed again at its turn, which says what it finds
            self._results[number] = HERE
        self._timing[0] += time.perf_counter() - start
        self._timing[1] += self.sizes.get(number, 0)

    def skip(self, number: int) -> None:
        """This process does not import file `number` (another file brought it): nothing of it is kept."""
        self._written()
        self._unwritten -= self.sizes.get(number, 0)
        self._forget_before(number)
        self._unqueue(number)
        self._progress.pop(number, None)
        if self._results.pop(number, None) is None and number in self._owner:
            self._dropped.add(number)
        self._feed()

    def _forget_before(self, number: int) -> None:
        while self._queue and self._queue[0] < number:  # passed by (cannot happen in order; kept safe)
            self._queue.popleft()

    def _unqueue(self, number: int) -> None:
        with contextlib.suppress(ValueError):
            self._queue.remove(number)

    def _room(self) -> bool:
        """Whether the next file may be parsed ahead: the files given out (or parsed here) and not yet
        taken, that one with them, at most `window` and at most `budget` bytes (any one file alone)."""
        ahead = [*self._owner, *self._results]
        if len(ahead) >= self.window:
            return False
        size = self.sizes.get
        return not ahead or sum(size(n, 0) for n in ahead) + size(self._queue[0], 0) <= self.budget

    def _readable(self) -> bool:
        """Whether a child's pipe holds something to read now."""
        with selectors.DefaultSelector() as selector:
            for fd in self._children:
                selector.register(fd, selectors.EVENT_READ)
            return bool(self._children) and bool(selector.select(0))

    def _feed(self) -> None:
        """File numbers given to the children with room, lowest first, within the window."""
        while self._queue and self._children and self._room():
            child = min(self._children.values(), key=lambda c: len(c.given))
            if len(child.given) >= DEPTH:
                return
            number = self._queue.popleft()
            child.given.append(number)
            self._owner[number] = child
            os.write(child.numbers, _NUMBER.pack(number))

    def _read(self, wanted: int, progress: Progress | None) -> None:
        """One wait for the children's pipes, and what it brings handled (`wanted`'s progress called)."""
        with selectors.DefaultSelector() as selector:
            for fd in self._children:
                selector.register(fd, selectors.EVENT_READ)
            events = selector.select()
        start = time.perf_counter()
        for key, _ in events:
            child = self._children[key.fd]
            for message in self._messages(child):
                self._handle(child, message, wanted, progress)
        self._timing[2] += time.perf_counter() - start  # reading and unpickling: this process's, as its writes

    def _messages(self, child: _Child) -> list[tuple]:
        """What one read of a readable pipe completes (the child reaped at the pipe's end). A message
        larger than the pipe is read into a buffer of its size (no growing buffer, no copy of it)."""
        if child.body is not None:
            read = os.readv(child.results, [memoryview(child.body)[child.filled:]])
            if not read:
                self._ended(child)
                return []
            child.filled += read
            if child.filled < len(child.body):
                return []
            body, child.body = child.body, None
            return [pickle.loads(body)]
        chunk = os.read(child.results, PIPE_SIZE)
        if not chunk:
            self._ended(child)
            return []
        buffer = child.buffer
        buffer += chunk
        out = []
        while len(buffer) >= HEADER.size:
            (size,) = HEADER.unpack_from(buffer)
            end = HEADER.size + size
            if len(buffer) >= end:
                with memoryview(buffer) as view:
                    out.append(pickle.loads(view[HEADER.size:end]))
                del buffer[:end]
            else:
                if size > PIPE_SIZE:
                    child.body = bytearray(size)
                    child.body[:len(buffer) - HEADER.size] = buffer[HEADER.size:]
                    child.filled = len(buffer) - HEADER.size
                    buffer.clear()
                break
        return out

    def _handle(self, child: _Child, message: tuple, wanted: int, progress: Progress | None) -> None:
        kind, number = message[0], message[1]
        if kind == "progress":
            if number in self._dropped:
                return
            if number == wanted:
                if progress is not None:
                    progress(message[2], message[3])
            else:
                self._progress.setdefault(number, []).append((message[2], message[3]))
            return
        given = child.given.popleft()
        assert given == number, (given, number)
        del self._owner[number]
        if number in self._dropped:
            self._dropped.discard(number)
        else:
            self._results[number] = ("ok", message[2]) if kind == "file" else HERE
        self._feed()

    def _ended(self, child: _Child) -> None:
        """A child's pipe closed before it was told to stop: it died. The file it was parsing is lost
        (an error line); the others it was given go back to the queue."""
        del self._children[child.results]
        os.close(child.results)
        os.close(child.numbers)
        _, status = os.waitpid(child.pid, 0)
        how = death(status)
        for position, number in enumerate(child.given):
            del self._owner[number]
            self._progress.pop(number, None)
            if number in self._dropped:
                self._dropped.discard(number)
            elif position == 0:
                self._results[number] = ("died", how)
            else:
                self._queue.append(number)
        self._queue = deque(sorted(self._queue))
        child.given.clear()
        self._feed()

    def finish(self) -> None:
        """Every child ended now (every file taken): their exits overlap this process's last commit, and
        `__exit__` only reaps them."""
        for child in self._children.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGKILL)

    def __exit__(self, *_exc: object) -> None:
        self.finish()
        for child in self._children.values():
            os.close(child.results)
            os.close(child.numbers)
        for child in self._children.values():
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child.pid, 0)
        self._children.clear()


class OneProcess:
    """`ParseChildren`'s face where every file is parsed here (one job, one file, too little to parse)."""

    def __enter__(self) -> OneProcess:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None

    def take(self, _number: int, _progress: Progress | None) -> tuple[str, Any]:
        return HERE

    def skip(self, _number: int) -> None:
        return None

    def finish(self) -> None:
        return None


class _Outbox:
    """A child's messages, pickled by the child's main thread and written to its pipe by a thread of its
    own, in order (the child's thread, made after the fork: no lock of the parent's is ever taken). A
    write that fails (this process is gone) ends the child."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._write, daemon=True)
        self.thread.start()

    def send(self, message: tuple) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        self.queue.put(HEADER.pack(len(data)) + data)

    def _write(self) -> None:
        try:
            while (data := self.queue.get()) is not None:
                view = memoryview(data)
                while view:
                    view = view[os.write(self.fd, view):]
        except OSError:
            os._exit(1)

    def close(self) -> None:
        """Every message written, then the thread ended."""
        self.queue.put(None)
        self.thread.join()


def _read_exactly(fd: int, size: int) -> bytes | None:
    """`size` bytes from `fd`, or None at its end."""
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data
