import json

_INFO = {"id": "ses_1", "title": "t"}
_USER = {"info": {"id": "msg_1", "sessionID": "ses_1", "role": "user", "time": {"created": 1_760_000_000_000}},
         "parts": [{"type": "text", "text": "hi"}]}
SAMPLES = [("session.json", json.dumps({"info": _INFO, "messages": [_USER]}))]
BAD = [("session.json", json.dumps({"info": _INFO, "messages": [_USER, "not an object"]}))]
