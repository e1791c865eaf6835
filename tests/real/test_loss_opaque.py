"""`loss` where nobody can read the summary: Codex's remote compactions (`compacted.message == ""`,
the summary encrypted by the provider). A fact the retained history keeps verbatim survived, every
other one's fate is not known, none is lost; a Claude Code compaction is judged as before.

The retained texts are read here straight from the rollout's `compacted` lines."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from inspector.cli import main
from inspector.cli.loss_report import loss_lines
from inspector.compare.between_replays import OPAQUE_KIND, diff_loss
from inspector.model import Summary
from inspector.pipeline.facts import Fact, FactKind
from inspector.pipeline.survival import OPAQUE, CompactionLoss, FactFate, KindCount, fates_of
from tests.paths import REAL

CODEX = REAL / "codex-0.140-remote-compactions.jsonl"
CLAUDE = REAL / "claude-code-session-with-compaction.jsonl"


def retained_texts(path: Path) -> list[str]:
    """Each `compacted` line's replacement-history message texts, joined and lower-cased."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("type") == "compacted":
            assert rec["payload"]["message"] == ""
            texts = [part.get("text", "") for item in rec["payload"]["replacement_history"]
                     for part in item.get("content") or [] if isinstance(part, dict)]
            out.append("\n".join(texts).lower())
    return out


def named(text: str, kept: str) -> bool:
    """`text` in `kept` as a whole (a path not continued by more of a path)."""
    return re.search(r"(?<![\w./-])" + re.escape(text) + r"(?![\w/-])(?!\.\w)", kept) is not None


def loss_json(tmp_path: Path, source: Path) -> dict:
    db = str(tmp_path / "t.sqlite")
    runner = CliRunner()
    assert runner.invoke(main, ["import", str(source), "--db", db]).exit_code == 0
    result = runner.invoke(main, ["loss", "--all", "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_remote_compaction_loses_no_fact_and_keeps_what_its_history_holds(tmp_path):
    data = loss_json(tmp_path, CODEX)
    retained = retained_texts(CODEX)
    assert len(data["compactions"]) == len(retained) == 3
    for compaction, kept in zip(data["compactions"], retained, strict=True):
        assert compaction["summary_readable"] is False
        fates = [f["survived"] for f in compaction["facts"]]
        assert False not in fates and fates.count(True) > 0
        for fact in compaction["facts"]:
            if fact["survived"] is None:  # not kept verbatim: the retained history never names it on its own
                assert not named(fact["text"].lower(), kept), fact
        total = compaction["totals"]["path"]
        assert total["lost"] == 0 and total["rate"] is None and total["unknown"] + total["survived"] == total["facts"]
    unknown = sum(f["survived"] is None for c in data["compactions"] for f in c["facts"])
    assert sum(t["unknown"] for t in data["totals"].values()) == unknown > 0


def test_a_claude_code_compaction_is_readable_and_judged_as_before(tmp_path):
    data = loss_json(tmp_path, CLAUDE)
    assert data["compactions"] and all(c["summary_readable"] is True for c in data["compactions"])
    assert all(isinstance(f["survived"], bool) for c in data["compactions"] for f in c["facts"])
    assert all(t["unknown"] == 0 for t in data["totals"].values())
    lost = sum(f["survived"] is False for c in data["compactions"] for f in c["facts"])
    assert sum(t["lost"] for t in data["totals"].values()) == lost > 0


def _opaque(retained: str) -> Summary:
    return Summary("s1", "m1", "m2", "", meta={"summary_encrypted": True, "replacement_history": [
        {"type": "message", "role": "user", "content": retained}, {"type": "compaction", "content": ""}]})


FACTS = (Fact(FactKind.PATH, "src/app/main.py", "m1"), Fact(FactKind.COMMAND, "pytest -q tests", "m1"))


def test_the_fates_under_an_opaque_summary_and_a_readable_one():
    assert [f.survived for f in fates_of(FACTS, _opaque("please edit src/app/main.py"))] == [True, None]
    readable = Summary("s1", "m1", "m2", "we edited src/app/main.py")
    assert [f.survived for f in fates_of(FACTS, readable)] == [True, False]


def test_counts_rate_and_text_say_opaque_instead_of_a_rate():
    fates = tuple(FactFate(f, s) for f, s in zip(FACTS, (True, None), strict=True))
    loss = CompactionLoss("s1", "recorded", 3, "R9", ("m1",), fates, summary_readable=False)
    counts = loss.counts()
    assert counts[FactKind.PATH] == KindCount(1, 1, 0) and counts[FactKind.COMMAND] == KindCount(1, 0, 1)
    assert counts[FactKind.COMMAND].lost == 0 and counts[FactKind.COMMAND].rate is None and loss.lost() == ()
    text = "\n".join(loss_lines([("t", loss)], threads=1))
    assert f"{OPAQUE}: 1 of its 2 facts kept verbatim" in text and "UNKNOWN" in text
    assert loss.to_json()["summary_readable"] is False


@pytest.mark.parametrize("readable", [True, False])
def test_the_what_if_diff_says_opaque_rather_than_compare_unknown_with_lost(readable):
    known = tuple(FactFate(f, False) for f in FACTS)
    base = CompactionLoss("s1", "recorded", 3, "R9", ("m1",), tuple(FactFate(f, None) for f in FACTS),
                          summary_readable=False)
    new = CompactionLoss("r1", "extractive", 5, "R11", ("m1",), known)
    if readable:
        base = CompactionLoss("s1", "recorded", 3, "R9", ("m1",), tuple(FactFate(f, True) for f in FACTS))
        assert [c.kind for c in diff_loss([base], [new])] == ["path", "command"]
    else:
        [change] = diff_loss([base], [new])
        assert change.kind == OPAQUE_KIND and OPAQUE in change.phrase()
    assert diff_loss([base], [base]) == ()
