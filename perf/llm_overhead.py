"""LLM layer overhead: harness CPU per call against the fake server (0 latency, 500 calls), compared
with raw HTTP, without and with the job's transcript (a short prompt, and an OptoPrime-sized one of
~6 KB); gateway added latency per call; max in-flight with 50 concurrent calls under a limit."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from typing import Any

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


def metered(url: str, transcript_dir: str | None) -> Any:
    """A metered client of a real-mode session, with a transcript written under ``transcript_dir``."""
    session = build_session(mode="real", llm={"base_url": url, "model": "fake-model"}, budget={}, seed=0)
    if transcript_dir is not None and hasattr(session, "transcript"):
        from trace_bench.store.job_store import JobStore

        session.transcript = JobStore(transcript_dir).open_transcript()
    return session.client("optimizer")


def per_call(client: Any, system: str) -> tuple[float, float]:
    """(CPU ms, wall ms) per call of ``client`` over ``CALLS`` calls."""
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(CALLS):
        client(messages=[{"role": "system", "content": system}, {"role": "user", "content": str(i)}])
    return (time.process_time() - cpu) / CALLS * 1000, (time.perf_counter() - wall) / CALLS * 1000


def transcript_write_cpu(directory: str, system: str, writes: int = 2000) -> float:
    """CPU ms of one transcript entry alone (masking, bounds, JSON, the write) for a 6 KB prompt."""
    from trace_bench.store.job_store import JobStore

    log = JobStore(f"{directory}/alone").open_transcript()
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "What is 2 + 2?"}]
    fields = {"call": 1, "step": 1, "role": "optimizer", "phase": "train", "model": "fake-model",
              "request": "0" * 16, "params": {"max_tokens": 4096}, "prompt_tokens": 1500, "completion_tokens": 60}
    cpu = time.process_time()
    for _ in range(writes):
        log.write(fields, messages, ['{"reasoning": "raise x", "suggestion": {"x0": 2.5}}'])
    log.close()
    return (time.process_time() - cpu) / writes * 1000


def main() -> None:
    import tempfile

    # an OptoPrime-sized system prompt (~6 KB), the size a trainer's calls carry
    large = ("You're tasked to solve a coding/algorithm problem. #Variables #Inputs #Others #Outputs #Feedback. "
             * 60)[:6000]
    with FakeLLMServer() as server, tempfile.TemporaryDirectory() as tmp:
        plain, transcribed = metered(server.url, None), metered(server.url, tmp)
        plain(messages=MESSAGES)  # import litellm once, outside the measurement
        transcribed(messages=MESSAGES)
        figures = {}
        for _ in range(2):  # alternated, so a change of the machine's load hits both alike
            for name, client, system in (("plain", plain, MESSAGES[0]["content"]), ("plain large", plain, large),
                                         ("transcript", transcribed, MESSAGES[0]["content"]),
                                         ("transcript large", transcribed, large)):
                cpu, wall = per_call(client, system)
                best = figures.get(name)
                figures[name] = (cpu, wall) if best is None or cpu < best[0] else best
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(CALLS):
            raw_post(server.url)
        raw_cpu = (time.process_time() - cpu) / CALLS * 1000
        raw_wall = (time.perf_counter() - wall) / CALLS * 1000
        harness_cpu, harness_wall = figures["plain"]
        report("client CPU per call, metered client (openai SDK path)", harness_cpu, "ms")
        report("client CPU per call, raw urllib POST", raw_cpu, "ms")
        report("harness CPU per call (metered - raw)", harness_cpu - raw_cpu, "ms", "< 5 ms")
        report("harness CPU per call, transcript on", figures["transcript"][0] - raw_cpu, "ms", "< 5 ms")
        report("harness CPU per call, 6 KB prompt, transcript off", figures["plain large"][0] - raw_cpu, "ms")
        report("harness CPU per call, 6 KB prompt, transcript on", figures["transcript large"][0] - raw_cpu, "ms",
               "< 5 ms")
        report("transcript CPU per call, short prompt", figures["transcript"][0] - harness_cpu, "ms")
        report("transcript CPU per call, 6 KB prompt", figures["transcript large"][0] - figures["plain large"][0],
               "ms")
        report("wall per call metered / raw", harness_wall / raw_wall, "x")
        if hasattr(plain.session, "transcript"):
            report("transcript write alone, 6 KB prompt + answer (CPU)", transcript_write_cpu(tmp, large), "ms")
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
