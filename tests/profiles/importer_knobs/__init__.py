"""One knob file per registered importer (its registry name with `-` as `_`): samples for the contract
suite (`tests/profiles/test_importer_contract.py`).

`SAMPLES`: (file name, text) pairs in the format, each holding at least one thread. `BAD`: (file name,
text) pairs of broken input in the format: each must give one-line errors or warnings naming the
file, never an exception.
"""

from __future__ import annotations

import json


def jsonl(*items: object) -> str:
    return "\n".join(item if isinstance(item, str) else json.dumps(item) for item in items) + "\n"
