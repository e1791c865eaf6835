"""Every Codex model call is a request: without its token count (the later half of a rollout's
`token_count` infos removed), with a `tool_search_call` as its only output; a manual `/compact`
(a task of its own) is marked manual and not counted in "codex reproduces N of M".

The figures are read here from the rollout's lines: the billed prompt of each call is the
`last_token_usage.input_tokens` of the count whose cumulative total changed."""

from __future__ import annotations

import copy
import json

from inspector.config import Config
from inspector.importers import parse_text
from inspector.model import Role
from inspector.service import reproduction, run_replay, thread_values
from tests.paths import REAL

REMOTE = "codex-0.140-remote-compactions.jsonl"
ROLLOUT = "codex-0.142.4-rollout.jsonl"


def records(name: str) -> list[dict]:
    return [json.loads(line) for line in (REAL / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def text_of(recs: list[dict]) -> str:
    return "\n".join(json.dumps(r) for r in recs) + "\n"


def is_count(rec: dict) -> bool:
    return rec.get("type") == "event_msg" and rec["payload"].get("type") == "token_count" \
        and isinstance(rec["payload"].get("info"), dict)


def billed_prompts(recs: list[dict]) -> list[int]:
    """The billed prompt of each model call, in order: a count whose cumulative total changed."""
    out, last = [], None
    for rec in recs:
        if is_count(rec):
            total = rec["payload"]["info"]["total_token_usage"]
            if total != last:
                out.append(rec["payload"]["info"]["last_token_usage"]["input_tokens"])
            last = total
    return out


def thread_of(recs: list[dict], name: str):
    _, result = parse_text(text_of(recs), name)
    [thread] = result.threads
    return thread, result


def test_a_call_whose_count_has_no_info_is_still_a_request_calibrated_near_its_bill():
    recs = records(REMOTE)
    truth = billed_prompts(recs)
    counts = [i for i, r in enumerate(recs) if is_count(r)]
    hidden = set(counts[len(counts) // 2:])
    cut = [copy.deepcopy(r) for r in recs]
    for i in hidden:
        cut[i]["payload"]["info"] = None
    thread, result = thread_of(cut, REMOTE)
    assert len(thread.requests) == len(truth) == 327
    unbilled = [k for k, r in enumerate(thread.requests) if r.prompt_tokens is None]
    assert len(unbilled) == result.coverage[0].calls_unbilled > 150
    assert [r.prompt_tokens for r in thread.requests if r.prompt_tokens is not None] == truth[:len(truth) - len(unbilled)]
    replay = run_replay(thread, Config.for_profile("codex", thread_values(thread, "codex")), compactions="recorded")
    near = [k for k in unbilled
            if abs(replay.timeline[k].budget.calibrated_prompt_tokens - truth[k]) <= 0.1 * truth[k]]
    assert len(near) >= 0.9 * len(unbilled)
    assert {replay.timeline[k].stats["calibration_basis"] for k in unbilled} <= {"carried", "restarted", "modelled",
                                                                                 "predicted", "estimate"}


def test_a_call_whose_only_output_is_a_tool_search_is_a_request():
    recs = records(ROLLOUT)
    search = next(i for i, r in enumerate(recs) if r["payload"].get("type") == "tool_search_call")
    # the call's reasoning and commentary removed: the tool search is all it outputs
    start = next(i for i in range(search, 0, -1) if is_count(recs[i - 1]))
    alone = recs[:start] + [r for r in recs[start:search] if r["type"] != "response_item"] + recs[search:]
    thread, result = thread_of(alone, ROLLOUT)
    assert len(thread.requests) == len(billed_prompts(alone)) == 112 and result.skipped == []
    index = thread.message_index()
    call_id = recs[search]["payload"]["call_id"]
    [caller] = [m for m in thread.messages if any(c.id == call_id for c in m.tool_calls)]
    [request] = [r for r in thread.requests if thread.messages[index[r.after_message_id] + 1] is caller]
    following = next(r for r in recs[search:] if is_count(r))
    assert request.prompt_tokens == following["payload"]["info"]["last_token_usage"]["input_tokens"]
    [output] = [m for m in thread.messages if m.role is Role.TOOL and m.tool_call_id == call_id]
    found = next(r for r in recs if r["payload"].get("type") == "tool_search_output")["payload"]["tools"]
    assert caller.tool_calls[0].name == "tool_search" and found and all(t["name"] in output.content for t in found)


def manual_compaction(recs: list[dict], after: int) -> list[dict]:
    """A `/compact` spliced in after record `after` (a task's end): a task of its own with no model call."""
    stamp = recs[after]["timestamp"]
    total = next(r for r in reversed(recs[:after + 1]) if is_count(r))
    kept = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "keep going"}]}]
    task = [{"timestamp": stamp, "type": "event_msg", "payload": {"type": "task_started", "turn_id": "x"}},
            {"timestamp": stamp, "type": "compacted", "payload": {"message": "", "replacement_history": kept}},
            {"timestamp": stamp, "type": "event_msg", "payload": {"type": "context_compacted"}},
            copy.deepcopy(total),
            {"timestamp": stamp, "type": "event_msg", "payload": {"type": "task_complete", "turn_id": "x"}}]
    return recs[:after + 1] + task + recs[after + 1:]


def test_a_manual_compact_is_marked_manual_replayed_where_it_happened_and_not_counted():
    recs = records(REMOTE)
    ends = [i for i, r in enumerate(recs) if r["payload"].get("type") == "task_complete"]
    spliced = manual_compaction(recs, ends[0])
    thread, _ = thread_of(spliced, REMOTE)
    triggers = [s.meta.get("trigger") for s in thread.summaries]
    assert triggers.count("manual") == 1 and len(triggers) == 4
    [manual] = [s for s in thread.summaries if s.meta.get("trigger") == "manual"]
    assert not manual.readable
    config = Config.for_profile("codex", thread_values(thread, "codex"))
    decided = run_replay(thread, config, compactions="decide").timeline
    at = next(a for a in decided if a.request_id == manual.before_request_id)
    assert at.compaction is not None and at.compaction.manual and at.compaction.summary_id == manual.id
    done, total = reproduction(thread, config)
    assert total == 3 and done <= 3
    # the automatic ones stay automatic
    plain, _ = thread_of(recs, REMOTE)
    assert [s.meta.get("trigger") for s in plain.summaries] == [None, None, None]
