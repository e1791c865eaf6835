import json

_HISTORY = [{"role": "user", "content": [{"type": "text", "text": "<task>hi</task>"}], "ts": 1733000000000},
            {"role": "assistant", "content": [{"type": "text", "text": "hello"}], "ts": 1733000001000}]
SAMPLES = [("rooveterinaryinc.roo-cline/tasks/0b1c/api_conversation_history.json", json.dumps(_HISTORY)),
           ("tasks/0b1d/api_conversation_history.json", json.dumps({"version": 2, "messages": _HISTORY}))]
BAD = [("rooveterinaryinc.roo-cline/tasks/0b1c/api_conversation_history.json",
        json.dumps([*_HISTORY, 7, {"role": "narrator", "content": "?"}]))]
