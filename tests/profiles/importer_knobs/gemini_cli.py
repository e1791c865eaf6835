import json

_META = {"sessionId": "s-1", "projectHash": "abc", "startTime": "2026-01-01T00:00:00Z"}
_USER = {"id": "u1", "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": [{"text": "hi"}]}
SAMPLES = [("session-2026-01-01T00-00-s1.jsonl", "\n".join(json.dumps(r) for r in (_META, _USER)) + "\n")]
BAD = [("session-2026-01-01T00-00-s1.jsonl", "\n".join((json.dumps(_META), "{not json", json.dumps(_USER))) + "\n")]
