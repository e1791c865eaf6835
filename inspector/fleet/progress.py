"""How far a sweep is: done / total, the rate and the time left, said as a bar on a terminal or as
one line per tenth done otherwise (a log, a CI job). No terminal code here: `Progress` computes,
`render_bar` and `tenth_line` say."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(slots=True)
class Progress:
    """Items done out of `total` since `start` (monotonic seconds); `unit` names them."""

    total: int
    unit: str = "threads"
    done: int = 0
    start: float = field(default_factory=time.monotonic)
    first: int = 0  # done before this run started (skipped): not counted in the rate

    def rate(self, now: float | None = None) -> float | None:
        """Items per second over this run (None until one is done)."""
        elapsed = (time.monotonic() if now is None else now) - self.start
        ran = self.done - self.first
        return ran / elapsed if ran > 0 and elapsed > 0 else None

    def left(self, now: float | None = None) -> float | None:
        """Seconds left at the rate so far (None while unknown)."""
        if self.done >= self.total:
            return 0.0
        rate = self.rate(now)
        return None if rate is None else (self.total - self.done) / rate

    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


def duration(seconds: float | None) -> str:
    """`1h02m`, `3m05s`, `12s`; `?` while unknown."""
    if seconds is None:
        return "?"
    s = round(seconds)
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


def status(p: Progress, now: float | None = None) -> str:
    """`120/1,000 threads, 14.2/s, 1m02s left`."""
    rate = p.rate(now)
    speed = "-" if rate is None else f"{rate:,.1f}/s"
    return f"{p.done:,}/{p.total:,} {p.unit}, {speed}, {duration(p.left(now))} left"


def render_bar(p: Progress, width: int = 30, now: float | None = None) -> str:
    """`[#########.....................]  30%  300/1,000 threads, 14.2/s, 49s left`."""
    filled = int(width * p.fraction())
    return f"[{'#' * filled}{'.' * (width - filled)}] {p.fraction():4.0%}  {status(p, now)}"


class TenthLines:
    """Calls `say` with one line each time another tenth is done (and at the end): for a stderr that
    is not a terminal, where a bar would be a screenful of carriage returns."""

    def __init__(self, progress: Progress, say: Callable[[str], None], label: str = "sweeping") -> None:
        self.progress = progress
        self.say = say
        self.label = label
        self._said = -1

    def update(self, done: int) -> None:
        self.progress.done = done
        p = self.progress
        tenth = int(10 * p.fraction()) if p.total else 10
        if tenth > self._said:
            self._said = tenth
            self.say(f"{self.label}: {p.fraction():.0%}  {status(p)}")
