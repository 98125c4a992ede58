"""A small fake of OpenTrace's ``opto.trainer`` for tests, installed into a temp dir.

``install(root)`` writes ``root/opto``: a package whose ``__path__`` also holds the real (installed
``trace-opt``) ``opto`` directory, so ``opto.trace`` and ``opto.optimizers`` are the real ones while
``opto.trainer`` is this fake.  Put ``root`` first on ``PYTHONPATH`` (or ``sys.path``).  The fake
follows OpenTrace's boundary: ``algorithms/__init__.py`` exports the classes, trainers take
``(agent, optimizer, logger=...)``, check the guide's type, log ``Algo/Average train score`` once per
iteration and update parameters through the optimizer.  It prints what it was given, for assertions.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

FILES = {
    "trainer/__init__.py": "",
    "trainer/guide.py": '''
        class Guide:
            def __call__(self, task, response, info, **kwargs):
                return self.get_feedback(task, response, info, **kwargs)

            def get_feedback(self, query, response, reference=None, **kwargs):
                raise NotImplementedError
    ''',
    "trainer/loggers.py": '''
        class BaseLogger:
            def __init__(self, log_dir="./logs", **kwargs):
                self.log_dir = log_dir

            def log(self, name, data, step, **kwargs):
                raise NotImplementedError
    ''',
    "trainer/objectives.py": '''
        from dataclasses import dataclass, field

        @dataclass(frozen=True)
        class ObjectiveConfig:
            mode: str = "scalar"
            weights: dict = field(default_factory=dict)
            minimize: frozenset = frozenset()
            seed: int = 0
    ''',
    "trainer/algorithms/__init__.py": '''
        from opto.trainer.algorithms.algorithm import Trainer
        from opto.trainer.algorithms.toy import ToySearch, PrioritySearch, KnobsFirst
        LegacyName = ToySearch
    ''',
    "trainer/algorithms/algorithm.py": '''
        from opto.trace.modules import Module

        class AbstractAlgorithm:
            def __init__(self, agent, *args, **kwargs):
                self.agent = agent

        class Trainer(AbstractAlgorithm):
            def __init__(self, agent, num_threads=None, logger=None, *args, **kwargs):
                assert isinstance(agent, Module), "Agent must be a trace Module"
                super().__init__(agent)
                self.num_threads = num_threads
                self.logger = logger
    ''',
    "trainer/algorithms/toy.py": '''
        from opto.trainer.algorithms.algorithm import Trainer
        from opto.trainer.guide import Guide

        class ToySearch(Trainer):
            """One proposal per step on a rotating example."""

            def __init__(self, agent, optimizer, num_threads=None, logger=None, *args, patience: int = 3, **kwargs):
                super().__init__(agent, num_threads=num_threads, logger=logger)
                self.optimizer = optimizer
                self.patience = patience

            def train(self, guide, train_dataset, *, validate_dataset=None, num_steps: int = 2, batch_size: int = 1,
                      num_threads=None, verbose=False, test_frequency=1, log_frequency=None, objective_config=None,
                      **kwargs):
                if not isinstance(guide, Guide):
                    raise TypeError("guide must be a Guide.")
                print(f"FAKE-TRAIN validate={validate_dataset is not None} test_frequency={test_frequency} "
                      f"log_frequency={log_frequency} patience={self.patience} num_steps={num_steps} "
                      f"epsilon={getattr(self, 'epsilon', None)} "
                      f"optimizer={type(self.optimizer).__name__} objective={getattr(objective_config, 'mode', None)} "
                      f"extra={sorted(kwargs)}", flush=True)
                inputs, infos = train_dataset["inputs"], train_dataset["infos"]
                for step in range(num_steps):
                    x, info = inputs[step % len(inputs)], infos[step % len(infos)]
                    output = self.agent(x)
                    score, feedback = guide(x, output.data, info)
                    self.optimizer.zero_feedback()
                    self.optimizer.backward(output, feedback)
                    self.optimizer.step()
                    self.logger.log("Algo/Average train score", score, step)
                    self.logger.log("Sample/mean_score", score, step)

        class PrioritySearch(ToySearch):
            """Same name as trace-bench's own PrioritySearch: reachable only as opto:PrioritySearch."""

        class KnobsFirst(ToySearch):
            """Like OpenTrace's POLCA: its own knobs come first, everything else goes to the base."""

            def __init__(self, epsilon: float = 0.1, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.epsilon = epsilon
    ''',
}


def install(root: Path) -> Path:
    """Write the fake under ``root`` and return ``root`` (to put first on the import path)."""
    spec = importlib.util.find_spec("opto")
    assert spec is not None and spec.submodule_search_locations, "the real opto must be installed"
    real = list(spec.submodule_search_locations)[0]
    package = root / "opto"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(
        f"import os as _os\n__path__.append({real!r})\n"
        f"exec(compile(open(_os.path.join({real!r}, '__init__.py')).read(), 'opto/__init__.py', 'exec'))\n")
    for relative, text in FILES.items():
        path = package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root
