import json

SAMPLES = [("run.traj", json.dumps({"history": [{"role": "system", "content": "sys"},
                                                {"role": "user", "content": "fix the bug"}]}))]
BAD = [("run.traj", '{"history": [{"role": "user", "content": "fix')]
