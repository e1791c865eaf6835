import json

_HISTORY = [{"role": "user", "content": [{"type": "text", "text": "<task>hi</task>"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}]
SAMPLES = [("saoudrizwan.claude-dev/tasks/1733000000000/api_conversation_history.json", json.dumps(_HISTORY))]
BAD = [("saoudrizwan.claude-dev/tasks/1733000000000/api_conversation_history.json",
        json.dumps([*_HISTORY, "not a message", {"role": "narrator", "content": "?"}]))]
