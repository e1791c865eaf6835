"""Record a small agent thread into a context-inspector database, then inspect it.

    python examples/record_thread.py threads.sqlite
    context-inspector --db threads.sqlite

In a real app, call these where the app talks to its model: append each message as it is
added to the conversation, and record each request with the prompt tokens the provider
reported in its usage block.
"""

from __future__ import annotations

import sys

from inspector.recording import Recorder


def record(db: str) -> str:
    """Record the example thread into `db`; returns the thread id."""
    with Recorder(db) as rec:
        thread = rec.open_thread(
            "Fix the failing login test",
            system_prompt="You are a careful coding agent.",
            tools=[{"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}}],
            window=200_000,
        )
        first = thread.append("user", "The login test fails. Can you look?")
        thread.record_request(prompt_tokens=1_412, model="claude-sonnet-4-5")
        thread.append("assistant", "Let me read the test.",
                      tool_calls=[{"id": "call_1", "name": "read_file", "arguments": {"path": "tests/test_login.py"}}])
        thread.append("tool", "def test_login():\n    assert login('ada', 'pw') is True\n", tool_call_id="call_1")
        thread.record_request(prompt_tokens=1_655, model="claude-sonnet-4-5")
        answer = thread.append("assistant", "The test expects True but login() returns a User. Fix: compare to None.")
        thread.record_summary(
            "The user asked why the login test fails; the agent read it and found a return-type mismatch.",
            first_message_id=first,
            last_message_id=answer,
            accomplishments=["read tests/test_login.py"],
            relevant_files=["tests/test_login.py"],
            active_goals=["make the login test pass"],
        )
        thread.append("user", "Great, please fix it.")
        thread.record_request(prompt_tokens=420, model="claude-sonnet-4-5")
        return thread.thread_id


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else "threads.sqlite"
    print(f"recorded thread {record(target)} into {target}")
