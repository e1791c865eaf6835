"""How many examples the heaviest property tests run: a third of their thorough count by default (the
suite's time on a loaded 2-core machine), all of it under HYPOTHESIS_PROFILE=thorough."""

from __future__ import annotations

import os


def examples(thorough: int) -> int:
    return thorough if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else max(50, thorough // 3)
