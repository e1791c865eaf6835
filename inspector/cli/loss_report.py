"""Plain text and JSON of `loss` and `probe` (what each compaction lost; where a text is visible).

Requests are numbered from 1 in the text, as in `simulate`'s text and the TUI, with the 0-based
index beside (the JSON's `index`, `--request INDEX`). Every untrusted text goes through
`safe_line`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inspector.pipeline.facts import KINDS, FactKind
from inspector.pipeline.probe import ProbeResult, Sighting
from inspector.pipeline.survival import OPAQUE, CompactionLoss, KindCount, survival_table
from inspector.terminal_safety import safe_line

LOSS_FORMAT = "context-inspector/loss-v1"
PROBE_FORMAT = "context-inspector/probe-v1"


def _rate(count: KindCount) -> str:
    return "-" if count.rate is None else f"{100 * count.rate:.1f}%"


def survival_lines(table: Mapping[FactKind, KindCount]) -> list[str]:
    """The per-kind table: facts, survived, lost, (where some fates are not known) unknown, survival
    rate ("-" where it cannot be known)."""
    total = KindCount()
    counts = []
    for kind in KINDS:
        count = table.get(kind, KindCount())
        total += count
        counts.append((str(kind), count))
    counts.append(("all", total))
    unknown = total.unknown > 0
    rows = [("KIND", "FACTS", "SURVIVED", "LOST", *(("UNKNOWN",) if unknown else ()), "SURVIVAL")]
    rows.extend((name, f"{c.facts:,}", f"{c.survived:,}", f"{c.lost:,}", *((f"{c.unknown:,}",) if unknown else ()),
                 _rate(c)) for name, c in counts)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
            for r in rows]


def opaque_line(loss: CompactionLoss) -> str:
    """What an opaque summary's compaction is said to have kept, instead of a loss rate."""
    total = sum(c.facts for c in loss.counts().values())
    kept = sum(c.survived for c in loss.counts().values())
    return (f"{OPAQUE}: {kept:,} of its {total:,} facts kept verbatim by the retained history, "
            f"the fate of {total - kept:,} not known")


def loss_lines(losses: Sequence[tuple[str, CompactionLoss]], *, threads: int, limit: int | None = 10,
               failed: int = 0) -> list[str]:
    """Each compaction (with its thread id) and the facts it lost, then the totals per kind.
    `limit`: lost facts listed per kind and compaction (None: all); `failed`: threads not replayed."""
    out: list[str] = []
    for thread_id, loss in losses:
        out.append(
            f"thread {safe_line(thread_id, 60)}: compaction before request {loss.request_index + 1} "
            f"(index {loss.request_index}, {safe_line(loss.request_id, 40)}), summary {safe_line(loss.summary_id, 60)} "
            f"[{safe_line(loss.source, 20)}], {len(loss.message_ids):,} messages"
        )
        if not loss.summary_readable:
            out.append("  " + opaque_line(loss))
        out.extend("  " + line for line in survival_lines(loss.counts()))
        lost = loss.lost()
        for kind in KINDS:
            of_kind = [f for f in lost if f.kind is kind]
            if not of_kind:
                continue
            out.append(f"  lost {kind} ({len(of_kind):,}):")
            shown = of_kind if limit is None else of_kind[:limit]
            out.extend(f"    {safe_line(f.text, 120)}  (message {safe_line(f.message_id, 48)})" for f in shown)
            if len(shown) < len(of_kind):
                out.append(f"    … and {len(of_kind) - len(shown):,} more (--limit 0 or --json lists all)")
        out.append("")
    noun = "compaction" if len(losses) == 1 else "compactions"
    tnoun = "thread" if threads == 1 else "threads"
    unreplayed = f"; {failed} of them could not be replayed (see the errors above)" if failed else ""
    if not losses:
        out.append(f"no compactions in this replay ({threads} {tnoun}{unreplayed})")
        return out
    out.append(f"survival per kind over {len(losses)} {noun} in {threads} {tnoun}{unreplayed}:")
    out.extend("  " + line for line in survival_lines(survival_table(loss for _, loss in losses)))
    return out


def loss_json(losses: Sequence[tuple[str, CompactionLoss]], *, profile: str | None, thread_ids: Sequence[str],
              errors: Sequence[Mapping[str, str]] = (), profiles: Mapping[str, str] | None = None,
              compactions: str | None = None, modes: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`profile` / `compactions`: what was asked for (None: each thread's default); `profiles` /
    `modes`: thread id -> the profile and compaction mode it was replayed under."""
    table = survival_table(loss for _, loss in losses)
    profiles, modes = profiles or {}, modes or {}
    return {
        "format": LOSS_FORMAT,
        "profile": profile,
        "compaction_mode": compactions,
        "threads": list(thread_ids),
        "compactions": [{"thread_id": tid, "profile": profiles.get(tid, profile),
                         "compaction_mode": modes.get(tid, compactions), **loss.to_json()} for tid, loss in losses],
        "totals": {str(k): c.to_json() for k, c in table.items()},
        "errors": list(errors),
    }


def _where(s: Sighting) -> str:
    if s.visibility == "verbatim":
        return f"verbatim in {safe_line(s.block_id or 'the system prompt', 48)} ({s.status})"
    if s.visibility == "summary":
        return f"in summary {safe_line(s.summary_id, 60)}"
    return "absent (request failed)" if s.status == "failed" else "absent"


def probe_lines(results: Sequence[ProbeResult]) -> list[str]:
    """Per probe: where it is, as runs of requests with the same visibility, and when it was lost."""
    out: list[str] = []
    for result in results:
        holders = ", ".join(safe_line(m, 48) for m in result.messages[:5]) or "no message"
        if len(result.messages) > 5:
            holders += f" and {len(result.messages) - 5} more"
        out.append(f'probe "{safe_line(result.text, 100)}": in {holders}')
        runs: list[tuple[int, int, str]] = []
        for s in result.requests:
            where = _where(s)
            if runs and runs[-1][2] == where:
                runs[-1] = (runs[-1][0], s.index, where)
            else:
                runs.append((s.index, s.index, where))
        for first, last, where in runs:
            span = f"request {first + 1}" if first == last else f"requests {first + 1}-{last + 1}"
            out.append(f"  {span}: {where}")
        lost = result.lost_at
        if lost is not None:
            request_id = next(s.request_id for s in result.requests if s.index == lost)
            out.append(f"  lost at request {lost + 1} (index {lost}, {safe_line(request_id, 48)})")
        elif result.first_seen is None:
            out.append("  never visible")
        else:
            out.append("  never lost")
    return out


def probe_json(results: Sequence[ProbeResult], *, thread_id: str, profile: str,
               compactions: str | None = None) -> dict[str, Any]:
    return {"format": PROBE_FORMAT, "thread_id": thread_id, "profile": profile, "compaction_mode": compactions,
            "probes": [r.to_json() for r in results]}
