"""LLM layer overhead: harness CPU per call against the fake server (0 latency, 500 calls), compared
with raw HTTP; gateway added latency per call; max in-flight with 50 concurrent calls under a limit."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

from _util import report

from trace_bench.llm.factory import build_session
from trace_bench.llm.fake_server import FakeLLMServer
from trace_bench.llm.gateway import start_gateway

MESSAGES = [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "What is 2 + 2?"}]
CALLS = 500


def raw_post(url: str, key: str | None = None) -> None:
    request = urllib.request.Request(f"{url}/chat/completions", method="POST",
                                     data=json.dumps({"model": "m", "messages": MESSAGES}).encode(),
                                     headers={"Content-Type": "application/json",
                                              **({"Authorization": f"Bearer {key}"} if key else {})})
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()


def main() -> None:
    with FakeLLMServer() as server:
        session = build_session(mode="real", llm={"base_url": server.url, "model": "fake-model"}, budget={}, seed=0)
        client = session.client("optimizer")
        client(messages=MESSAGES)  # import litellm once, outside the measurement
        cpu, wall = time.process_time(), time.perf_counter()
        for i in range(CALLS):
            client(messages=[*MESSAGES, {"role": "user", "content": str(i)}])
        harness_cpu = (time.process_time() - cpu) / CALLS * 1000
        harness_wall = (time.perf_counter() - wall) / CALLS * 1000
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(CALLS):
            raw_post(server.url)
        raw_cpu = (time.process_time() - cpu) / CALLS * 1000
        raw_wall = (time.perf_counter() - wall) / CALLS * 1000
        report("client CPU per call, metered client (openai SDK path)", harness_cpu, "ms")
        report("client CPU per call, raw urllib POST", raw_cpu, "ms")
        report("harness CPU per call (metered - raw)", harness_cpu - raw_cpu, "ms", "< 5 ms")
        report("wall per call metered / raw", harness_wall / raw_wall, "x")
    stub = build_session(mode="stub", llm={}, budget={}, seed=0)
    with start_gateway(stub) as gateway:
        for _ in range(20):
            raw_post(gateway.base_url, gateway.api_key)
        start = time.perf_counter()
        for _ in range(CALLS):
            raw_post(gateway.base_url, gateway.api_key)
        through = (time.perf_counter() - start) / CALLS * 1000
        start = time.perf_counter()
        for _ in range(CALLS):
            stub.client("agent")(messages=MESSAGES)
        direct = (time.perf_counter() - start) / CALLS * 1000
        report("gateway added latency per call (HTTP vs in-process)", through - direct, "ms", "< 2 ms")
    with FakeLLMServer(latency=0.05) as server:
        import tempfile

        from trace_bench.llm import limiter

        slots = tempfile.mkdtemp()
        limiter.attach_limiter(limiter.make_limiter(slots, 4))
        session = build_session(mode="real", llm={"base_url": server.url, "model": "fake-model"}, budget={}, seed=0)
        threads = [threading.Thread(target=session.client("agent"), kwargs={"messages": [*MESSAGES, {"role": "user", "content": str(i)}]})
                   for i in range(50)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        limiter.attach_limiter(None)
        report("max in-flight, 50 concurrent calls, max_concurrency 4", server.stats()["max_in_flight"], "calls",
               "<= 4")


if __name__ == "__main__":
    main()
