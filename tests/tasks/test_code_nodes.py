"""Trainable code nodes: an optimizer's version of a function runs in the sandbox, the author's in the job.

Through opto's own machinery (``@trace.bundle(trainable=True)``, the node's ``ExecutionError``
and its commented feedback), as every trainer uses it.  The attacks of issue 25 replayed through
whole real-mode runs are in tests/sandbox/test_attacks.py.
"""

from __future__ import annotations

import os
import sys
import textwrap
from typing import Any

import pytest

from trace_bench.tasks.code_nodes import check_problem, install
from trace_bench.tasks.code_nodes.support import CodeNodeUnsupported
from trace_bench.tasks.problem import Problem, ProblemError

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox targets Linux"),
              pytest.mark.usefixtures("strong_sandbox")]


@pytest.fixture
def strong_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.sandbox.conftest import require_bwrap
    from trace_bench.sandbox import SETTING_ENV

    monkeypatch.delenv(SETTING_ENV, raising=False)
    require_bwrap()
    install()


def _agent() -> Any:
    from trace_bench.tasks.internal.code_param import build_trace_problem

    problem = Problem.from_mapping(build_trace_problem(), "internal:code_param")
    return problem.param


def _set(agent: Any, code: str) -> None:
    agent.transform.parameter._set(textwrap.dedent(code).lstrip())


def _error(agent: Any, x: Any) -> tuple[str, str]:
    from opto import trace

    with pytest.raises(trace.ExecutionError) as caught:
        agent(x)
    return caught.value.exception_node.data, agent.transform.info["error_comment"]


def test_the_authors_code_runs_here_an_optimizers_in_the_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-code-node-canary")
    agent = _agent()
    assert agent(5).data == 5  # the task's own transform
    _set(agent, '''
        def transform(self, x):
            import os
            return [2 * x + 1, os.getpid(), os.environ.get("OPENAI_API_KEY"), sorted(os.listdir("/proc"))[:3]]
    ''')
    value, pid, key, proc = agent(5).data
    assert value == 11 and key is None
    assert pid == 1 and pid != os.getpid()  # PID 1 of a namespace of its own
    assert [p for p in proc if p.isdigit()] == ["1"]


def test_an_error_of_the_proposal_is_feedback_with_its_line() -> None:
    agent = _agent()
    _set(agent, '''
        def transform(self, x):
            y = x + 1
            return y / 0
    ''')
    data, comment = _error(agent, 3)
    assert data == "(ZeroDivisionError) division by zero"
    assert "return y / 0 <--- (ZeroDivisionError) division by zero." in comment
    _set(agent, "def transform(self, x):\n    return x +\n")
    data, comment = _error(agent, 3)
    assert data.startswith("(SyntaxError)") and "<---" in comment
    _set(agent, "def transform(self, x):\n    return self.helper(x)\n")
    data, _ = _error(agent, 3)
    assert data.startswith("(AttributeError) self.helper is not available") and "sandbox" in data
    _set(agent, "def transform(self, x):\n    return helper(x)\n")
    data, _ = _error(agent, 3)
    assert data.startswith("(NameError) name 'helper' is not defined") and "define helpers inside" in data
    _set(agent, "def transform(self, x):\n    return object()\n")
    data, _ = _error(agent, 3)
    assert data.startswith("(TypeError) the function returned object, which is not plain data")
    _set(agent, "def transform(self, x):\n    while True:\n        pass\n")
    data, _ = _error(agent, 3)
    assert data.startswith("(TimeoutError)")
    _set(agent, "def transform(self, x):\n    return 2 * x + 1\n")
    assert agent(3).data == 7  # the node goes on working


def test_signature_defaults_and_keywords_of_a_proposal() -> None:
    agent = _agent()
    _set(agent, '''
        import math
        def transform(self, x, scale=2, *, offset=math.pi - math.pi, names=("a",)):
            return [x * scale + offset, list(names)]
    ''')
    assert agent(4).data == [8.0, ["a"]]


def test_a_proposal_is_a_function_of_its_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each call is a fresh process seeded from (code, arguments, job): the same inputs give the same
    output, so a repeated evaluation is answered without a second sandboxed call."""
    from trace_bench.tasks.code_nodes import execution

    calls: list[str] = []
    original = execution.run_sandboxed

    def counting(target: str, payload: Any, limits: Any) -> Any:
        calls.append(target)
        return original(target, payload, limits)

    monkeypatch.setattr(execution, "run_sandboxed", counting)
    agent = _agent()
    _set(agent, "def transform(self, x):\n    import random\n    return [x, random.random()]\n")
    first, again, other = agent(1).data, agent(1).data, agent(2).data
    assert first == again and first[1] != other[1]
    assert len(calls) == 2


MODULE_HEAD = """
from opto import trace

