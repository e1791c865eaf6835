"""The importer contract, over every registered importer (knobs in `importer_knobs/<name>.py`): it
detects its own samples and no other importer's, its samples hold threads, and bad input in its
format gives one-line errors or warnings naming the file, never an exception."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from inspector.importers import REGISTRY, FormatError, detect_format_text, parse_text

KNOBS = Path(__file__).parent / "importer_knobs"


def knobs(name: str):
    return importlib.import_module(f"tests.profiles.importer_knobs.{name.replace('-', '_')}")


def test_every_importer_has_one_knob_file_and_every_knob_file_an_importer():
    files = {p.stem for p in KNOBS.glob("*.py") if p.stem != "__init__"}
    assert files == {name.replace("-", "_") for name in REGISTRY}


@pytest.mark.parametrize("name", list(REGISTRY))
def test_it_detects_its_own_samples_and_they_hold_threads(name):
    for file, text in knobs(name).SAMPLES:
        assert detect_format_text(file, text) == name, file
        assert REGISTRY[name].detect is not None
        fmt, result = parse_text(text, file, name)
        assert fmt == name and result.threads, f"{name}: {file} gave no thread ({result.skipped})"


@pytest.mark.parametrize("name", list(REGISTRY))
def test_no_other_importers_sample_is_taken_for_its(name):
    for other in REGISTRY:
        if other == name:
            continue
        for file, text in knobs(other).SAMPLES:
            assert detect_format_text(file, text) != name, f"{other}'s {file} detected as {name}"


@pytest.mark.parametrize("name", list(REGISTRY))
def test_bad_input_is_one_line_naming_the_file(name):
    for file, text in knobs(name).BAD:
        try:
            _, result = parse_text(text, file, name)
        except FormatError as exc:
            lines = [str(exc)]
        else:
            lines = result.skipped
        assert lines, f"{name}: {file} is broken and nothing said so"
        for line in lines:
            assert "\n" not in line and line.startswith(file), f"{name}: {line!r}"
