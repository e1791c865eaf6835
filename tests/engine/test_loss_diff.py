"""The what-if diff says how loss changed: "threshold 0.6: 14 more file paths lost, 2 corrections lost"."""

from __future__ import annotations

from dataclasses import replace

from inspector.compare.between_replays import LossChange, diff_loss, diff_simulations, edit_label, loss_sentence
from inspector.config import Config
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall
from inspector.pipeline import replay
from inspector.pipeline.facts import FactKind
from inspector.pipeline.survival import compaction_losses, survival_table
from inspector.summarizers.extractive import ExtractiveSummarizer


def test_the_sentence_names_each_kind_that_moved():
    changes = (LossChange("path", 10, 24), LossChange("number", 3, 2), LossChange("instruction", 0, 2))
    assert loss_sentence(changes, edit_label({"context.compaction_threshold": 0.6})) == (
        "context.compaction_threshold=0.6: 14 more file paths lost, 1 fewer number lost, 2 corrections lost")
    assert loss_sentence(()) is None


class Lossy:
    """Summaries that keep only the first message's text: everything after it is lost."""

    name = "lossy"

    def summarize(self, messages, previous, *, summary_id, before_request_id=None):
        return Summary(summary_id, messages[0].id, messages[-1].id, messages[0].content,
                       before_request_id=before_request_id, source="lossy")


def _thread() -> Thread:
    messages = [Message("s0", Role.SYSTEM, "contract")]
    requests = []
    for turn in range(1, 9):
        messages += [
            Message(f"u{turn}", Role.USER, f"Never touch tests/fixture{turn}.json. Work on src/mod{turn}.py."),
            Message(f"a{turn}", Role.ASSISTANT, "", tool_calls=(
                ToolCall(f"c{turn}", "Bash", {"command": f"pytest tests/test_{turn}.py"}),)),
            Message(f"t{turn}", Role.TOOL, f"ok, see lib/helper{turn}.py", tool_call_id=f"c{turn}"),
        ]
        requests.append(Request(f"r{turn}", f"u{turn}", prompt_tokens=150 * turn))
    return Thread("d", messages=tuple(messages), requests=tuple(requests))


def test_an_earlier_threshold_loses_more_and_the_diff_says_so():
    thread = _thread()
    # The recorded prompts reach 1,200 of 2,000 tokens: the baseline never compacts, the what-if does.
    base_config = Config.for_profile("iris", {"context.window": 2000, "context.compaction_threshold": 0.9})
    overrides = {"context.compaction_threshold": 0.3}
    base = replay(thread, base_config, summarizer=Lossy())
    new = replay(thread, base_config.updated(overrides), summarizer=Lossy())
    base_losses, new_losses = compaction_losses(thread, base), compaction_losses(thread, new)
    assert base_losses == () and len(new_losses) >= 2
    changes = diff_loss(base_losses, new_losses)
    before, after = survival_table(base_losses), survival_table(new_losses)
    assert changes == tuple(LossChange(str(k), before[k].lost, after[k].lost) for k in FactKind
                            if before[k].lost != after[k].lost)
    assert {c.kind for c in changes} >= {"path", "command"}
    assert all(c.before == 0 and c.after > 0 for c in changes)
    diff = replace(diff_simulations(base.simulation(), new.simulation()), loss=changes,
                   loss_label=edit_label(overrides))
    assert diff.lines()[-1] == loss_sentence(changes, "context.compaction_threshold=0.3")
    assert diff.lines()[-1].startswith("context.compaction_threshold=0.3: ")
    paths = next(c for c in changes if c.kind == "path")
    assert f" {paths.after} file paths lost" in diff.lines()[-1]


def test_the_same_replay_twice_changes_no_loss():
    thread = _thread()
    config = Config.for_profile("iris", {"context.window": 1000, "context.compaction_threshold": 0.3})
    first = compaction_losses(thread, replay(thread, config, summarizer=ExtractiveSummarizer()))
    second = compaction_losses(thread, replay(thread, config, summarizer=ExtractiveSummarizer()))
    assert first and diff_loss(first, second) == ()
