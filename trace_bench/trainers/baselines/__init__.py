"""Non-LLM baselines: trainers like any other that make no LLM call.

``RandomSearch`` (random restarts of the initial state's numbers), ``OptunaSearch`` (optuna's TPE,
CMA-ES or random sampler over the same space or a task's declared ``search_space``) and
``SLSQPMultistart`` (scipy's SLSQP from random starts, on the continuous form a built-in discovery
problem declares).  Each candidate is a state evaluated through the job's evaluator, so it runs in
the sandbox like any candidate, counts against ``budget.evaluations``, and is recorded on the curve
(their LLM spend is zero: the frontier and cost-to-reach read evaluations and wall time for them).
"""
