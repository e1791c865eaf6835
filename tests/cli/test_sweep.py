"""`context-inspector sweep`: one row per config, the same figures as `simulate` for the same config."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from inspector.cli import main
from inspector.config import ConfigError
from inspector.sweep import combinations, parse_key
from tests.store_fixtures import real_lines, real_path

COMPACTION = "claude-code-session-with-compaction.jsonl"
SIDECHAINS = "claude-code-session-with-sidechains.jsonl"


@pytest.fixture(scope="module")
def real_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("sweep") / "real.sqlite"
    runner = CliRunner()
    for name in (COMPACTION, SIDECHAINS):
        result = runner.invoke(main, ["import", str(real_path(name)), "--db", str(db)])
        assert result.exit_code == 0, result.output
    threads = json.loads(runner.invoke(main, ["threads", "--db", str(db), "--json"]).output)
    return str(db), threads


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def _totals_from_simulate(payload: dict) -> dict:
    """The sweep row's figures computed from `simulate --json --timeline` output, independently."""
    reqs = payload["requests"]
    sent = [r for r in reqs if r["status"] == "completed"]
    prompt = sum(r["budget"].get("calibrated_prompt_tokens") or r["budget"]["prompt_tokens"] for r in sent)
    read = sum(r["budget"]["cache_read_tokens"] for r in sent)
    costs = [r["budget"]["cost"] for r in reqs]
    return {"compactions": sum(1 for r in reqs if r["compaction"] is not None),
            "failures": sum(1 for r in reqs if r["status"] == "failed"),
            "prompt_tokens": prompt,
            "cache_read_share": round(read / prompt, 4),
            "cache_breaks": sum(1 for r in reqs if r["budget"]["cache_break"] is not None),
            "cost": None if None in costs else round(sum(costs), 6)}


def test_the_threads_own_threshold_gives_the_figures_simulate_gives(real_db):
    db, threads = real_db
    thread = next(t for t in threads if t["summaries"])
    result = _run("sweep", "--thread", thread["id"], "--db", db, "--json", "--profile", "iris",
                  "--key", "context.compaction_threshold=0.3,0.75,0.9")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert [r["config"] for r in rows] == [{"context.compaction_threshold": v} for v in (0.3, 0.75, 0.9)]
    sim = _run("simulate", "--thread", thread["id"], "--db", db, "--json", "--timeline", "--compactions", "decide",
               "--profile", "iris", "--set", "context.compaction_threshold=0.75")
    assert sim.exit_code == 0, sim.output
    expected = _totals_from_simulate(json.loads(sim.stdout))
    own = rows[1]
    cost = expected.pop("cost")  # rounded to 6 places per request in simulate's JSON
    assert {k: own[k] for k in expected} == expected
    assert own["cost"] == pytest.approx(cost, abs=1e-4)
    loss = _run("loss", "--thread", thread["id"], "--db", db, "--json", "--compactions", "decide",
                "--profile", "iris", "--set", "context.compaction_threshold=0.75")
    assert loss.exit_code == 0, loss.output
    lost = sum(t["lost"] for t in json.loads(loss.stdout)["totals"].values())
    assert own["facts_lost"] == lost
    assert rows[0]["compactions"] > rows[2]["compactions"]  # under iris a lower threshold compacts more often
    assert rows[0]["cost"] is not None and rows[0]["cost"] > 0


def test_recorded_mode_follows_the_recorded_compactions(real_db):
    db, threads = real_db
    thread = next(t for t in threads if t["summaries"])
    rows = json.loads(_run("sweep", "--thread", thread["id"], "--db", db, "--json", "--compactions", "recorded",
                           "--key", "context.compaction_threshold=0.5,0.9").stdout)["rows"]
    assert [r["compactions"] for r in rows] == [thread["summaries"]] * 2


def test_two_keys_give_every_combination_in_the_order_given(real_db):
    db, threads = real_db
    result = _run("sweep", "--thread", threads[0]["id"], "--db", db, "--json",
                  "--key", "context.prune_protect_turns=1,3", "--key", "context.compaction_threshold=0.5,0.9")
    assert result.exit_code == 0, result.output
    configs = [r["config"] for r in json.loads(result.stdout)["rows"]]
    assert configs == [{"context.prune_protect_turns": p, "context.compaction_threshold": t}
                       for p in (1, 3) for t in (0.5, 0.9)]


