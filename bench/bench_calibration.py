"""How well the calibrated token model predicts what the provider billed, on the real sessions.

    python -m bench.bench_calibration

For every real Claude Code and Codex session of ../shared/fixtures/real/ with billed counts: a copy
whose later half of requests carries no `prompt_tokens` is replayed as the app replays it (the
thread's own profile, recorded compactions, calibration fitted on the first half only); each of
those requests' `calibrated_prompt_tokens` is compared with the billed count the original had.
Reported per session and tokenizer: the share within 3% and the median error. Prediction
quality, not speed: no reference run is needed.
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
            by_basis.setdefault(result.calibration.basis(audit.index), []).append(error)
    fit = result.calibration.fit
    anchored = [e for basis, v in by_basis.items() if basis not in UNCERTAIN_BASES for e in v]
    return {
        "session": name, "tokenizer": tokenizer, "profile": config.profile, "hidden": len(errors),
        "within_3pct": sum(1 for e in errors if e <= 0.03) / len(errors) if errors else None,
        "median_error": statistics.median(errors) if errors else None,
        "anchored": len(anchored),
        "anchored_within_3pct": sum(1 for e in anchored if e <= 0.03) / len(anchored) if anchored else None,
        "guesses": len(errors) - len(anchored),
        "bases": {basis: len(v) for basis, v in sorted(by_basis.items())},
        "fit": fit.describe(),
    }


def run(out=sys.stdout) -> list[dict]:
    import os

    os.environ.setdefault("CONTEXT_INSPECTOR_DATA_DIR", tempfile.mkdtemp(prefix="bench-calibration-"))
    rows = [measure(name, tok) for name in SESSIONS if (REAL / name).is_file() for tok in TOKENIZERS]
    print(f"{'session':<54} {'tokenizer':<11} {'hidden':>6} {'within 3%':>9} {'median err':>10} "
          f"{'anchored':>8} {'within 3%':>9} {'guesses':>7}", file=out)
    for row in rows:
        within = "-" if row["within_3pct"] is None else f"{row['within_3pct']:.0%}"
        median = "-" if row["median_error"] is None else f"{row['median_error']:.1%}"
        anchored = "-" if row["anchored_within_3pct"] is None else f"{row['anchored_within_3pct']:.0%}"
        print(f"{row['session']:<54} {row['tokenizer']:<11} {row['hidden']:>6} {within:>9} {median:>10} "
              f"{row['anchored']:>8} {anchored:>9} {row['guesses']:>7}", file=out)
    return rows


if __name__ == "__main__":
    run()
