"""RandomSearch: random restarts of the initial state's numbers (no LLM).

Every candidate draws each dimension of the task's numeric space (:mod:`.space`) independently and
uniformly (log-uniformly on a log scale, uniformly over the integers for an int), seeded by the job's
seed, and is scored like any proposal.  The floor an LLM optimizer of numbers must beat.
"""

from __future__ import annotations

import math

from pydantic import Field

from trace_bench.trainers.base import Trainer
from trace_bench.trainers.baselines.loop import (
    BaselineParams,
    Best,
    candidate_limit,
    task_space,
    try_candidate,
)
from trace_bench.trainers.baselines.space import Dimension, apply_values


class RandomSearchParams(BaselineParams):
    scale: float = Field(default=10.0, gt=0, description="each number's range: initial ± scale × max(|initial|, 1)")


class RandomSearch(Trainer[RandomSearchParams]):
    Params = RandomSearchParams
    uses_optimizer = False

    def draw(self, dimension: Dimension) -> float:
        rng = self.ctx.rng
        if dimension.integer:
            return float(rng.randint(int(dimension.low), int(dimension.high)))
        if dimension.log:
            return math.exp(rng.uniform(math.log(dimension.low), math.log(dimension.high)))
        return rng.uniform(dimension.low, dimension.high)

    def train(self) -> None:
        dimensions = task_space(self.ctx, self.params.scale)
        initial = self.ctx.current_state()
        limit = candidate_limit(self.ctx, self.params.samples)
        best, tried = Best(), 0
        while limit is None or tried < limit:
            self.ctx.check_budget()
            values = [self.draw(d) for d in dimensions]
            try_candidate(self.ctx, apply_values(initial, dimensions, values), best)
            tried += 1