def test_all_adds_up_every_thread_in_worker_processes(real_db):
    db, threads = real_db
    key = "context.compaction_threshold=0.6,0.8"
    both = json.loads(_run("sweep", "--all", "--db", db, "--json", "--jobs", "2", "--key", key).stdout)["rows"]
    singles = [json.loads(_run("sweep", "--thread", t["id"], "--db", db, "--json", "--key", key).stdout)["rows"]
               for t in threads]
    for i, row in enumerate(both):
        assert row["compactions"] == sum(s[i]["compactions"] for s in singles)
        assert row["prompt_tokens"] == sum(s[i]["prompt_tokens"] for s in singles)
        assert row["cache_breaks"] == sum(s[i]["cache_breaks"] for s in singles)
        assert row["cost"] == pytest.approx(sum(s[i]["cost"] for s in singles), abs=1e-5)


def test_the_text_table_marks_the_threads_own_config(real_db):
    db, threads = real_db
    result = _run("sweep", "--thread", threads[0]["id"], "--db", db, "--key", "context.compaction_threshold=0.5,0.75")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:4] == ["context.compaction_threshold", "COMPACTIONS", "BACK-TO-BACK", "FAILURES"]
    assert "SUMMARIZATION" in lines[0].split()
    assert lines[2].startswith("0.75") and lines[2].rstrip().endswith("*")
    assert not lines[1].rstrip().endswith("*")


@pytest.mark.parametrize(("args", "message"), [
    (["--key", "context.windw=1,2"], "unknown config key 'context.windw'"),
    (["--key", "context.compaction_threshold=0.5,1.5"], "context.compaction_threshold must be in (0, 1]"),
    (["--key", "context.window"], "--key expects KEY=V1,V2,..."),
    (["--key", "context.window=1", "--key", "context.window=2"], "--key given twice: context.window"),
])
def test_a_bad_key_is_a_one_line_error(real_db, args, message):
    db, threads = real_db
    result = _run("sweep", "--thread", threads[0]["id"], "--db", db, *args)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_thread_or_all_is_required(real_db):
    db, threads = real_db
    assert "give --thread ID or --all" in _run("sweep", "--db", db, "--key", "context.window=1000").output
    assert "give --thread ID or --all" in _run("sweep", "--all", "--thread", threads[0]["id"], "--db", db,
                                               "--key", "context.window=1000").output


def test_parse_key_and_combinations():
    assert parse_key("context.window=1000, 2000") == ("context.window", [1000, 2000])
    assert combinations([("a.b", [1])]) == [{"a.b": 1}]
    with pytest.raises(ConfigError):
        parse_key("context.window=")


def test_simulate_text_says_what_the_thread_and_the_request_cost(real_db):
    db, threads = real_db
    thread = next(t for t in threads if t["summaries"])
    result = _run("simulate", "--thread", thread["id"], "--db", db)
    assert result.exit_code == 0, result.output
    head = next(line for line in result.output.splitlines() if line.startswith("cost "))
    payload = json.loads(_run("simulate", "--thread", thread["id"], "--db", db, "--json", "--timeline").stdout)
    total = sum(r["budget"]["cost"] for r in payload["requests"])
    recorded = sum(r["budget"]["recorded_cost"] for r in payload["requests"])
    breaks = sum(1 for r in payload["requests"] if r["budget"]["cache_break"])
    assert head.startswith(f"cost ${total:,.2f} (recorded ${recorded:,.2f})") and f"{breaks} cache breaks" in head
    thread_cost = payload["cost"]  # the whole thread's bill beside the requests
    assert thread_cost["cost"] == pytest.approx(total, abs=1e-4)
    assert thread_cost["recorded_cost"] == pytest.approx(recorded, abs=1e-4)
    assert thread_cost["cache_breaks"] == breaks == sum(thread_cost["breaks_by_cause"].values())
    assert thread_cost["requests"] == len(payload["requests"])
    assert "  cache read " in result.output and " recorded $" in result.output


def test_a_key_the_profile_does_not_read_is_said(real_db):
    db, threads = real_db
    thread = next(t for t in threads if t["summaries"])  # a Claude Code session: the claude-code profile
    result = _run("sweep", "--thread", thread["id"], "--db", db, "--key", "harness.keep_last=1,3")
    assert result.exit_code == 0
    assert "warning: the claude-code profile does not read harness.keep_last: its values change nothing" in result.output
    rows = json.loads(_run("sweep", "--thread", thread["id"], "--db", db, "--json",
                           "--key", "harness.keep_last=1,3").stdout)["rows"]
    assert rows[0] | {"config": None} == rows[1] | {"config": None}


