"""How well the calibrated token model predicts what the provider billed, on the real sessions.

    python -m bench.bench_calibration

For every real Claude Code and Codex session of ../shared/fixtures/real/ with billed counts: a copy
whose later half of requests carries no `prompt_tokens` is replayed as the app replays it (the
thread's own profile, recorded compactions, calibration fitted on the first half only); each of
those requests' `calibrated_prompt_tokens` is compared with the billed count the original had.
Reported per session and tokenizer: the share within 3% and within 10%, the median error, and per
`calibration_basis` (what each hidden figure stands on) the same shares; then the totals per basis
and the hidden requests more than 10% off whose basis is not a guess (there should be none).
Prediction quality, not speed: no reference run is needed.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

REAL = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "real"
SESSIONS = (
    "claude-code-session-with-compaction.jsonl",
    "claude-code-session-with-sidechains.jsonl",
    "claude-code-2.1.7-parallel-tools-3-compactions.jsonl",
    "claude-code-2.1.17-stop-hook-progress.jsonl",
    "claude-code-2.1.19-auto-and-manual-compaction.jsonl",
    "claude-code-2.1.37-progress-records.jsonl",
    "codex-rollout.jsonl",
)
TOKENIZERS = ("chars4", "o200k_base")


from inspector.pipeline.calibration import UNCERTAIN_BASES  # noqa: E402


def main_thread(name: str):
    from inspector.importers import parse_text

    _, result = parse_text((REAL / name).read_text(encoding="utf-8"), name)
    return max(result.threads, key=lambda t: sum(1 for r in t.requests if r.prompt_tokens is not None))


def later_half_hidden(thread):
    """The copy: every request from the middle on without its billed count (nor its cache counts,
    which add up to it)."""
    half = len(thread.requests) // 2
    requests = tuple(r if k < half else replace(r, prompt_tokens=None, cache_read_tokens=None, cache_write_tokens=None)
                     for k, r in enumerate(thread.requests))
    return replace(thread, requests=requests), half


GUESSES = ("restarted", "predicted", "estimate")  # the bases labelled as guesses


def measure(name: str, tokenizer: str) -> dict:
    from inspector.service import default_compactions, load_config, run_replay

    thread = main_thread(name)
    hidden, half = later_half_hidden(thread)
    config = load_config(None, {"context.tokenizer": tokenizer}, thread=hidden)
    result = run_replay(hidden, config, compactions=default_compactions(hidden))
    truth = {r.id: r.prompt_tokens for r in thread.requests}
    errors = []
    by_basis: dict[str, list[float]] = {}
    for audit in result.timeline[half:]:
        billed = truth.get(audit.request_id)
        if billed:
            error = abs(audit.budget.calibrated_prompt_tokens - billed) / billed
            errors.append(error)
            by_basis.setdefault(result.basis(audit.index) or "estimate", []).append(error)
    fit = result.calibration.fit
    anchored = [e for basis, v in by_basis.items() if basis not in UNCERTAIN_BASES for e in v]
    return {
        "session": name, "tokenizer": tokenizer, "profile": config.profile, "hidden": len(errors),
        "within_3pct": share(errors, 0.03), "within_10pct": share(errors, 0.10),
        "median_error": statistics.median(errors) if errors else None,
        "anchored": len(anchored), "anchored_within_3pct": share(anchored, 0.03),
        "guesses": len(errors) - len(anchored),
        "bases": {basis: len(v) for basis, v in sorted(by_basis.items())},
        "errors_by_basis": by_basis,
        "fit": fit.describe(),
    }


def share(errors: list[float], bound: float) -> float | None:
    return sum(1 for e in errors if e <= bound) / len(errors) if errors else None


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.0%}"


def run(out=sys.stdout) -> list[dict]:
    import os

    os.environ.setdefault("CONTEXT_INSPECTOR_DATA_DIR", tempfile.mkdtemp(prefix="bench-calibration-"))
    rows = [measure(name, tok) for name in SESSIONS if (REAL / name).is_file() for tok in TOKENIZERS]
    print(f"{'session':<54} {'tokenizer':<11} {'hidden':>6} {'within 3%':>9} {'10%':>5} {'median err':>10} "
          f"{'bases (within 3% / 10%)'}", file=out)
    for row in rows:
        median = "-" if row["median_error"] is None else f"{row['median_error']:.1%}"
        bases = ", ".join(f"{b} {len(v)} ({_pct(share(v, 0.03))}/{_pct(share(v, 0.10))})"
                          for b, v in sorted(row["errors_by_basis"].items()))
        print(f"{row['session']:<54} {row['tokenizer']:<11} {row['hidden']:>6} {_pct(row['within_3pct']):>9} "
              f"{_pct(row['within_10pct']):>5} {median:>10} {bases}", file=out)
    for tok in TOKENIZERS:
        # the default tokenizer of each session's profile, or this one everywhere
        chosen = [r for r in rows if r["tokenizer"] == tok]
        totals: dict[str, list[float]] = {}
        for row in chosen:
            for basis, v in row["errors_by_basis"].items():
                totals.setdefault(basis, []).extend(v)
        every = [e for v in totals.values() for e in v]
        sure_but_off = sum(1 for b, v in totals.items() if b not in GUESSES for e in v if e > 0.10)
        print(f"all sessions under {tok}: {len(every)} hidden, within 3% {_pct(share(every, 0.03))}, within 10% "
              f"{_pct(share(every, 0.10))}; " + ", ".join(
                  f"{b} {len(v)} ({_pct(share(v, 0.03))}/{_pct(share(v, 0.10))})" for b, v in sorted(totals.items()))
              + f"; over 10% off and not a guess: {sure_but_off}", file=out)
    return rows


if __name__ == "__main__":
    run()
