"""A real HTTP server on 127.0.0.1 that speaks the Messages API and count_tokens shapes.

Runs in a thread; each test scripts what the next responses are and reads back what
was requested. Unscripted calls get a well-formed default answer:
- `POST /v1/messages`: a forced `record_summary` tool call with a valid summary;
- `POST /v1/messages/count_tokens`: `FAKE_OVERHEAD` plus one token per word or
  punctuation mark of every text block and the system prompt (see `fake_token_count`).
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAKE_OVERHEAD = 5
_TOKEN_RE = re.compile(r"\w+|[^\w\s]")

VALID_SUMMARY_INPUT: dict[str, Any] = {
    "summary": (
        "Continuing from the earlier setup work, the user and the assistant reviewed the failing "
        "import path and agreed to switch the parser to streaming mode."
    ),
    "accomplishments": ["Fixed the import path in src/app.py"],
    "key_decisions": ["Use streaming parsing"],
    "relevant_files": ["src/app.py", "README.md"],
    "active_goals": ["Finish the parser refactor"],
    "emotional_thread": "Frustration early on, relief once the fix landed.",
    "relationship_dynamics": "Collaborative and informal.",
    "evolving_themes": ["Performance"],
    "emotional_markers": [{"moment": "Relief when the tests passed", "intensity": 0.6}],
    "unresolved_threads": ["Benchmark the parser"],
    "resolved_threads": ["Import path"],
    "key_facts": ["The project uses Python 3.11"],
}


def fake_token_count(body: dict[str, Any]) -> int:
    """The fake server's count for a count_tokens request body."""
    texts: list[str] = []
    system = body.get("system")
    if isinstance(system, str):
        texts.append(system)
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(block.get("text", "") for block in content if isinstance(block, dict))
    return FAKE_OVERHEAD + sum(len(_TOKEN_RE.findall(t)) for t in texts)


def message_response(tool_input: Any, *, input_tokens: int = 1200, output_tokens: int = 350,
                     model: str = "claude-sonnet-4-6") -> dict[str, Any]:
    """A Messages API response whose only content block is a `record_summary` tool call."""
    return {
        "id": "msg_fake_01",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "tool_use", "id": "toolu_fake_01", "name": "record_summary", "input": tool_input}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


@dataclass
class Scripted:
    """One scripted reply: status, JSON body, extra headers, and a delay before answering."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeAnthropic:
    """Start with `with FakeAnthropic() as fake:`; point the SDK at `fake.base_url`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scripts: dict[str, deque[Scripted]] = {"/v1/messages": deque(), "/v1/messages/count_tokens": deque()}
        self.requests: list[Recorded] = []
        self.replies_sent = 0
        """Replies this server began to write (a delayed one counts once its delay is over)."""
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-anthropic", daemon=True
        )

    # -- lifecycle -----------------------------------------------------------------------
    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # -- scripting -----------------------------------------------------------------------
    def script(self, path: str, *replies: Scripted) -> None:
        with self._lock:
            self._scripts[path].extend(replies)

    def script_messages(self, *replies: Scripted) -> None:
        self.script("/v1/messages", *replies)

    def script_count_tokens(self, *replies: Scripted) -> None:
        self.script("/v1/messages/count_tokens", *replies)

    def requests_to(self, path: str) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    @property
    def message_requests(self) -> list[Recorded]:
        return self.requests_to("/v1/messages")

    @property
    def count_requests(self) -> list[Recorded]:
        return self.requests_to("/v1/messages/count_tokens")

    # -- serving -------------------------------------------------------------------------
    def _reply_for(self, path: str, body: Any) -> Scripted:
        with self._lock:
            queue = self._scripts.get(path)
            if queue:
                return queue.popleft()
        if path == "/v1/messages/count_tokens":
            return Scripted(body={"input_tokens": fake_token_count(body if isinstance(body, dict) else {})})
        if path == "/v1/messages":
            return Scripted(body=message_response(VALID_SUMMARY_INPUT))
        return Scripted(status=404, body=error_body("not_found_error", f"no route {path}"))

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in two writes

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
                return

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                path = self.path.split("?", 1)[0]
                with fake._lock:
                    fake.requests.append(Recorded("POST", path, {k.lower(): v for k, v in self.headers.items()}, body))
                reply = fake._reply_for(path, body)
                if reply.delay and fake._stopping.wait(reply.delay):
                    return
                payload = json.dumps(reply.body).encode()
                with fake._lock:
                    fake.replies_sent += 1
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.send_header("request-id", f"req_fake_{len(fake.requests)}")
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        return Handler


TEST_KEY = "sk-ant-api03-TESTKEY-4c1f9e0b7d2a-never-on-disk"


def point_sdk_at(monkeypatch: Any, fake: FakeAnthropic, key: str | None = TEST_KEY) -> None:
    """The SDK's standard environment, aimed at `fake`: ANTHROPIC_BASE_URL and (optionally) the key."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    if key is None:
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    else:
        monkeypatch.setenv("ANTHROPIC_API_KEY", key)