def _compaction_thread(threads):
    return next(t for t in threads if t["summaries"])


def test_a_sweep_prices_every_compaction_s_summarization_call_and_counts_back_to_back_ones(real_db):
    """Issue 22 item 3, its Done-when: `claude_code.autocompact_pct_override` over 0, 20 and 50 on the
    real 2.0.76 session. Every row with compactions has a summarization cost > 0 that its cost
    includes (summed here from `simulate --json` per request, independently of the sweep), and the
    back-to-back count beside it (compactions at consecutive requests, counted here)."""
    db, threads = real_db
    thread = _compaction_thread(threads)
    key = "claude_code.autocompact_pct_override"
    rows = json.loads(_run("sweep", "--thread", thread["id"], "--db", db, "--json", "--key", f"{key}=0,20,50").stdout)
    rows = rows["rows"]
    assert [r["config"][key] for r in rows] == [0, 20, 50]
    for row in rows:
        sim = json.loads(_run("simulate", "--thread", thread["id"], "--db", db, "--json", "--timeline",
                              "--compactions", "decide", "--set", f"{key}={row['config'][key]}").stdout)
        reqs = sim["requests"]
        calls = [r["budget"]["summarization"] for r in reqs if r["compaction"] is not None]
        assert len(calls) == row["compactions"] > 0 and all(c is not None and c["cost"] > 0 for c in calls)
        assert row["summarization_cost"] == pytest.approx(sum(c["cost"] for c in calls), abs=1e-4)
        own = sum((r["budget"]["cost_split"] or {}).get(k, 0) for r in reqs
                  for k in ("input", "cache_write", "cache_read", "output"))
        assert row["cost"] == pytest.approx(own + row["summarization_cost"], abs=1e-3)  # the calls are in `cost`
        assert row["back_to_back"] == sum(1 for a, b in zip(reqs, reqs[1:], strict=False) if a["compaction"] and b["compaction"])
    assert rows[1]["compactions"] > rows[2]["compactions"] > 0
    assert rows[1]["back_to_back"] > 0 and rows[1]["summarization_cost"] > rows[0]["summarization_cost"]
    text = _run("sweep", "--thread", thread["id"], "--db", db, "--key", f"{key}=0,20,50").stdout
    assert "BACK-TO-BACK: compactions right after the previous one" in text


def test_the_summarization_call_sends_what_claude_code_compacted(real_db):
    """At the recorded compaction (recorded mode) the call's input is the prompt Claude Code was about to
    send: the `compact_boundary`'s own `preTokens`, read here from the JSONL, within 1%; most of it is
    the previous request's cached prompt (Claude Code's cache-sharing fork)."""
    db, threads = real_db
    thread = _compaction_thread(threads)
    pre = [rec["compactMetadata"]["preTokens"] for rec in real_lines(COMPACTION)
           if rec.get("subtype") == "compact_boundary"]
    sim = json.loads(_run("simulate", "--thread", thread["id"], "--db", db, "--json", "--timeline",
                          "--compactions", "recorded").stdout)
    calls = [(r, k) for k, r in enumerate(sim["requests"]) if r["compaction"] is not None]
    assert len(calls) == len(pre) == 1
    (req, k), = calls
    call = req["budget"]["summarization"]
    assert call["input_tokens"] == pytest.approx(pre[0], rel=0.01)
    previous = sim["requests"][k - 1]["budget"]
    assert call["cache_read_tokens"] == previous["calibrated_prompt_tokens"] > 0.9 * call["input_tokens"]
    assert 1_000 < call["output_tokens"] < 20_000  # the summary Claude Code wrote


