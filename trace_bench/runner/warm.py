"""Start the local executor's job template as early as possible.

The template imports ``opto`` and the trainer stack (about a second) in its own process; starting
it is asynchronous and cheap, so ``run`` starts it before reading its config and the imports of
both processes overlap.  Nothing of a run happens in it until a job is submitted, after the run's
directory exists.

A run whose jobs load the provider libraries (``openai``, ``litellm``) gets a template that imports
them once, so no job pays for them: a real run (at its first call; a replay from the cache too,
whose jobs price every replayed answer with LiteLLM's price map: 2.4 s of CPU in each replayed job
before), and a run of an external trainer, stub mode included (OpenEvolve, GEPA, SkyDiscover, DSPy
and TextGrad reach the job's gateway through those clients; the import was 0.8-1 s of every such
job's wall time, which the cost-quality frontier compares across trainers).  A real run whose
calls and prices need no LiteLLM (every role on an OpenAI-compatible endpoint, every model priced
in ``llm.prices``) gets a template with ``openai`` only: LiteLLM is most of the full template's
import.  Other stub runs keep the lean template.  A run naming a suite whose tasks import a heavy
library in every job (:data:`SUITE_LIBRARIES`) gets it preloaded as well.  The CLI starts the
template before the config is validated, so it peeks at the config (:func:`peek_preload`), with the
full validation still to come.  A run of DSPyTrainer gets DSPy in its template too
(:data:`TRAINER_TEMPLATES`), and a real run on OpenAI's API the models' tokenizers
(:data:`TOKENIZERS`, for its budget's worst cases).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from trace_bench.registry.suite_catalog import BUILTIN_SUITE_ROWS

#: The job templates (see trace_bench/runner/job/template*.py) by the provider stack they preload.
LEAN, OPENAI, FULL = "lean", "openai", "full"
TEMPLATES = {LEAN: ("trace_bench.runner.job.template",),
             OPENAI: ("trace_bench.runner.job.template_openai",),
             FULL: ("trace_bench.runner.job.template_real",)}
PRELOAD = TEMPLATES[LEAN]


def uses_external_trainer(trainer_ids: Any) -> bool:
    from trace_bench.registry.trainer_catalog import external_trainer_names

    external = external_trainer_names()
    return any(str(name).lower() in external for name in trainer_ids)


def _real_stack(llm: Any) -> str:
    from trace_bench.llm.providers import calls_without_litellm

    try:
        return OPENAI if calls_without_litellm(llm) else FULL
    except Exception:  # a malformed llm section: the validation says why; the full stack is never wrong
        return FULL


def provider_stack(config: Any) -> str:
    """Which provider libraries a run's jobs load: :data:`FULL` for an external trainer (its
    library calls the job's gateway through them) or a real run, a replay included (its jobs call
    no provider but price each answer), unless its calls and prices need no LiteLLM
    (:data:`OPENAI`); :data:`LEAN` for other stub runs."""
    if uses_external_trainer(t.id for t in config.trainers):
        return FULL
    if config.mode != "real":
        return LEAN
    return _real_stack(config.llm)


#: The library a suite's tasks import in every job (its ``preload`` in trace_bench/tasks/suites.json),
#: preloaded by the template of a run that names the suite: ``reasoning_gym`` took 1 s of CPU (sympy)
#: in each of its jobs, inside its wall time.  Only imports that start no thread: a fork carries none
#: (``datasets`` starts pyarrow's allocator threads, so HF tasks keep importing it per job).
SUITE_LIBRARIES = {row.name: row.preload for row in BUILTIN_SUITE_ROWS if row.preload}


#: The template module a trainer's library needs in every job, preloaded by the template of a run
#: that names the trainer (by id or alias): ``import dspy`` took 0.45-0.70 s of each DSPy job, and optuna's
#: CMA-ES sampler (``cmaes`` imports scipy.stats) 2.8-7.5 s of each OptunaSearch job.
TRAINER_TEMPLATES = {"dspytrainer": "trace_bench.runner.job.template_dspy",
                     "optunasearch": "trace_bench.runner.job.template_baselines",
                     "slsqpmultistart": "trace_bench.runner.job.template_baselines"}


def trainer_libraries(trainer_ids: Any) -> tuple[str, ...]:
    """The trainer templates (:data:`TRAINER_TEMPLATES`) that trainers named by id or alias (or a
    config's words) need."""
    from trace_bench.registry.trainer_catalog import BUILTIN_TRAINERS

    named = {str(name).lower() for name in trainer_ids}
    found: list[str] = []
    for meta in BUILTIN_TRAINERS:
        module = TRAINER_TEMPLATES.get(meta.id.lower())
        if module and module not in found and named & {name.lower() for name in (meta.id, *meta.aliases)}:
            found.append(module)
    return tuple(found)


def task_libraries(task_ids: Any) -> tuple[str, ...]:
    """The suite libraries (:data:`SUITE_LIBRARIES`) that tasks named ``suite:task`` (or a config's
    words) need."""
    suites = {str(task).split(":", 1)[0].lower() for task in task_ids}
    return tuple(library for suite, library in SUITE_LIBRARIES.items() if suite in suites)


#: Suites whose tasks (and the trainers on them) never import numpy (``numpy_free`` in
#: trace_bench/tasks/suites.json): a run of only these tasks gets
#: a template without it (numpy was a fifth of the template's import, on the stub smoke run's path).
#: Every other run's template preloads it, as most tasks use it.  A job seeds numpy when it is
#: first imported (``runner.job.body.seed_everything``), so this decides only when the import is paid.
NUMPY_FREE_SUITES = frozenset(row.name for row in BUILTIN_SUITE_ROWS if row.numpy_free)
NUMPY = ("numpy", "numpy.random")


def numpy_libraries(task_ids: list[str] | None) -> tuple[str, ...]:
    """:data:`NUMPY` unless every task is known not to need it (``None``: the tasks are not known)."""
    if task_ids and all(":" in str(task) and str(task).split(":", 1)[0].lower() in NUMPY_FREE_SUITES
                        for task in task_ids):
        return ()
    return NUMPY


#: The template module of a real run whose prompts are counted with OpenAI's tokenizers
TOKENIZERS = "trace_bench.runner.job.template_tokenizers"


def tokenizer_libraries(llm: Any) -> tuple[str, ...]:
    """:data:`TOKENIZERS` for a real run's ``llm`` section whose roles call OpenAI's API."""
    from trace_bench.llm.providers import tokenizer_needed

    try:
        return (TOKENIZERS,) if tokenizer_needed(llm) else ()
    except Exception:  # a malformed llm section: the validation says why
        return ()


def preload_for(config: Any) -> tuple[str, ...]:
    """What the template a run's jobs are forked from imports."""
    task_ids = [task.id for task in config.tasks]
    return (TEMPLATES[provider_stack(config)] + numpy_libraries(task_ids)
            + trainer_libraries(t.id for t in config.trainers) + task_libraries(task_ids)
            + (tokenizer_libraries(config.llm) if config.mode == "real" else ()))


_MODE_REAL = re.compile(r"""^mode[ \t]*:[ \t]*["']?real["']?[ \t]*(#.*)?$""", re.MULTILINE)


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")


def peek_provider_stack(config_path: str | Path | None, replay: bool = False) -> str:
    """:func:`provider_stack` for the config at ``config_path``, read cheaply before the validation
    that comes next: a look at its text for a top-level ``mode: real`` or the name of an external
    trainer, and for a real run its parsed ``llm`` section (bounded like every config read).  A
    replay (``run --replay``) passes the recorded real run's config, or None when it found none:
    :data:`FULL` then.  A miss only costs the jobs their import; a name in a comment, or a config it
    cannot read, only costs the template the import (an unreadable file is :data:`LEAN`: the real
    load says why)."""
    text = _peek_text(config_path)
    return _peeked_stack(text, _WORD.findall(text) if text else [], replay)


def _peek_text(config_path: str | Path | None) -> str | None:
    if not config_path:
        return None
    try:
        with open(config_path, encoding="utf-8", errors="replace") as handle:
            return handle.read(1 << 20)
    except OSError:
        return None


def _peeked_stack(text: str | None, words: list[str], replay: bool) -> str:
    if text is None:
        return FULL if replay else LEAN
    if uses_external_trainer(words):
        return FULL
    if not _MODE_REAL.search(text):
        return FULL if replay else LEAN  # a stub run is no replay: the command says so
    llm = _peeked_llm(text)
    return _real_stack(llm) if llm is not None else FULL


def _peeked_llm(text: str) -> dict[str, Any] | None:
    """The ``llm`` section of a config's text (empty when it has none), or None when the text does
    not parse (the validation reports it)."""
    from trace_bench.config.safe_yaml import MAX_BYTES, load_bounded

    try:
        data = load_bounded(text) if len(text) <= MAX_BYTES else None
    except Exception:
        return None
    if not isinstance(data, dict):
        return None
    llm = data.get("llm") or {}
    return llm if isinstance(llm, dict) else None


def peek_preload(config_path: str | Path | None, replay: bool = False) -> tuple[str, ...]:
    """:func:`preload_for` read cheaply: the template of :func:`peek_provider_stack`, numpy unless
    the config's ``tasks`` are all in :data:`NUMPY_FREE_SUITES`, the suite libraries and trainer
    templates the config's text names (a name in a comment only costs the template an import), and
    a real run's tokenizers."""
    text = _peek_text(config_path)
    words = _WORD.findall(text) if text else []
    llm = _peeked_llm(text) if text and _MODE_REAL.search(text) else None
    return (TEMPLATES[_peeked_stack(text, words, replay)] + numpy_libraries(_peeked_tasks(text))
            + trainer_libraries(words) + task_libraries(words) + (tokenizer_libraries(llm) if llm is not None else ()))


def _peeked_tasks(text: str | None) -> list[str] | None:
    """The task ids of a config's text, or None when it does not say plainly (then numpy is preloaded)."""
    return _peeked_ids(text, "tasks", ("id", "key", "task"))


def _peeked_ids(text: str | None, key: str, id_keys: tuple[str, ...]) -> list[str] | None:
    """The ids of the entries under ``key`` of a config's text (an entry is an id or a mapping with
    one of ``id_keys``); [] when the key is absent; None when the text does not say plainly."""
    from trace_bench.config.safe_yaml import MAX_BYTES, load_bounded

    if not text or len(text) > MAX_BYTES:
        return None
    try:
        data = load_bounded(text)
    except Exception:  # the validation reports it
        return None
    entries = data.get(key, []) if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    ids = [entry if isinstance(entry, str) else next((entry[k] for k in id_keys if k in entry), None)
           if isinstance(entry, dict) else None for entry in entries]
    named = [entry for entry in ids if isinstance(entry, str)]
    return named if len(named) == len(ids) else None


DEFAULT_TRAINER = "PrioritySearch"  # a config without trainers runs it


def template_trainers(trainer_ids: list[str] | None) -> str | None:
    """The value of :data:`TEMPLATE_TRAINERS` for a run naming ``trainer_ids`` (None: not known),
    or None when one of them is not a built-in trainer."""
    from trace_bench.registry.trainer_catalog import BUILTIN_TRAINERS

    if trainer_ids is None:
        return None
    builtin = {name.lower() for meta in BUILTIN_TRAINERS for name in (meta.id, *meta.aliases)}
    names = list(dict.fromkeys(trainer_ids or [DEFAULT_TRAINER]))
    return ",".join(names) if all(name.lower() in builtin for name in names) else None


def peek_trainers(config_path: str | Path | None) -> str | None:
    """:func:`template_trainers` of the config at ``config_path``, read cheaply (its YAML only)."""
    return template_trainers(_peeked_ids(_peek_text(config_path), "trainers", ("id", "name", "trainer", "key")))


def template_forks() -> bool:
    """Whether :func:`start_job_template` forks the template from this process (which then shares
    what this process imported: import what the run needs first), see
    :mod:`trace_bench.execution.forked_template`."""
    from trace_bench.execution import forked_template

    return forked_template.possible()


def start_job_template(preload: tuple[str, ...] = PRELOAD, trainers: str | None = None) -> None:
    """Start the job template importing ``preload`` (see :func:`preload_for`) and the built-in
    ``trainers`` named (:func:`template_trainers`; None: every trainer); the first start of a process
    decides, later ones are no-ops."""
    import os

    from trace_bench.execution.local import warm_up
    from trace_bench.registry.trainers import TEMPLATE_TRAINERS

    if trainers:
        os.environ[TEMPLATE_TRAINERS] = trainers
    else:
        os.environ.pop(TEMPLATE_TRAINERS, None)
    warm_up(preload)


def stop_job_template() -> None:
    """Stop the template at the end of the command (see :func:`trace_bench.execution.local.stop_job_template`)."""
    from trace_bench.execution.local import stop_job_template as stop

    stop()
