"""A long command's progress on stderr: a bar redrawn in place on a terminal (done / total, rate,
time left), one line per tenth done otherwise (a log file, a CI job), nothing when `quiet`."""

from __future__ import annotations

import sys
import time

import click

from inspector.fleet.progress import Progress, TenthLines, render_bar


class ProgressOnStderr:
    """`update(done)` as the work goes, `close()` at the end (the bar's line is ended)."""

    REDRAW_SECONDS = 0.1

    def __init__(self, total: int, *, unit: str = "threads", label: str = "sweeping", quiet: bool = False) -> None:
        self.progress = Progress(total, unit)
        self.label = label
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self._lines = TenthLines(self.progress, lambda line: click.echo(line, err=True), label)
        self._drawn = 0.0
        self._open = False

    def start_at(self, done: int) -> None:
        """`done` items were done before this run (skipped): shown, not counted in the rate."""
        self.progress.first = done
        self.update(done)

    def update(self, done: int) -> None:
        if self.quiet:
            return
        if not self.tty:
            self._lines.update(done)
            return
        self.progress.done = done
        now = time.monotonic()
        if done < self.progress.total and now - self._drawn < self.REDRAW_SECONDS:
            return
        self._drawn = now
        click.echo(f"\r{self.label} {render_bar(self.progress)}\x1b[K", err=True, nl=False)
        self._open = True

    def step(self, *_: object) -> None:
        """One more done (a callback's signature: any arguments)."""
        self.update(self.progress.done + 1)

    def close(self) -> None:
        if self._open:
            click.echo("", err=True)
            self._open = False
