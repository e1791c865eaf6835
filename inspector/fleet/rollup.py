"""A fleet sweep's rows added up per combination, and per group with `--group-by`.

The sums are exact (costs as fractions, rounded to a float once at the end), so the rows are the
same whatever order the batches finish in: on a process pool, on a Dask cluster, or read back from
a results store after a resumed run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from inspector.sweep import SweepRow

GROUPS = ("model", "day", "source")
"""What `--group-by` splits each combination's row by (`work.thread_groups`)."""


@dataclass(slots=True)
class _Total:
    threads: int = 0
    requests: int = 0
    compactions: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    cache_read_tokens: int = 0
    cache_breaks: int = 0
    back_to_back: int = 0
    unpriced_threads: int = 0
    cost: Fraction | None = None
    summarization_cost: Fraction | None = None
    facts_lost: int | None = None
    baseline: bool = True

    def add(self, row: SweepRow) -> None:
        self.threads += row.threads
        self.requests += row.requests
        self.compactions += row.compactions
        self.failures += row.failures
        self.prompt_tokens += row.prompt_tokens
        self.cache_read_tokens += row.cache_read_tokens
        self.cache_breaks += row.cache_breaks
        self.back_to_back += row.back_to_back
        self.unpriced_threads += row.unpriced_threads
        self.cost = _plus(self.cost, row.cost)
        self.summarization_cost = _plus(self.summarization_cost, row.summarization_cost)
        if row.facts_lost is not None:
            self.facts_lost = (self.facts_lost or 0) + row.facts_lost
        self.baseline = self.baseline and row.baseline

    def row(self, config: Mapping[str, Any]) -> SweepRow:
        return SweepRow(dict(config), self.threads, self.requests, self.compactions, self.failures,
                        self.prompt_tokens, self.cache_read_tokens, self.cache_breaks, _float(self.cost),
                        self.facts_lost, self.baseline, _float(self.summarization_cost), self.back_to_back,
                        self.unpriced_threads)


def _plus(total: Fraction | None, value: float | None) -> Fraction | None:
    if value is None:
        return total
    return Fraction(value) if total is None else total + Fraction(value)


def _float(value: Fraction | None) -> float | None:
    return None if value is None else float(value)


@dataclass(slots=True)
class Rollup:
    """Per combination (in order) and, with `group_by`, per value of the threads' model, day or source."""

    combos: Sequence[Mapping[str, Any]]
    group_by: str | None = None
    _totals: dict[tuple[str, int], _Total] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.group_by is not None and self.group_by not in GROUPS:
            raise ValueError(f"--group-by must be one of {', '.join(GROUPS)}: got {self.group_by!r}")

    def add(self, combo_index: int, row: SweepRow, groups: Mapping[str, str]) -> None:
        group = "" if self.group_by is None else groups.get(self.group_by, "unknown")
        total = self._totals.get((group, combo_index))
        if total is None:
            total = self._totals[(group, combo_index)] = _Total()
        total.add(row)

    def rows(self) -> list[tuple[str | None, SweepRow]]:
        """(group or None, row), groups by name, each group's combinations in order."""
        out: list[tuple[str | None, SweepRow]] = []
        for group, index in sorted(self._totals):
            out.append((group if self.group_by is not None else None,
                        self._totals[(group, index)].row(self.combos[index])))
        return out