from trace_bench.tasks.guide import Guide

HELPER_CONSTANT = 7


class Record:
    def __init__(self, value):
        self.value = value


def helper(x):
    return x
"""


def _problem_with(source: str, tmp_path: Any) -> dict[str, Any]:
    """A user's task module (a file, as opto reads a bundle's source from it), built as a job builds it."""
    import importlib.util

    path = tmp_path / f"user_task_{abs(hash(source))}.py"
    path.write_text(MODULE_HEAD + textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return {"param": module.Agent(), "guide": module.Guide(), "train_dataset": {"inputs": [1], "infos": [1]}}


@pytest.mark.parametrize(("source", "message"), [
    ('''
     @trace.model
     class Agent:
         def __init__(self):
             self.scale = 3

         @trace.bundle(trainable=True)
         def act(self, x):
             return x * self.scale

         def forward(self, x):
             return self.act(x)
     ''', "uses `self`: trainable code runs in the sandbox"),
    ('''
     @trace.model
     class Agent:
         @trace.bundle(trainable=True)
         def act(self, x):
             return helper(x)

         def forward(self, x):
             return self.act(x)
     ''', "uses helper (function) from its module"),
])
def test_a_task_whose_rewrites_could_not_run_sandboxed_fails_before_running(source: str, message: str,
                                                                              tmp_path: Any) -> None:
    with pytest.raises(ProblemError, match="sandbox") as caught:
        Problem.from_mapping(_problem_with(source, tmp_path), "user:agent")
    assert message in str(caught.value)


def test_plain_globals_of_the_authors_function_go_along_and_non_plain_values_fail_clearly(tmp_path: Any) -> None:
    problem = Problem.from_mapping(_problem_with('''
        @trace.model
        class Agent:
            @trace.bundle(trainable=True)
            def act(self, x):
                return x + HELPER_CONSTANT

            def forward(self, x):
                return self.act(x)
    ''', tmp_path), "user:agent")
    agent = problem.param
    assert agent(1).data == 8
    agent.act.parameter._set("def act(self, x):\n    return x * HELPER_CONSTANT\n")
    assert agent(2).data == 14  # the constant reached the sandbox, as plain data
    record = Problem.from_mapping(_problem_with('''
        @trace.model
        class Agent:
            @trace.bundle(trainable=True)
            def act(self, x):
                return range(x)

            def forward(self, x):
                return self.act(x)
    ''', tmp_path), "user:agent").param
    with pytest.raises(CodeNodeUnsupported, match="its return value is not plain data"):
        record(1)


def test_problems_without_code_nodes_are_left_alone() -> None:
    from opto import trace

    assert check_problem(trace.node(1.0, trainable=True)) == 0
    assert check_problem({"a": [1, 2]}) == 0


def test_a_code_node_starts_its_sandbox_at_the_first_rewritten_call_still_isolated(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A stub job whose optimizer never rewrites the code starts no sandbox; the first call of
    optimizer-written code starts it, and it isolates that call as a sandbox started up front did."""
    import threading

    from trace_bench.sandbox import server

    server.shutdown()
    monkeypatch.setenv("TRACE_BENCH_MODE", "stub")
    started: list[str] = []
    real_start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self.name))
    agent = _agent()
    assert agent(5).data == 5
    assert started == [] and server._HANDLES == []  # building the problem and the author's code: no sandbox
    monkeypatch.setattr(threading.Thread, "start", real_start)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-code-node-canary")
    _set(agent, '''
        def transform(self, x):
            import os
            return [2 * x + 1, os.getpid(), os.environ.get("OPENAI_API_KEY")]
    ''')
    assert agent(5).data[0] == 11 and agent(5).data[1:] == [1, None]
    assert len(server._HANDLES) == 1 and server._HANDLES[0].mode == "bwrap"


def test_a_code_node_is_refused_before_its_first_call_where_no_sandbox_may_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Started lazily, still refused up front: the job fails before it spends anything, saying why."""
    from trace_bench.sandbox import SandboxUnavailable, policy

    monkeypatch.setattr(policy, "quick_check", lambda: "bwrap is not installed")
    with pytest.raises(SandboxUnavailable, match="bubblewrap does not work here"):
        _agent()


def test_a_real_jobs_code_node_starts_its_sandbox_behind_its_first_llm_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a real job the start overlaps the optimizer's first LLM call, as before."""
    import threading

    monkeypatch.setenv("TRACE_BENCH_MODE", "real")
    started: list[str] = []
    monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self.name))
    _agent()
    assert started == ["trace-bench-sandbox-warm-up"]
