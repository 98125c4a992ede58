"""Fake OpenAI-compatible servers that remember what they were asked (built on the shipped one).

``RecordingServer`` keeps the ``model`` of every completed request, so a test can check which
model each role reached.  ``HoldingServer`` holds its first requests until ``bound`` of them are in
flight together: a concurrency bound is then shown to be *reached*, not merely not exceeded.
"""

from __future__ import annotations

import threading
from typing import Any

from tests.waiting import PATIENCE_S
from trace_bench.llm.fake_server import FakeLLMServer


class RecordingServer(FakeLLMServer):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.models: list[str] = []

    def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.models.append(str(body.get("model")))
        return super()._completion(body)


class HoldingServer(FakeLLMServer):
    """The first ``bound`` requests wait for each other (a barrier); a concurrency that never
    reaches ``bound`` leaves them waiting until ``PATIENCE_S`` and the barrier breaks."""

    def __init__(self, bound: int, **options: Any) -> None:
        super().__init__(**options)
        self.bound = bound
        self._barrier = threading.Barrier(bound)
        self._arrived = 0
        self.barrier_broken = False

    def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            held = self._arrived < self.bound
            self._arrived += 1
        if held:
            try:
                self._barrier.wait(timeout=PATIENCE_S)
            except threading.BrokenBarrierError:
                self.barrier_broken = True
        return super()._completion(body)
