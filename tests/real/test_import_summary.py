"""The import summary line counts warnings, not "skipped" lines (issue 22 item 17): on the real 2.1.17
session the one warning says the chain continued, and every model call was imported (counted here
from the JSONL, usage once per message.id)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from inspector.cli import main
from tests.paths import REAL

SESSION = REAL / "claude-code-2.1.17-stop-hook-progress.jsonl"


def test_the_summary_counts_warnings_where_nothing_was_skipped(tmp_path):
    calls = set()
    for line in SESSION.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        msg = rec.get("message") if rec.get("type") == "assistant" else None
        if isinstance(msg, dict) and isinstance(msg.get("usage"), dict) and msg.get("model") != "<synthetic>":
            calls.add(msg["id"])
    result = CliRunner().invoke(main, ["import", str(SESSION), "--db", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and "the chain continues with line" in warnings[0]
    summary = result.stdout.splitlines()[-1]
    assert "; 1 warning(s);" in summary and "skipped" not in summary
    assert f"model calls {len(calls)}/{len(calls)} with billed tokens" in summary
