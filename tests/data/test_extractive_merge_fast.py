"""The extractive summarizer's merge, tuned for speed (`ExtractiveSummarizer._summarize` reads a span's
features from arrays over the run of messages that holds it: prefix counts by role, each field's items
end to end), makes exactly the summaries the merge as first written makes
(`tests/reference/extractive_merge.py`, which walks the span's messages): on drawn threads, spans and
previous summaries, and in whole what-if replays of the bench thread and of real transcripts."""

from __future__ import annotations

import random
from dataclasses import replace
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector import service
from inspector.config import Config
from inspector.model import Message, Role, Summary, ToolCall
from inspector.summarizers import extractive
from inspector.summarizers.extractive import ExtractiveSummarizer
from inspector.summarizers.extractive_scan import (
    MAX_ACCOMPLISHMENTS,
    MAX_FACTS,
    MAX_FILES,
    MAX_FILLER_SENTENCES,
    Recent,
    extract_features,
)
from tests.hypothesis_budget import examples
from tests.paths import REAL
from tests.reference import extractive_merge as ref

# Few enough that spans repeat them (the caps drop and re-add items), many enough to pass the caps.
_PATHS = [f"src/mod{i}.py" for i in range(45)] + ["/etc/app.conf", "README.md", "docs/guide.md", "./x.js"]
_SENTENCES = (
    "Never touch {path}.", "Always run the tests before {k}.", "You must keep {path} as it is.",
    "I fixed the bug in {path}.", "I added test {k}.", "We will go with plan {k}.", "Let's switch to {path}.",
    "I decided to rewrite {path} instead.", "Plain remark number {k}.", "Look at {path} please.",
    "Why does {k} fail?", "Note {k}", "ok",
)
_OUTPUTS = ("FAILED tests/t{k}.py::x - assert 0", "see {path} for details", "ValueError: bad value {k}",
            "all good {k}", "{k} passed", "Traceback (most recent call last):")


def _message(i: int, role: int, seed: int) -> Message:
    """Message `i` of a thread: its role by number, its text drawn from the pools by `seed`."""
    rng = random.Random(seed)
    fill = lambda template: template.format(path=rng.choice(_PATHS), k=rng.randrange(12))  # noqa: E731
    if role == 2:  # tool output
        lines = [fill(rng.choice(_OUTPUTS)) for _ in range(rng.randrange(1, 5))]
        return Message(f"m{i}", Role.TOOL, "\n".join(lines), tool_call_id=f"c{i - 1}")
    sentences = [fill(rng.choice(_SENTENCES)) for _ in range(rng.randrange(0, 24))]
    text = rng.choice([" ", "\n"]).join(sentences)
    kind = (Role.USER, Role.ASSISTANT, Role.TOOL, Role.SYSTEM)[role]
    calls = (ToolCall(f"c{i}", "read_file", {"path": rng.choice(_PATHS)}),) if role == 1 and rng.random() < 0.5 else ()
    return Message(f"m{i}", kind, text, tool_calls=calls)


def _previous(draw, rng_seed: int) -> Summary:
    """A previous summary with fields as a recorded one may hold them (repeats, more than the caps)."""
    rng = random.Random(rng_seed)
    n_files = draw(st.integers(0, MAX_FILES + 5))
    n_facts = draw(st.integers(0, MAX_FACTS + 3))
    return Summary(
        id=f"p{rng_seed}",
        first_message_id="x0",
        last_message_id="x9",
        summary=draw(st.sampled_from(["", "This summary covers 3 messages. The user asked: fix it.",
                                      "Continuing from the previous summary (a to b), the next 2 messages followed."])),
        relevant_files=tuple(rng.choice(_PATHS) for _ in range(n_files)),
        key_facts=tuple(f"Never touch {rng.choice(_PATHS)}." for _ in range(n_facts)),
        active_goals=tuple(f"goal {k}" for k in range(draw(st.integers(0, 3)))),
    )


