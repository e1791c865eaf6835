import json

_START = {"type": "session.start", "id": "e1", "timestamp": "2026-11-30T10:00:00Z", "parentId": None,
          "data": {"sessionId": "s-1", "version": 1, "producer": "copilot-agent", "copilotVersion": "1.0.64"}}
_USER = {"type": "user.message", "id": "e2", "timestamp": "2026-11-30T10:00:01Z", "parentId": "e1",
         "data": {"content": "hi"}}
SAMPLES = [("events.jsonl", "\n".join(json.dumps(e) for e in (_START, _USER)) + "\n")]
BAD = [("events.jsonl", "\n".join((json.dumps(_START), "{broken", json.dumps(_USER))) + "\n")]