def test_all_sums_the_known_costs_and_counts_the_unpriced_threads(real_db, tmp_path):
    """Issue 22 item 4: one thread without a price (a 3-message fragment naming no model) no longer
    makes the whole sweep's cost unknown."""
    import shutil

    db, threads = real_db
    mixed = tmp_path / "mixed.sqlite"
    shutil.copy(db, mixed)
    fragment = tmp_path / "fragment.json"
    fragment.write_text(json.dumps({"format": "context-inspector/v1", "threads": [{"id": "fragment", "messages": [
        {"id": "m1", "role": "user", "content": "hello " * 400},
        {"id": "m2", "role": "assistant", "content": "hi " * 300},
        {"id": "m3", "role": "user", "content": "bye " * 300}]}]}), encoding="utf-8")
    assert _run("import", str(fragment), "--db", str(mixed)).exit_code == 0
    key = "claude_code.autocompact_pct_override=0,50"
    rows = json.loads(_run("sweep", "--all", "--db", str(mixed), "--json", "--jobs", "1", "--key", key).stdout)["rows"]
    alone = json.loads(_run("sweep", "--thread", "fragment", "--db", str(mixed), "--json", "--key", key).stdout)["rows"]
    assert [r["cost"] for r in alone] == [None, None]
    priced = [json.loads(_run("sweep", "--thread", t["id"], "--db", db, "--json", "--key", key).stdout)["rows"]
              for t in threads]
    for i, row in enumerate(rows):
        assert row["unpriced_threads"] == 1
        assert row["cost"] == pytest.approx(sum(p[i]["cost"] for p in priced), abs=1e-5)
    text = _run("sweep", "--all", "--db", str(mixed), "--jobs", "1", "--key", key).stdout
    assert "1 thread without a price" in text and "$" in text.splitlines()[1]


def test_a_thread_s_values_in_forked_processes_give_the_rows_of_one_process(real_db):
    """Issue 28 item 3: `sweep_thread(jobs=2)` extracts the facts in forked processes, replays the
    first value here and the rest in forked processes; the rows are those of one process, in order,
    each reported once."""
    from inspector.service import load_config
    from inspector.store import Store
    from inspector.sweep import sweep_thread

    db, threads = real_db
    with Store.open(db) as store:
        thread = store.load_thread(threads[0]["id"])
    base = load_config(None, {}, thread=thread)
    combos = combinations([("claude_code.autocompact_pct_override", [0, 40, 60, 80])])
    seen = []
    alone = sweep_thread(thread, base, combos, jobs=1)
    forked = sweep_thread(thread, base, combos, jobs=2, on_row=seen.append)  # the facts handed back replace these
    assert forked == alone == seen
    assert len({(r.compactions, r.prompt_tokens) for r in alone}) > 1  # the values change the rows


def _bench_like(real_db):
    from inspector.service import load_config
    from inspector.store import Store

    db, threads = real_db
    with Store.open(db) as store:
        thread = store.load_thread(threads[0]["id"])
    return thread, load_config(None, {}, thread=thread)


def test_forked_children_take_sigterm_and_sighup_by_default_and_leave_sigint_to_the_parent(real_db, monkeypatch):
    """A command's own SIGTERM handler (`inspector.cli.root`: end as an error would) must not reach the
    forked sweep children (a Python exit inside a fork of a threaded process can wait forever on a
    lock); SIGINT (a terminal's Ctrl-C reaches the whole group) is the parent's, which kills them."""
    import signal

    from inspector import sweep

    thread, base = _bench_like(real_db)
    combos = combinations([("claude_code.autocompact_pct_override", [0, 40, 60])])
    monkeypatch.setattr(sweep, "_child_row", _child_signals)
    previous = [signal.signal(s, lambda *_a: None) for s in (signal.SIGTERM, signal.SIGHUP)]
    try:
        rows = sweep.sweep_thread(thread, base, combos, jobs=2)
    finally:
        for signum, handler in zip((signal.SIGTERM, signal.SIGHUP), previous, strict=True):
            signal.signal(signum, handler)
    assert rows == [(signal.SIG_DFL, signal.SIG_DFL, signal.SIG_IGN)] * 3


def _child_signals(*_args) -> tuple:
    """What a forked sweep child does with SIGTERM, SIGHUP and SIGINT (in place of its row)."""
    import signal

    return signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP), signal.getsignal(signal.SIGINT)


@pytest.mark.parametrize(("how", "message"), [
    ("raise", "sweep: the value claude_code.autocompact_pct_override=40 failed: ValueError: no row for 40"),
    ("kill", "sweep: the process computing the value claude_code.autocompact_pct_override=40 was killed by SIGKILL"),
    ("exit", "sweep: the process computing the value claude_code.autocompact_pct_override=40 exited with status 3"),
    ("vanish", "sweep: the process computing the value claude_code.autocompact_pct_override=40 ended before it "
               "sent its results"),
])
def test_a_child_that_fails_or_dies_is_a_one_line_error_and_the_others_are_ended(real_db, monkeypatch, tmp_path,
                                                                                  how, message):
    """The child of the value 40 fails (an exception) or dies (a signal, an exit, an exit without its
    row); the other child waits for a signal that never comes: the sweep ends anyway, with an error
    naming the value, and no child is left (each one's pid is gone once the error is raised)."""
    from inspector import sweep

    thread, base = _bench_like(real_db)
    combos = combinations([("claude_code.autocompact_pct_override", [0, 40])])
    monkeypatch.setattr(sweep, "_child_row", _failing_row(how, tmp_path))
    with pytest.raises(sweep.ChildError) as caught:
        sweep.sweep_thread(thread, base, [*combos, {"claude_code.autocompact_pct_override": 60}], jobs=2)
    assert str(caught.value) == message
    _assert_gone(tmp_path)


