"""Regenerate the bundled example rows (deterministic): python examples/make_examples.py

graded.jsonl: 48 held-out tasks x 4 rollouts of Qwen/Qwen3-8B, true pass rates in six bands.
teacher.jsonl: Qwen/Qwen3-32B on the same tasks, each band 0.1 higher (capped at 1).
"""

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    rng = random.Random(20261129)
    student, teacher = [], []
    for i in range(48):
        p = [0.0, 0.15, 0.4, 0.6, 0.85, 1.0][i % 6]
        q = min(1.0, p + 0.1)
        for j in range(4):
            student.append({"task_id": f"refund-{i:03d}", "reward": 1.0 if rng.random() < p else 0.0,
                            "truncated": False, "model": "Qwen/Qwen3-8B", "rollout": j})
            teacher.append({"task_id": f"refund-{i:03d}", "reward": 1.0 if rng.random() < q else 0.0,
                            "truncated": False, "model": "Qwen/Qwen3-32B", "rollout": j})
    for name, rows in (("graded.jsonl", student), ("teacher.jsonl", teacher)):
        with open(HERE / name, "w") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)


if __name__ == "__main__":
    main()