@st.composite
def _threads_and_spans(draw):
    n = draw(st.sampled_from([1, 2, 5, 40, 120, 160]))
    specs = draw(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 10**6)), min_size=n, max_size=n))
    messages = [_message(i, role, seed) for i, (role, seed) in enumerate(specs)]
    calls = []
    for _ in range(draw(st.integers(1, 8))):
        a = draw(st.integers(0, n - 1))
        b = n - draw(st.integers(0, n - a - 1))
        how = draw(st.sampled_from(["list", "list", "list", "tuple", "copies", "every other", "middle reversed",
                                    "prepare"]))
        prev = draw(st.sampled_from(["none", "last", "drawn"]))
        calls.append((a, b, how, prev, _previous(draw, draw(st.integers(0, 1000))) if prev == "drawn" else None))
    return messages, calls, draw(st.sampled_from([extractive.RUN_SIZE, 60, 5]))


@settings(max_examples=examples(300), deadline=None)
@given(_threads_and_spans())
def test_drawn_spans_summarize_as_the_merge_as_written(case):
    messages, calls, run_size = case
    summarizer = ExtractiveSummarizer()
    last: Summary | None = None
    with mock.patch.object(extractive, "RUN_SIZE", run_size):
        for k, (a, b, how, prev, drawn) in enumerate(calls):
            span = messages[a:b]
            if how == "tuple":
                span = tuple(span)
            elif how == "copies":  # equal messages, not the same objects
                span = [replace(m) for m in span]
            elif how == "every other":
                span = span[::2]
            elif how == "middle reversed":  # the same first and last message, not end to end between
                span = span[:1] + span[-2:0:-1] + span[-1:] if len(span) > 1 else span
            elif how == "prepare":
                summarizer.prepare(messages[a:b])
            previous = {"none": None, "last": last, "drawn": drawn}[prev]
            got = summarizer._summarize(span, previous, summary_id=f"s{k}", before_request_id=f"r{k}")
            want = ref.summarize(extract_features, span, previous, summary_id=f"s{k}", before_request_id=f"r{k}")
            assert got == want
            last = got


def test_the_drawn_spans_pass_the_caps():
    """The pools are such that spans hold more files, facts, done sentences and later sentences than
    the summary keeps (and repeat them): the caps and the order of first appearance are exercised."""
    messages = [_message(i, i % 4 if i % 3 else 2, i) for i in range(120)]
    feats = [extract_features(m) for m in messages]
    assert len({p for f in feats for p in f.files}) > MAX_FILES
    assert len([s for f in feats for s in f.facts]) > len({s for f in feats for s in f.facts}) > MAX_FACTS
    assert len({s for f in feats for s in f.done}) > MAX_ACCOMPLISHMENTS
    assert sum(len(f.others) for f in feats if f.opener) > MAX_FILLER_SENTENCES
    assert any(f.error for f in feats) and any(f.output_files for f in feats) and any(f.decisions for f in feats)


def test_later_sentences_stop_at_the_message_that_starts_with_enough_of_them():
    """The later sentences of the messages with an opener are taken while fewer than
    MAX_FILLER_SENTENCES are held: here 9 messages give 207 (all the same sentence, so the narrative
    never reaches MIN_WORDS and uses every filler it gets) and the 10th gives only its opener."""
    same = Message("a", Role.ASSISTANT, "\n".join(["same"] * 24))
    messages = [replace(same, id=f"a{i}") for i in range(9)]
    messages.append(Message("a9", Role.ASSISTANT, "\n".join(f"tail{k}" for k in range(24))))
    got = ExtractiveSummarizer()._summarize(messages, None, summary_id="s", before_request_id=None)
    assert got == ref.summarize(extract_features, messages, None, summary_id="s", before_request_id=None)
    assert "tail0" in got.summary and "tail1" not in got.summary
    shorter = ExtractiveSummarizer()._summarize(messages[1:], None, summary_id="s", before_request_id=None)
    assert "tail1" in shorter.summary  # 184 before it: the 10th's are taken


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(1, 6), st.lists(st.sampled_from("abcdefghij"), max_size=8),
       st.lists(st.sampled_from("abcdefghij"), max_size=40))
