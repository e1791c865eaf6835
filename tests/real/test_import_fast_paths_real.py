"""Every real transcript imported with the import's fast paths (the repair's one look at a message,
`thread_repair._unchanged`; a tool call's arguments text by msgspec, `indented_json.sorted_line`;
detection's sample cut at its 50th newline, `_common.first_lines`) and without them (the field by field
repair, json's text, `splitlines` of the whole text): the same report and the same rows, cell for cell."""

from __future__ import annotations

import json
from contextlib import ExitStack
from unittest import mock

from inspector import importers, model, thread_repair
from inspector.importers import import_paths
from inspector.indented_json import sorted_line
from tests.data.test_bulk_rows import store_pair, table_rows
from tests.paths import REAL


def _without_fast_paths(stack: ExitStack, looks: list[bool]) -> None:
    def no_look(obj):
        looks.append(False)
        return False

    stack.enter_context(mock.patch.object(thread_repair, "_unchanged", no_look))
    stack.enter_context(mock.patch.object(model, "sorted_line", lambda value: None))
    stack.enter_context(mock.patch.object(importers, "first_lines", lambda text, count: text.splitlines()[:count]))


def test_the_real_transcripts_give_the_same_rows_with_and_without_the_fast_paths(tmp_path):
    files = sorted(p for p in REAL.iterdir() if p.suffix in (".jsonl", ".json", ".traj"))
    assert len(files) >= 10
    seen: list[bool] = []
    look = thread_repair._unchanged

    def counted(obj):
        seen.append(look(obj))
        return seen[-1]

    with store_pair("sqlite", tmp_path) as (fast, slow):
        with mock.patch.object(thread_repair, "_unchanged", counted):
            got = import_paths(files, fast, now="t1")
        slow_looks: list[bool] = []
        with ExitStack() as stack:
            _without_fast_paths(stack, slow_looks)
            expected = import_paths(files, slow, now="t1")
        assert got == expected and len(got.threads) >= 10 and not got.errors
        fast_rows, slow_rows = table_rows(fast.url), table_rows(slow.url)
        assert len(fast_rows["ci_messages"]) > 4000 and len(fast_rows["ci_tool_calls"]) > 1000
        assert fast_rows == slow_rows
    # both paths ran: the look passed nearly every message of the fast import; in the other every object
    # went field by field (its tool calls too, so more calls)
    assert sum(seen) > 0.9 * len(seen) > 4000 and len(slow_looks) >= len(seen)


def test_the_real_tool_calls_arguments_text_is_json_s_sorted_text():
    """`ToolCall.arguments_json` (what the replays count; not a stored column) on every real tool call
    against json.dumps: the same characters, and msgspec wrote nearly all of those not given as text."""
    calls = structured = fast = 0
    for path in sorted(p for p in REAL.iterdir() if p.suffix in (".jsonl", ".json", ".traj")):
        _, result = importers.parse_text(path.read_text(encoding="utf-8"), path.name)
        for thread in result.threads:
            for message in thread.messages:
                for call in message.tool_calls:
                    arguments = call.arguments
                    expected = arguments if isinstance(arguments, str) else json.dumps(
                        arguments, ensure_ascii=False, sort_keys=True)
                    assert call.arguments_json() == expected
                    calls += 1
                    if not isinstance(arguments, str):  # Codex's arguments are the model's own JSON text
                        structured += 1
                        fast += sorted_line(arguments) is not None
    assert calls > 1000 and structured > 1000 and fast > 0.9 * structured
