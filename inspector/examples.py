"""Deterministic example threads: the seeds' worked examples as data.

Used by the demo database, the tests and the benchmarks. Pure: no I/O.
"""

from __future__ import annotations

import random
from functools import cache

from inspector.model import Kind, Message, Request, Role, Thread, ToolCall, ToolDef

WALKTHROUGH_ID = "demo-iris-walkthrough"
ROLEPLAY_ID = "demo-shifting-roleplay"
HARNESS_ID = "demo-harness-examples"
OVERFLOW_ID = "demo-iris-overflow"

_WORDS = ["parser", "token", "budget", "module", "handler", "request", "session", "cache", "index", "query", "loader", "config", "worker", "schema", "router", "render", "buffer", "stream", "client", "server", "event", "retry", "policy", "layout"]


def _code(rng: random.Random, path: str, lines: int) -> str:
    out = [f"# {path}"]
    for n in range(lines):
        a, b, c = rng.choice(_WORDS), rng.choice(_WORDS), rng.choice(_WORDS)
        out.append(f"def {a}_{b}_{n}({c}: int) -> int:  # {rng.choice(_WORDS)} {rng.choice(_WORDS)}")
        out.append(f"    return {c} * {rng.randint(2, 97)} + len('{a}{b}')")
    return "\n".join(out)


