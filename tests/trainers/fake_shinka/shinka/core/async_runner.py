"""The runner (``ShinkaEvolveRunner``, the current API): one LLM proposal per generation, evaluated by
the evaluator process its job config names."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shinka.database import DatabaseConfig, Program, ProgramDatabase
from shinka.launch import LocalJobConfig

_LOCAL = re.compile(r"^local/(?P<model>[^@]+)@(?P<url>https?://[^?]+)(\?api_key_env=(?P<env>\w+))?$")
_BLOCK = re.compile(r"<<<<<<< SEARCH\n(.*?)\n=======\n(.*?)\n>>>>>>> REPLACE", re.S)
_CODE = re.compile(r"<CODE>\s*```[^\n]*\n(.*?)\n```\s*</CODE>", re.S)
#: every request the runner sent, with the model name it resolved (tests read this)
SENT: list[dict[str, Any]] = []


@dataclass
class EvolutionConfig:
    num_generations: int = 10
    results_dir: str | None = None
    job_type: str = "local"
    language: str = "python"
    init_program_path: str | None = "initial.py"
    use_text_feedback: bool = False
    patch_types: list[str] = field(default_factory=lambda: ["diff"])
    patch_type_probs: list[float] = field(default_factory=lambda: [1.0])
    max_patch_attempts: int = 3
    llm_models: list[str] = field(default_factory=lambda: ["gpt-4.1"])
    llm_kwargs: dict[str, Any] = field(default_factory=dict)
    meta_rec_interval: int | None = None
    meta_llm_models: list[str] | None = None
    novelty_llm_models: list[str] | None = None
    embedding_model: str | None = "text-embedding-3-small"
    task_sys_msg: str | None = None


def _chat(model: str, messages: list[dict[str, str]], kwargs: dict[str, Any]) -> str:
    match = _LOCAL.match(model)
    if match is None:
        raise ValueError(f"the fake runner only knows local/<model>@<url> models, not {model!r}")
    body = {"model": match["model"], "messages": messages,
            "temperature": (kwargs.get("temperatures") or [0.0])[0], "max_tokens": kwargs.get("max_tokens", 1024)}
    key = os.environ.get(match["env"] or "", "")
    SENT.append({"model": model, "url": match["url"]})
    request = urllib.request.Request(match["url"].rstrip("/") + "/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())["choices"][0]["message"]["content"]


def _apply(code: str, reply: str, patch_type: str) -> str | None:
    if patch_type == "diff":
        blocks = _BLOCK.findall(reply.split("<DIFF>", 1)[-1])
        if not blocks:
            return None
        for search, replace in blocks:
            if search not in code:
                return None
            code = code.replace(search, replace, 1)
        return code
    match = _CODE.search(reply)
    return match.group(1) + "\n" if match else None


class ShinkaEvolveRunner:
    def __init__(self, evo_config: EvolutionConfig, job_config: LocalJobConfig, db_config: DatabaseConfig,
                 banner_style: str = "full", verbose: bool = True, max_evaluation_jobs: int = 4,
                 max_proposal_jobs: int = 6, max_db_workers: int = 2, debug: bool = False,
                 init_program_str: str | None = None, evaluate_str: str | None = None) -> None:
        if os.environ.get("SHINKA_PRICING_MODE") != "offline":
            raise RuntimeError("the stand-in refuses to fetch a price catalog (set SHINKA_PRICING_MODE=offline)")
        self.evo_config, self.job_config, self.db_config = evo_config, job_config, db_config
        self.init_program_str, self.evaluate_str = init_program_str, evaluate_str
        self.db = ProgramDatabase(db_config)
        self.rng = random.Random(0)

    async def _evaluate(self, code: str, generation: int, evaluator: Path) -> dict[str, Any]:
        folder = Path(self.evo_config.results_dir or "results") / f"gen_{generation}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "main.py").write_text(code, encoding="utf-8")
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(evaluator), "--program_path", str(folder / "main.py"),
            "--results_dir", str(folder / "results"), stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE)
        try:
            _, err = await process.communicate()
        except asyncio.CancelledError:
            process.kill()
            await process.wait()
            raise
        metrics = folder / "results" / "metrics.json"
        if process.returncode != 0 or not metrics.is_file():
            return {"combined_score": 0.0, "correct": False, "text_feedback": err.decode()[-2000:]}
        return json.loads(metrics.read_text(encoding="utf-8"))

    def _add(self, code: str, generation: int, result: dict[str, Any], parent: Program | None) -> None:
        self.db.add(Program(id=f"p{generation}", code=code, generation=generation,
                            combined_score=float(result.get("combined_score", 0.0)),
                            public_metrics=dict(result.get("public") or {}), correct=bool(result.get("correct")),
                            parent_id=parent.id if parent else None, language=self.evo_config.language))

    def _messages(self, parent: Program, feedback: str, patch_type: str) -> list[dict[str, str]]:
        reply_format = ("Reply with <NAME>, <DESCRIPTION> and <DIFF> sections; the DIFF holds exact SEARCH/REPLACE "
                        "blocks." if patch_type == "diff" else "Reply with <NAME>, <DESCRIPTION> and <CODE> sections; "
                        "the CODE holds the whole new program in a fenced block.")
        user = (f"# Current program\n\n```{self.evo_config.language}\n{parent.code}\n```\n\n"
                f"Performance metrics:\ncombined_score: {parent.combined_score}\n{feedback}\n\n"
                "# Task\n\nPropose a change that raises the combined_score.")
        return [{"role": "system", "content": f"{self.evo_config.task_sys_msg or ''}\n\n{reply_format}"},
                {"role": "user", "content": user}]

    def run(self) -> None:
        asyncio.run(self.run_async())

    async def run_async(self) -> None:
        results = Path(self.evo_config.results_dir or "results")
        results.mkdir(parents=True, exist_ok=True)
        evaluator = Path(self.job_config.eval_program_path or "evaluate.py")
        if self.evaluate_str is not None:
            evaluator = results / "evaluate.py"
            evaluator.write_text(self.evaluate_str, encoding="utf-8")
        code = self.init_program_str if self.init_program_str is not None else \
            Path(self.evo_config.init_program_path or "initial.py").read_text(encoding="utf-8")
        result = await self._evaluate(code, 0, evaluator)
        self._add(code, 0, result, None)
        feedback = {"p0": str(result.get("text_feedback", ""))}
        model = self.evo_config.llm_models[0]
        for generation in range(1, self.evo_config.num_generations + 1):
            parent = self.db.get_best_program() or self.db.programs[-1]
            patch_type = self.rng.choices(self.evo_config.patch_types, self.evo_config.patch_type_probs)[0]
            patch_type = "diff" if patch_type == "diff" else "full"
            child = None
            for _ in range(self.evo_config.max_patch_attempts):
                messages = self._messages(parent, feedback.get(parent.id, ""), patch_type)
                try:
                    reply = await asyncio.to_thread(_chat, model, messages, self.evo_config.llm_kwargs)
                except urllib.error.HTTPError:
                    continue  # like a library that logs a failed query and samples again
                child = _apply(parent.code, reply, patch_type)
                if child is not None:
                    break
            if child is None:
                continue
            result = await self._evaluate(child, generation, evaluator)
            self._add(child, generation, result, parent)
            feedback[f"p{generation}"] = str(result.get("text_feedback", ""))
