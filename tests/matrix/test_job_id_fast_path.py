"""Job ids are persistent identities (a resume finds a job by its id): the per-arm encoding the
matrix uses must give exactly the ids of the one-job definition."""

from __future__ import annotations

import random

from trace_bench.matrix.identity import arm_job_ids, job_id


def test_the_per_arm_encoding_gives_the_same_ids() -> None:
    rng = random.Random(7)
    values = [None, 0, -3, 2.5, "x", "é ü", True, [1, "a"], {"z": 1, "a": {"m": None}}]
    for _ in range(300):
        arm = {"task": rng.choice(["internal:numeric_param", "hf:gsm8k", "a:\"quoted\""]),
               "eval_kwargs": {f"k{i}": rng.choice(values) for i in range(rng.randrange(4))},
               "trainer": rng.choice(["PrioritySearch", "GEPA-Base"]),
               "trainer_kwargs": {f"t{i}": rng.choice(values) for i in range(rng.randrange(5))},
               "optimizer": rng.choice([None, "OptoPrime", "TextGrad"]),
               "optimizer_kwargs": {f"o{i}": rng.choice(values) for i in range(rng.randrange(3))},
               "llm": rng.choice([{"mode": "stub"}, {"mode": "real", "model": "gpt-4o", "roles": {}}])}
        seed = rng.choice([0, 1, 123, -5, 2**40])
        assert arm_job_ids(**arm)(seed) == job_id(**arm, seed=seed)
