import json

from tests.profiles.importer_knobs import jsonl

SAMPLES = [("chat.jsonl", jsonl({"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"})),
           ("chat.json", json.dumps({"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]}))]
BAD = [("chat.jsonl", jsonl({"role": "user", "content": "hi"}, "{broken", {"role": "assistant", "content": "ok"}))]
