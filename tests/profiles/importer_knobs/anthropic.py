import json

SAMPLES = [("conv.json", json.dumps({"system": "Be terse.", "messages": [
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "tu1", "name": "w", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": "3C"}]}]}))]
BAD = [("conv.json", json.dumps({"system": "Be terse.", "messages": [{"role": "user", "content": 7}, None]}))]
