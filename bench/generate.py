"""Large synthetic threads with size distributions taken from the real fixtures.

Tool outputs are heavy-tailed (log-normal fitted to the Claude Code fixture's tool
results: median ~1.9 KB, 90th percentile ~15 KB, capped at ~100 KB); user messages
median ~90 characters; assistant texts median ~200 characters with a long tail.
Deterministic for a given seed. Usage:

    python -m bench.generate --messages 10000 --out big.json   # native format
"""

from __future__ import annotations

import argparse
import json
import math
import random

from inspector.model import Message, Request, Role, Thread, ToolCall, ToolDef

TOOL_MEDIAN, TOOL_P90, TOOL_CAP = 1_921, 15_145, 100_000
USER_MEDIAN, USER_P90 = 86, 200
ASSISTANT_MEDIAN, ASSISTANT_P90 = 192, 7_195

_Z90 = 1.2816


def _lognormal(rng: random.Random, median: float, p90: float, cap: int) -> int:
    sigma = math.log(p90 / median) / _Z90
    return max(1, min(cap, int(rng.lognormvariate(math.log(median), sigma))))


_VOCAB = ["def", "return", "import", "class", "self", "value", "path", "token", "budget", "request", "cache", "error", "test", "file", "line", "module", "parser", "config", "window", "summary", "tool", "output", "assistant", "user"]


def _text(rng: random.Random, chars: int) -> str:
    words: list[str] = []
    n = 0
    while n < chars:
        w = rng.choice(_VOCAB)
        words.append(w)
        n += len(w) + 1
        if rng.random() < 0.08:
            words.append("\n")
    return " ".join(words)[:chars]


def generate_thread(messages: int = 10_000, *, seed: int = 1, thread_id: str | None = None,
                    window: int = 200_000) -> Thread:
    """About `messages` messages; one request before every assistant message (recorded,
    with a provider-like prompt-token count), so requests ~= messages / 4."""
    rng = random.Random(seed)
    # A pool of texts so that sizes follow the distribution without generating 100 MB of text.
    pool = _text(rng, TOOL_CAP + 10_000)
    msgs: list[Message] = []
    reqs: list[Request] = []
    running = 8_000
    turn = 0
    while len(msgs) < messages:
        turn += 1
        msgs.append(Message(f"u{turn}", Role.USER, pool[: _lognormal(rng, USER_MEDIAN, USER_P90, 20_000)] + f" #{turn}"))
        for step in range(rng.choice((1, 1, 2, 3))):
            if len(msgs) >= messages:
                break
            reqs.append(Request(f"q{len(reqs)}", msgs[-1].id, prompt_tokens=running, model="synthetic"))
            calls = tuple(ToolCall(f"c{turn}-{step}-{k}", rng.choice(("read_file", "grep", "shell")),
                                   {"path": f"src/{rng.choice(_VOCAB)}.py"}) for k in range(rng.choice((2, 2, 3))))
            text = pool[: _lognormal(rng, ASSISTANT_MEDIAN, ASSISTANT_P90, 12_000)]
            msgs.append(Message(f"a{turn}-{step}", Role.ASSISTANT, text, tool_calls=calls))
            for call in calls:
                size = _lognormal(rng, TOOL_MEDIAN, TOOL_P90, TOOL_CAP)
                start = rng.randrange(0, 10_000)
                msgs.append(Message(f"r-{call.id}", Role.TOOL, pool[start:start + size] + f" [{call.id}]",
                                    tool_call_id=call.id))
                running += size // 4
            if running > window * 0.8:
                running = int(running * 0.3)
    return Thread(
        id=thread_id or f"synthetic-{messages}-{seed}",
        title=f"Synthetic session ({len(msgs)} messages, seed {seed})",
        source="synthetic",
        system_prompt="You are a coding agent. " + pool[:6_000],
        tools=(ToolDef("read_file", "Read a file", {"type": "object"}), ToolDef("grep", "Search", {"type": "object"}),
               ToolDef("shell", "Run a command", {"type": "object"})),
        messages=tuple(msgs),
        requests=tuple(reqs),
        window=window,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    from inspector.importers.native import export_native

    thread = generate_thread(args.messages, seed=args.seed)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(export_native([thread]), fh)
    print(f"{args.out}: {len(thread.messages)} messages, {len(thread.requests)} requests")


if __name__ == "__main__":
    main()