def test_add_all_adds_each_in_order(limit, start, items):
    one_by_one = Recent(limit, start)
    for item in items:
        one_by_one.add(item)
    at_once = Recent(limit, start)
    at_once.add_all(items)
    assert list(at_once.items) == list(one_by_one.items) == list(ref.Recent(limit, [*start, *items]).items)


def test_a_span_past_the_run_extends_it_and_a_span_elsewhere_is_laid_after_it():
    messages = [_message(i, i % 3, i) for i in range(30)]
    summarizer = ExtractiveSummarizer()
    summarizer._summarize(messages[0:10], None, summary_id="s", before_request_id=None)
    run = summarizer._runs.current
    assert run.messages == messages[0:10]
    summarizer._summarize(messages[5:20], None, summary_id="s", before_request_id=None)  # extends
    assert run.messages == messages[0:20]
    summarizer._summarize(messages[2:18], None, summary_id="s", before_request_id=None)  # found
    assert run.messages == messages[0:20]
    summarizer._summarize(messages[25:30], None, summary_id="s", before_request_id=None)  # elsewhere
    assert run.messages == messages[0:20] + messages[25:30]
    summarizer._summarize(messages[20:27], None, summary_id="s", before_request_id=None)  # not end to end there
    assert run.messages == messages[0:20] + messages[25:30] + messages[20:27]
    with mock.patch.object(extractive, "RUN_SIZE", 36):  # 32 held, 5 more
        summarizer._summarize(messages[0:10:2], None, summary_id="s", before_request_id=None)
    assert summarizer._runs.current is not run and summarizer._runs.current.messages == messages[0:10:2]
    assert run.messages == messages[0:20] + messages[25:30] + messages[20:27]  # a reader of the old run keeps it


def test_a_span_is_found_in_the_run_only_where_each_of_its_messages_is():
    messages = [_message(i, i % 4, i) for i in range(40)]
    summarizer = ExtractiveSummarizer()
    summarizer.prepare(messages)
    for span in (messages[:1] + messages[-2:0:-1] + messages[-1:], messages[3:30:3], messages[::-1],
                 [replace(m, content="Never touch src/x.py.") for m in messages[:20]]):
        got = summarizer._summarize(span, None, summary_id="s", before_request_id=None)
        assert got == ref.summarize(extract_features, span, None, summary_id="s", before_request_id=None)
    assert summarizer._runs.current.messages[:40] == messages


def test_a_scan_that_fails_leaves_the_run_as_it_was():
    messages = [_message(i, i % 4, i) for i in range(12)]
    summarizer = ExtractiveSummarizer()
    summarizer.prepare(messages[:4])
    scan = summarizer._features

    def failing(message):
        if message.id == "m9":
            raise RuntimeError("scan failed")
        return scan(message)

    with mock.patch.object(summarizer, "_features", failing), pytest.raises(RuntimeError):
        summarizer._summarize(messages[2:12], None, summary_id="s", before_request_id=None)
    odd = replace(messages[10], role="moderator")
    with pytest.raises(KeyError):  # as the merge as written fails on a role it does not count
        ref.summarize(extract_features, [messages[0], odd], None, summary_id="s", before_request_id=None)
    with pytest.raises(KeyError):
        summarizer._summarize([messages[0], odd], None, summary_id="s", before_request_id=None)
    run = summarizer._runs.current
    assert run.messages == messages[:4] and len(run.files_at) == len(run.decisions_at) == 5
    got = summarizer._summarize(messages[2:12], None, summary_id="s", before_request_id=None)
    assert got == ref.summarize(extract_features, messages[2:12], None, summary_id="s", before_request_id=None)


