"""`simulate --json` written request by request: memory bounded by one request's blocks, not the output.

The bytes are those of `json_text(simulation.to_json())` (indent 2) for `--blocks all`; `changed`
and `none` keep the same document and change only each request's `blocks` (README, "The simulation
JSON, streamed"):

- `all`: every block of every request (the default).
- `changed`: each request's row gets `block_count` (its full list's length) and its `blocks` hold only
  the blocks that differ in any field (status, tokens sent, position, reason, ...) from the block at the
  same place in the previous request's list, or that lie beyond that list's end; each listed block
  carries its place as `index`. Request k's full list is request k-1's list cut or extended to
  `block_count`, with each listed block put at its `index` (the first request lists every block).
- `none`: no `blocks` key (the rows of `all` without it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from inspector.pipeline.audit import RequestAudit, Simulation
from inspector.terminal_safety import json_dumps

BLOCK_MODES = ("all", "changed", "none")


def _nested(value: Any, depth: int) -> str:
    """`value` as json_dumps writes it `depth` levels deep inside an indent-2 document."""
    return json_dumps(value).replace("\n", "\n" + "  " * depth)


def changed_blocks(previous: list[dict[str, Any]] | None, current: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The blocks of `current` that differ from `previous` at their place (module docstring), each with `index`."""
    prev = previous or []
    return [{"index": i, **b} for i, b in enumerate(current) if i >= len(prev) or prev[i] != b]


def rebuild_blocks(previous: list[dict[str, Any]] | None, row: dict[str, Any]) -> list[dict[str, Any]]:
    """A `changed` row's full block list from the previous request's (the contract, for readers and tests)."""
    count = row["block_count"]
    full: list[Any] = list(previous or [])[:count]
    full.extend([None] * (count - len(full)))
    for block in row["blocks"]:
        block = dict(block)
        full[block.pop("index")] = block
    return full


def rows(sim: Simulation, audits: Iterable[RequestAudit], blocks: str) -> Iterator[dict[str, Any]]:
    """The requests' rows under `blocks` (BLOCK_MODES), one at a time."""
    previous: list[dict[str, Any]] | None = None
    for audit in audits:
        row = sim.row_json(audit)
        if blocks == "none":
            row.pop("blocks")
        elif blocks == "changed":
            current = row.pop("blocks")
            row["block_count"] = len(current)
            row["blocks"] = changed_blocks(previous, current)
            previous = current
        yield row


def write_simulation(sim: Simulation, requests: Iterable[dict[str, Any]], write: Callable[[str], None]) -> None:
    """The document `json_text({**sim.head_json(), "requests": [...], **sim.tail_json()})` in pieces."""
    head = json_dumps(sim.head_json())
    write(head[: -len("\n}")] + ',\n  "requests": [')
    first = True
    for row in requests:
        write(("\n    " if first else ",\n    ") + _nested(row, 2))
        first = False
    write("]" if first else "\n  ]")
    for key, value in sim.tail_json().items():
        write(f",\n  {json_dumps(key)}: {_nested(value, 1)}")
    write("\n}\n")


__all__ = ["BLOCK_MODES", "changed_blocks", "rebuild_blocks", "rows", "write_simulation"]