def _text_of_tokens(rng: random.Random, path: str, tokens: int) -> str:
    """About `tokens` chars/4-tokens of code-looking text (exactly 4 * tokens characters)."""
    text = _code(rng, path, max(1, tokens // 18))
    chars = 4 * tokens
    while len(text) < chars:
        text += "\n" + _code(rng, path, 20)
    return text[:chars]


WALKTHROUGH_TOOLS = (
    ToolDef("read_file", "Read a file from the workspace and return its contents.",
            {"type": "object", "properties": {"path": {"type": "string", "description": "Path relative to the repo"}},
             "required": ["path"]}),
    ToolDef("grep", "Search the workspace with a regular expression.",
            {"type": "object", "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
             "required": ["pattern"]}),
    ToolDef("shell", "Run a shell command in the workspace and return stdout and stderr.",
            {"type": "object", "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}},
             "required": ["command"]}),
)

_GOALS = [
    "Give me an overview of the repository layout.",
    "Where is the request parser defined?",
    "Show me how the cache layer is wired into the router.",
    "Run the unit tests and tell me what fails.",
    "Explain the session module's retry policy.",
    "Read the whole loader package; I want to refactor it.",
    "Grep for every use of the legacy config object.",
    "Read src/loader/stream.py and src/loader/buffer.py.",
    "What does the worker pool do on shutdown?",
    "Find all the places that build a Request by hand.",
    "Read the schema module and its tests.",
    "How is the render pipeline ordered?",
    "This module is confusing. Read src/router/policy.py again and explain it slowly.",
    "Run the integration tests for the loader.",
    "Read the event bus and list its subscribers.",
    "Compare the two client implementations.",
    "Where do we parse the token budget from the config?",
    "Read the index builder and the query planner.",
    "Plan the refactoring of the loader into smaller modules.",
    "Start with src/loader/stream.py: split the buffer handling out.",
    "Good. Now move the retry policy into its own module, keeping the public API stable.",
    "Run the tests again and summarize what changed.",
]


# Provider-reported prompt tokens of the walkthrough's requests (turn N: "req-NNa" after the user's message,
# "req-NNb" after the turn's tool outputs). The seed gives one: the last request before turn 21 reports
# 158K, over the 150K threshold (200K x 0.75). The others are what the replay sends (iris defaults, chars4)
# times the same factor, 158,000 / the replayed 120,761 = 1.31: the provider's tokenizer counts this
# code-heavy thread at about 1.3 tokens per chars/4 token. So every request reads "replayed vs recorded" at
# the same ratio, and only the request the seed names crosses the threshold (tests/tui/test_app_screens.py).
WALKTHROUGH_RECORDED: dict[str, int] = {
    "req-01a": 12_805, "req-01b": 14_009, "req-02a": 14_020, "req-02b": 15_223,
    "req-03a": 14_072, "req-03b": 15_275, "req-04a": 14_120, "req-04b": 15_322,
    "req-05a": 14_167, "req-05b": 15_371, "req-06a": 14_219, "req-06b": 43_043,
    "req-07a": 41_889, "req-07b": 70_713, "req-08a": 41_962, "req-08b": 70_787,
    "req-09a": 42_033, "req-09b": 70_857, "req-10a": 42_106, "req-10b": 70_929,
    "req-11a": 42_174, "req-11b": 70_997, "req-12a": 42_241, "req-12b": 71_064,
    "req-13a": 42_322, "req-13b": 71_145, "req-14a": 42_391, "req-14b": 71_215,
    "req-15a": 42_461, "req-15b": 71_285, "req-16a": 42_530, "req-16b": 71_353,
    "req-17a": 42_602, "req-17b": 71_425, "req-18a": 42_672, "req-18b": 71_497,
    "req-19a": 42_747, "req-19b": 114_747, "req-20a": 85_999, "req-20b": 158_000,
    "req-21a": 85_269, "req-21b": 86_473, "req-22a": 14_544, "req-22b": 15_748,
}


@cache  # frozen data, built once a process (the demo's code text takes ~0.1 s)
def walkthrough_thread() -> Thread:
    """The Iris walkthrough: 200K window, ~10K system + tools, tool-heavy turns 6-20,
    the last request before turn 21 reporting 158K prompt tokens -> compaction before
    turn 21 covering turns 1-18 (DESIGN.md semantics, iris defaults)."""
    rng = random.Random(21)
    system_prompt = "You are Iris, a careful coding assistant working in a Python monorepo.\n" + _text_of_tokens(
        rng, "system-guidelines", 9_580
    )
    messages: list[Message] = []
    requests: list[Request] = []
    first = {t: WALKTHROUGH_RECORDED[f"req-{t:02d}a"] for t in range(1, 23)}
    second = {t: WALKTHROUGH_RECORDED[f"req-{t:02d}b"] for t in range(1, 23)}
    for turn in range(1, 23):
        uid = f"t{turn:02d}-user"
        messages.append(Message(uid, Role.USER, _GOALS[turn - 1], created_at=f"2026-11-02T10:{turn:02d}:00Z"))
        requests.append(Request(f"req-{turn:02d}a", uid, prompt_tokens=first[turn], model="claude-sonnet-4-5"))
        heavy = 6 <= turn <= 20
        calls = []
        n_calls = 2 if heavy else 1
        for c in range(n_calls):
            path = f"src/{rng.choice(['loader', 'router', 'session', 'cache', 'schema'])}/{rng.choice(_WORDS)}.py"
            if c == 1 and turn % 3 == 0:
                calls.append(ToolCall(f"t{turn:02d}-call{c}", "grep", {"pattern": rng.choice(_WORDS), "path": "src"}))
            else:
                calls.append(ToolCall(f"t{turn:02d}-call{c}", "read_file", {"path": path}))
        messages.append(Message(
            f"t{turn:02d}-assistant", Role.ASSISTANT,
            f"Let me look at that ({len(calls)} tool call{'s' if len(calls) > 1 else ''}).",
            tool_calls=tuple(calls),
        ))
        for call in calls:
            # Turns 19 and 20 read the loader package whole: the two protected turns carry the prompt
            # up to the seed's 158K (as the provider counts it) with everything older pruned.
            size = (27_500 if turn >= 19 else 11_000) if heavy else 900
            label = call.arguments.get("path", "src")
            messages.append(Message(
                f"{call.id}-result", Role.TOOL, _text_of_tokens(rng, label, size), tool_call_id=call.id, name=call.name
            ))
        requests.append(Request(
            f"req-{turn:02d}b", messages[-1].id, prompt_tokens=second[turn], model="claude-sonnet-4-5"
        ))
    return Thread(
        id=WALKTHROUGH_ID,
        title="Iris walkthrough: a long tool-heavy session",
        source="demo",
        system_prompt=system_prompt,
        tools=WALKTHROUGH_TOOLS,
        messages=tuple(messages),
        requests=tuple(requests),
        window=200_000,
    )


@cache  # frozen data, built once a process (the demo's code text takes ~0.1 s)
def roleplay_thread() -> Thread:
    """A role-play chat for the shifting profile: a character card, lorebook entries of
    different relevance (one required), a memory, pinned and manually excluded messages,
    and a parallel tool call whose results are not adjacent."""
    rng = random.Random(7)
    lines = [
        "The rain had not stopped for three days in Port Veyra.",
        "Captain Mara Quell checked the harbour charts by lamplight.",
        "Somewhere below deck, the brass compass hummed again.",
        "The lighthouse keeper swore the tide was running backwards.",
        "Smugglers had been seen near the old customs house.",
        "A letter sealed in green wax arrived without a sender.",
    ]

    def prose(n: int) -> str:
        return " ".join(rng.choice(lines) for _ in range(n))

    msgs: list[Message] = [
        Message("sys-rules", Role.SYSTEM, "Stay in character. Never reveal the compass's origin before chapter three."),
        Message("char-mara", Role.SYSTEM, "Character: Mara Quell, 41, harbour captain. Dry humour, loyal to her crew, "
                "distrusts the Guild. " + prose(6), kind=Kind.CHARACTER),
        Message("lore-compass", Role.SYSTEM, "Lorebook: the brass compass points to whatever its holder fears losing. "
                + prose(4), kind=Kind.LOREBOOK, required=True, relevance=0.95),
        Message("lore-guild", Role.SYSTEM, "Lorebook: the Cartographers' Guild controls every chart of the Veyran "
                "coast. " + prose(5), kind=Kind.LOREBOOK, relevance=0.6),
        Message("lore-weather", Role.SYSTEM, "Lorebook: storms in Port Veyra follow the tide tables. " + prose(5),
                kind=Kind.LOREBOOK, relevance=0.15),
        Message("mem-ferry", Role.SYSTEM, "Memory: the user's character, Ilan, once lost a ferry to the Guild. "
                + prose(3), kind=Kind.MEMORY, relevance=0.4),
    ]
    story = [
        ("u1", "I step off the ferry and ask for Captain Quell.", {}),
        ("a1", "Mara looks up from the charts. 'You found me. Most people don't.' " + prose(5), {}),
        ("u2", "I show her the letter sealed in green wax.", {"pinned": True}),
        ("a2", "'Green wax. That's Guild business.' " + prose(6), {}),
        ("u3", "(OOC: ignore this, typo in my last message)", {"meta": {"manualExcluded": True}}),
        ("a3", "(OOC: no problem.)", {"meta": {"manualExcluded": True}}),
        ("u4", "Let's check the tide tables and the harbour log at the same time.", {}),
    ]
    for mid, text, extra in story:
        role = Role.USER if mid.startswith("u") else Role.ASSISTANT
        msgs.append(Message(mid, role, text, pinned=extra.get("pinned", False), meta=extra.get("meta", {})))
    msgs.append(Message("a4", Role.ASSISTANT, "Mara pulls two ledgers at once.", tool_calls=(
        ToolCall("call-tide", "lookup", {"table": "tides", "day": 3}),
        ToolCall("call-log", "lookup", {"table": "harbour_log", "day": 3}),
    )))
    msgs.append(Message("r-tide", Role.TOOL, "Tides: high water 04:12 and 16:40; the 16:40 tide ran 40 minutes late. "
                        + prose(8), tool_call_id="call-tide"))
    msgs.append(Message("a4b", Role.ASSISTANT, "'The tide table first. Hm.' " + prose(3)))
    msgs.append(Message("r-log", Role.TOOL, "Harbour log: a Guild cutter moored at the customs house at 23:00. "
                        + prose(8), tool_call_id="call-log"))
    for n in range(5, 15):
        msgs.append(Message(f"u{n}", Role.USER, f"(Scene {n}) " + prose(3)))
        msgs.append(Message(f"a{n}", Role.ASSISTANT, prose(9)))
    msgs.append(Message("u15", Role.USER, "I ask Mara what the compass is pointing at now."))
    return Thread(
        id=ROLEPLAY_ID,
        title="Port Veyra: role-play with a character card and lorebook",
        source="demo",
        system_prompt="You are the narrator of an interactive story.",
        tools=(ToolDef("lookup", "Look up a table in the harbour archive.",
                       {"type": "object", "properties": {"table": {"type": "string"}, "day": {"type": "integer"}}}),),
        messages=tuple(msgs),
        window=2_048,
        meta={"replay_profile": "shifting"},  # opens under the profile it was built for
    )


@cache  # frozen data, built once a process (the demo's code text takes ~0.1 s)
def harness_thread() -> Thread:
    """The harness chapter's conversation: a correction planted in the middle that a
    lossy compaction drops, then a protected tail."""
    msgs = (
        Message("h-sys", Role.SYSTEM, "system contract"),
        Message("h-u1", Role.USER, "Inspect parser.py."),
        Message("h-a1", Role.ASSISTANT, "I found a tokenization edge case."),
        Message("h-t1", Role.TOOL, "pytest: 1 failed", tool_call_id="call-1"),
        Message("h-u2", Role.USER, "Correction: never edit the test fixtures."),
        Message("h-a2", Role.ASSISTANT, "I will keep that correction in mind."),
        Message("h-t2", Role.TOOL, "The failing test is test_parser.py::test_fixture.", tool_call_id="call-2"),
        Message("h-u3", Role.USER, "Please fix only the parser."),
        Message("h-a3", Role.ASSISTANT, "I will preserve the public API."),
        Message("h-u4", Role.USER, "Continue with the smallest safe change."),
    )
    reqs = (
        Request("h-r1", "h-u1", prompt_tokens=40),
        Request("h-r2", "h-t1", prompt_tokens=120),
        Request("h-r3", "h-u2", prompt_tokens=170),
        Request("h-r4", "h-t2", prompt_tokens=185),
        Request("h-r5", "h-u3", prompt_tokens=150),
        Request("h-r6", "h-u4", prompt_tokens=160),
    )
    return Thread(
        id=HARNESS_ID,
        title="Agent harness: pruning, [Context Summary] and a planted correction",
        source="demo",
        messages=msgs,
        requests=reqs,
        window=200,
        meta={"replay_profile": "harness"},  # opens under the profile it was built for
    )


@cache  # frozen data, built once a process (the demo's code text takes ~0.1 s)
def overflow_thread() -> Thread:
    """A session whose last turn carries one tool output larger than the whole budget:
    fallback N -> 1 -> 0 and then TOKEN_BUDGET_EXCEEDED."""
    rng = random.Random(3)
    msgs: list[Message] = []
    reqs: list[Request] = []
    for turn in range(1, 5):
        msgs.append(Message(f"o{turn}-user", Role.USER, f"Step {turn}: read the next log file."))
        msgs.append(Message(f"o{turn}-assistant", Role.ASSISTANT, "Reading it.",
                            tool_calls=(ToolCall(f"o{turn}-call", "read_file", {"path": f"logs/{turn}.log"}),)))
        size = 3_000 if turn < 4 else 30_000
        msgs.append(Message(f"o{turn}-result", Role.TOOL, _text_of_tokens(rng, f"logs/{turn}.log", size),
                            tool_call_id=f"o{turn}-call"))
        msgs.append(Message(f"o{turn}-answer", Role.ASSISTANT, f"Log {turn} read. " + _text_of_tokens(
            rng, "answer", 200)))
    # The user pastes a log larger than the whole history budget: nothing can make it fit.
    msgs.append(Message("o5-user", Role.USER, "Here is the full crash dump:\n" + _text_of_tokens(
        rng, "crash.dump", 25_000)))
    return Thread(
        id=OVERFLOW_ID,
        title="Overflow: a 30K-token tool output, then a 25K-token paste, in a 32K window",
        source="demo",
        system_prompt="You are a log analyst.",
        tools=WALKTHROUGH_TOOLS[:1],
        messages=tuple(msgs),
        requests=tuple(reqs),
        window=32_000,
    )


def demo_threads() -> list[Thread]:
    return [walkthrough_thread(), roleplay_thread(), harness_thread(), overflow_thread()]