def test_prepared_chunks_lay_the_thread_out_as_one_run():
    messages = [_message(i, i % 3, i) for i in range(50)]
    summarizer = ExtractiveSummarizer()
    for start in range(0, 50, 16):
        summarizer.prepare(messages[start:start + 16])
    assert summarizer._runs.current.messages == messages
    other = summarizer.sharing_features()
    assert other._runs is summarizer._runs
    other._summarize(messages[7:45], None, summary_id="s", before_request_id=None)
    assert summarizer._runs.current.messages == messages


def _replays(thread, configs, summarizer, monkeypatch):
    """Each config's replay with `summarizer`: its timeline's JSON and its summary chain."""
    made: list[Summary] = []
    merge = type(summarizer)._summarize

    def recording(self, messages, previous, **kw):
        made.append(merge(self, messages, previous, **kw))
        return made[-1]

    monkeypatch.setattr(service, "make_summarizer", lambda config: summarizer)
    monkeypatch.setattr(service, "_COUNTERS", {})  # fresh counters: no calibration remembered from the other run
    monkeypatch.setattr(type(summarizer), "_summarize", recording)
    out = []
    for config in configs:
        made.clear()
        replay = service.run_replay(thread, config, compactions="decide")
        out.append(([a.timeline_json() for a in replay.timeline], replay.summaries, tuple(made)))
    monkeypatch.undo()
    return out


class _AsWritten(ExtractiveSummarizer):
    """The summarizer with the merge as first written (its per-message features cached as the real one's)."""

    def _summarize(self, messages, previous, *, summary_id, before_request_id):
        return ref.summarize(self._features, messages, previous, summary_id=summary_id,
                             before_request_id=before_request_id)


def _assert_same_replays(thread, configs, monkeypatch) -> list[Summary]:
    fast = _replays(thread, configs, ExtractiveSummarizer(), monkeypatch)
    as_written = _replays(thread, configs, _AsWritten(), monkeypatch)
    assert len(fast) == len(as_written)
    for (timeline, chain, made), (timeline_w, chain_w, made_w) in zip(fast, as_written, strict=True):
        assert made == made_w  # every summary written, every field
        assert chain == chain_w
        assert timeline == timeline_w
    return [s for _, _, made in fast for s in made]


@pytest.mark.parametrize("profile", ["claude-code", "harness", "codex"])
def test_what_if_replays_of_the_bench_thread_are_as_with_the_merge_as_written(profile, monkeypatch):
    from bench.generate import generate_thread

    thread = generate_thread(2_000)
    base = Config.for_profile(profile)
    configs = [base] + [base.updated({"context.window": 150_000 - 10_000 * i}) for i in range(3)]
    made = _assert_same_replays(thread, configs, monkeypatch)
    assert len(made) > 20 and all(s.previous_summary_id for s in made[1:5])


@pytest.mark.parametrize("name", ["claude-code-2.1.7-parallel-tools-3-compactions.jsonl", "codex-0.142.4-rollout.jsonl",
                                  "claude-code-session-with-compaction.jsonl"])
def test_what_if_replays_of_real_transcripts_are_as_with_the_merge_as_written(name, monkeypatch):
    from inspector.importers import parse_text

    _, result = parse_text((REAL / name).read_text(encoding="utf-8"), name)
    made: list[Summary] = []
    for thread in result.threads:
        base = Config.for_profile(service._source_profile(thread.source))
        window = base["context.window"]
        configs = [base.updated({"context.window": w}) for w in (window, window // 2, window // 4)]
        made += _assert_same_replays(thread, configs, monkeypatch)
    # what the summaries hold, so that the comparison compares something
    assert len(made) > 5
    assert all(any(getattr(s, field) for s in made)
               for field in ("key_facts", "accomplishments", "key_decisions", "relevant_files", "active_goals"))
