"""Where the tests find things: the repository, the real transcripts beside it, the demo copies
and the bad-input corpus. Every test names these, so no test computes a path of its own."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The repository's root (README.md, pyproject.toml, .ci/)."""

REAL = ROOT.parent / "shared" / "fixtures" / "real"
"""The real transcripts (`../shared/fixtures/real` from the root; never edited)."""

DEMO_DATA = ROOT / "inspector" / "demo_data"
"""Gzipped verbatim copies of some of the real transcripts, shipped for the demo database."""

BAD = ROOT / "tests" / "samples" / "bad"
"""The bad-input corpus (`tests/cli/test_bad_input_corpus.py::CORPUS` lists it)."""

README = ROOT / "README.md"