def test_an_interrupt_while_the_children_run_ends_them(real_db, monkeypatch, tmp_path):
    """SIGINT in the parent (a KeyboardInterrupt out of the wait for the rows) kills the children by pid."""
    from inspector import sweep

    thread, base = _bench_like(real_db)
    combos = combinations([("claude_code.autocompact_pct_override", [0, 40, 60])])
    monkeypatch.setattr(sweep, "_child_row", _failing_row("none", tmp_path))

    def interrupt(_row):
        while len(list(tmp_path.glob("*.pid"))) < 2:  # both children are running (one paused for good)
            pass
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sweep.sweep_thread(thread, base, combos, jobs=2, on_row=interrupt)
    _assert_gone(tmp_path)


def _failing_row(how: str, folder):
    def row(thread, base, combo, *_args):
        import os
        import signal

        value = combo["claude_code.autocompact_pct_override"]
        fd = os.open(folder / f"{os.getpid()}.pid", os.O_WRONLY | os.O_CREAT, 0o600)
        os.close(fd)
        if value == 0:
            return "row of 0"
        if value != 40 or how == "none":
            signal.pause()  # until killed by the parent
        for _ in range(120_000):  # the other child has started its value (else the parent could end it unseen)
            if len(list(folder.glob("*.pid"))) >= 2:
                break
            time.sleep(0.001)
        if how == "raise":
            raise ValueError("no row for 40")
        if how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(3 if how == "exit" else 0)
    return row


def _assert_gone(folder) -> None:
    import os

    pids = [int(p.stem) for p in folder.glob("*.pid")]
    assert len(pids) == 2
    for pid in pids:
        with pytest.raises(ProcessLookupError):  # killed and reaped
            os.kill(pid, 0)


def test_a_thread_s_sweep_on_a_terminal_redraws_one_bar_to_the_last_value(real_db):
    """Issue 28 item 3: on a terminal `sweep --thread` draws its progress as one bar redrawn in place
    (a carriage return before each drawing, no line per value), ending at every value done and then a
    line end (stdout keeps only the rows). The non-terminal case (a line per tenth) is
    `tests/cli/test_fleet.py`'s."""
    import os
    import pty
    import re
    import subprocess
    import sys

    db, threads = real_db
    values = ",".join(str(v) for v in range(0, 100, 10))
    leader, follower = pty.openpty()
    try:
        run = subprocess.run([sys.executable, "-m", "inspector", "sweep", "--thread", threads[0]["id"], "--db", db,
                              "--jobs", "2", "--json", "--key", f"claude_code.autocompact_pct_override={values}"],
                             stdout=subprocess.PIPE, stderr=follower, stdin=subprocess.DEVNULL, timeout=300, check=True)
        os.close(follower)
        follower = -1
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 1 << 16)
            except OSError:  # the terminal's other side is closed: all read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    text = shown.decode()
    drawings = [d for d in text.split("\r") if d.strip()]
    assert drawings and all(d.startswith("sweeping [") for d in drawings), text
    done = [int(m.group(1)) for m in re.finditer(r"(\d+)/10 values", text)]
    assert done == sorted(done) and done[0] == 0 and done[-1] == 10
    assert re.search(r"\[#{30}\] 100%  10/10 values", drawings[-1]) and text.rstrip("\x1b[K").endswith("\n")
    assert text.count("\n") == 1  # the bar's line, ended once
    assert len(json.loads(run.stdout)["rows"]) == 10


def _facts_known(messages) -> list:
    """The facts this process holds for each message (`facts._cache`, what the values' losses read)."""
    from inspector.pipeline import facts

    out = []
    for message in messages:
        entry = facts._cache.get(id(message))
        assert entry is not None and entry[0] is message, message.id
        out.append(entry[1])
    return out


