"""NoOpTrainer: the do-nothing baseline every comparison should include.

It evaluates the initial state on the training data for ``num_steps`` iterations and never
changes a parameter, so its curve is the floor a real optimizer must beat.
"""

from __future__ import annotations

from pydantic import Field

from trace_bench.trainers.base import Trainer, TrainerParams


class NoOpParams(TrainerParams):
    num_steps: int = Field(default=1, ge=0)
    batch_size: int = Field(default=1, ge=1)


class NoOpTrainer(Trainer[NoOpParams]):
    Params = NoOpParams
    uses_optimizer = False
    knob_aliases = {"ps_steps": "num_steps"}

    def train(self) -> None:
        params = self.params
        state = self.ctx.current_state()
        loader = self.ctx.loader(batch_size=params.batch_size)
        for _ in range(params.num_steps):
            self.ctx.check_budget()
            inputs, infos = loader.next_batch()
            rollouts = self.ctx.run_batch(state, inputs, infos)
            score, score_dict = self.ctx.score_of(rollouts)
            self.ctx.report_step(state, score, score_dict, accepted=False)
