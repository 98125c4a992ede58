"""Built-in problems of the ``discovery:`` suite, written for trace-bench from the statements of
AlphaEvolve's Appendix B (Novikov et al., 2025, and its public results notebook).

Each module is an evaluator in the split form (:mod:`trace_bench.tasks.discovery.folder`):
``run(program_path, **settings)`` runs in the sandbox, imports the candidate and returns its
construction as plain data; ``score(data, **settings)`` runs in the job process, checks the
construction from scratch and returns ``combined_score`` (the fraction of the best known value:
``value / best_known`` when larger is better, ``best_known / value`` when smaller is) with the
raw ``value`` and other metrics.  ``program(**settings)`` is the initial program (its
``EVOLVE-BLOCK`` is trainable) and ``STUB_CANDIDATES`` are better blocks that never reach the
best known value, for offline stub runs.  The settings and best known values live in the static
catalogue (:mod:`trace_bench.tasks.discovery.catalog`).
"""