@pytest.mark.parametrize("slow", ["child", "parent"])
def test_the_facts_split_between_the_child_and_this_process_are_every_message_s(real_db, monkeypatch, tmp_path, slow):
    """Issue 28 item 3: the facts child goes from the start, this process (after its first replay) from
    the end, until they meet. Whichever is slow (the child, held after its first chunk until this
    process ends it: this process does all the rest; this process, whose first replay waits until the
    child has sent every fact: the child does all), every message's facts are the extraction's own,
    and the rows are one process's. Ordered by events, not by sleeps of a given length."""
    import os
    import time

    from inspector import service, sweep
    from inspector.pipeline import facts

    thread, base = _bench_like(real_db)
    combos = combinations([("claude_code.autocompact_pct_override", [0, 40, 60, 80])])
    facts.forget()
    alone = sweep.sweep_thread(thread, base, combos, jobs=1)
    expected = [tuple((f, facts.fact_key(f)) for f in facts.message_facts(m)) for m in thread.messages]
    facts.forget()
    parent = os.getpid()
    done_here: list[int] = []
    child_calls: list[int] = []  # the child's own copy after the fork
    keyed = facts.keyed_facts
    replay = service.run_replay
    send = sweep._send
    sent_all = tmp_path / "the child sent every fact"

    def counted(messages):
        if os.getpid() == parent:
            done_here.append(len(messages))
        else:
            if slow == "child" and child_calls:
                time.sleep(120)  # held after its first chunk: this process ends it once it is done (a sweep
                # that waited for it instead would see it resume, and do too little itself)
            child_calls.append(len(messages))
        return keyed(messages)

    def sending(fd, message):
        send(fd, message)
        if os.getpid() != parent and message[0] == "facts" and message[2] == len(thread.messages):
            sent_all.touch()  # its last chunk is in the pipe

    def slow_replay(*args, **kwargs):
        if slow == "parent" and os.getpid() == parent and not done_here:
            stall = time.monotonic() + 300  # a safety net against a hang, not what orders the test
            while not sent_all.exists():
                assert time.monotonic() < stall, "the facts child never sent its last chunk"
                time.sleep(0.01)
        return replay(*args, **kwargs)

    monkeypatch.setattr(sweep, "_send", sending)
    monkeypatch.setattr(facts, "keyed_facts", counted)
    monkeypatch.setattr(service, "run_replay", slow_replay)
    monkeypatch.setattr(sweep, "FACTS_CHUNK", 7)
    try:
        forked = sweep.sweep_thread(thread, base, combos, jobs=2)
        assert _facts_known(thread.messages) == expected
    finally:
        facts.forget()
    assert forked == alone
    here = sum(done_here)
    if slow == "child":
        assert len(thread.messages) - 7 <= here <= len(thread.messages)  # all but what the child sent first
    else:
        assert here == 0


def test_a_facts_child_that_dies_is_a_one_line_error_naming_its_messages(real_db, monkeypatch):
    import os
    import signal

    from inspector import sweep
    from inspector.pipeline import facts

    thread, base = _bench_like(real_db)
    combos = combinations([("claude_code.autocompact_pct_override", [0, 40, 60])])
    parent = os.getpid()
    keyed = facts.keyed_facts

    def dying(messages):
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return keyed(messages)

    monkeypatch.setattr(facts, "keyed_facts", dying)
    with pytest.raises(sweep.ChildError) as caught:
        sweep.sweep_thread(thread, base, combos, jobs=2)
    assert str(caught.value) == (f"sweep: the process computing the facts of messages 0-{len(thread.messages):,} "
                                 "was killed by SIGKILL")


def test_a_ctrl_c_just_as_a_sweep_child_is_forked_leaves_no_child(real_db, monkeypatch):
    """SIGINT right after a fork returns, before this process has noted the child: held until it has
    (`forks.ending_held`), then the sweep ends and every child with it."""
    import os
    import signal
    import threading

    from inspector import sweep

    thread, base = _bench_like(real_db)
    combos = combinations([("claude_code.autocompact_pct_override", [0, 40, 60])])
    from tests.helpers import counted_forks

    def ctrl_c(pids: list[int]) -> None:
        if len(pids) == 1:  # to this thread, as a terminal's Ctrl-C reaches the command's one thread
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    pids = counted_forks(monkeypatch, sweep, ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        sweep.sweep_thread(thread, base, combos, jobs=2)
    assert len(pids) == 1  # nothing forked after the Ctrl-C
    for pid in pids:  # killed and reaped: no such process any more
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
