"""PrioritySearch memory: a max-heap of candidates keyed by the priority they had when pushed.

Two details follow the original on purpose.  A size limit truncates the heap *array* (a prefix of
a heap is a heap), which keeps roughly, not strictly, the best entries.  Ties go to the newer
candidate.  In Pareto mode a pop looks at the top 20 entries by priority and takes, from their
Pareto front over mean score dicts, the one with the highest priority.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator, Sequence

from trace_bench.trainers.objectives import ObjectiveConfig, pareto_front
from trace_bench.trainers.opto_search.candidates import Candidate

PARETO_WINDOW = 20

Entry = tuple[float, int, int, Candidate]
"""(-priority, -created, push order, candidate): heapq pops the smallest."""


class HeapMemory:
    def __init__(self, size: int | None = None) -> None:
        self.size = size
        self.heap: list[Entry] = []
        self._order = itertools.count()

    def __len__(self) -> int:
        return len(self.heap)

    def __iter__(self) -> Iterator[Candidate]:
        return (entry[3] for entry in self.heap)

    def push(self, candidate: Candidate, priority: float) -> None:
        heapq.heappush(self.heap, (-priority, -candidate.created, next(self._order), candidate))

    def truncate(self) -> None:
        if self.size is not None and len(self.heap) > self.size:
            del self.heap[self.size:]

    def remove(self, candidate: Candidate) -> bool:
        for index, entry in enumerate(self.heap):
            if entry[3] is candidate:
                self.heap[index] = self.heap[-1]
                self.heap.pop()
                heapq.heapify(self.heap)
                return True
        return False

    def drain(self) -> list[Candidate]:
        candidates = [entry[3] for entry in self.heap]
        self.heap = []
        return candidates


def pop_best(memories: Sequence[HeapMemory], objective: ObjectiveConfig | None) -> Candidate | None:
    """Pop the highest-priority candidate across ``memories`` (Pareto-aware in pareto mode)."""
    pairs = [(entry, memory) for memory in memories for entry in memory.heap]
    if not pairs:
        return None
    pairs.sort(key=lambda pair: pair[0][:3])
    if objective is not None and objective.mode == "pareto":
        # unevaluated candidates carry the maximal priority and count as non-dominated
        window = pairs[:PARETO_WINDOW]
        scored = [(entry, memory) for entry, memory in window if entry[3].score_dicts]
        fresh = [(entry, memory) for entry, memory in window if not entry[3].score_dicts]
        front = pareto_front([entry[3].stats()[1] for entry, _ in scored], objective) if scored else []
        pairs = sorted(fresh + [scored[i] for i in front], key=lambda pair: pair[0][:3]) or pairs
    entry, memory = pairs[0]
    memory.remove(entry[3])
    return entry[3]
