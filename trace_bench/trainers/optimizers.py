"""Building ``opto`` optimizers by name, with the job's metered client.

Each candidate in a search keeps its own optimizer (OptoPrime's memory follows the lineage),
so optimizers are cloned with :func:`clone_optimizer`, which keeps the live parameters shared:
in ``opto`` 0.1.3.8 a plain ``deepcopy`` would copy (and rename) the parameters too.
"""

from __future__ import annotations

import copy
from typing import Any

OPTIMIZERS = ("OptoPrime", "OptoPrimeMulti", "OPRO", "TextGrad")
_ALIASES = {"optoprime": "OptoPrime", "optoprimev1": "OptoPrime", "optoprimev2": "OptoPrime",
            "optoprimemulti": "OptoPrimeMulti", "opro": "OPRO", "oprov2": "OPRO", "textgrad": "TextGrad"}


def canonical_optimizer(name: str | None) -> str:
    """Our name for ``name``; ``opto:<Name>`` (or a name only the installed opto has, such as
    OpenTrace's ``OPROv2`` under that prefix) selects opto's own class of that name."""
    if not name:
        return "OptoPrime"
    canonical = None if name.startswith("opto:") else _ALIASES.get(name.lower().replace("-", "").replace("_", ""))
    if canonical is None:
        from trace_bench.trainers.opto_native.discovery import native_optimizers

        native = native_optimizers()
        bare = name.removeprefix("opto:")
        if bare in native:
            return f"opto:{bare}"
        extra = f"; opto's own: {', '.join(f'opto:{n}' for n in native)}" if native else ""
        raise ValueError(f"unknown optimizer {name!r}; choose one of {', '.join(OPTIMIZERS)}{extra}")
    return canonical


def listed_optimizers() -> list[dict[str, str]]:
    """Every optimizer name a config may give: ours (opto's classes under trace-bench's names, with
    the aliases that map the original's spellings) and, as ``opto:<Name>``, every class the
    installed ``opto.optimizers`` exports (read statically, no import)."""
    from trace_bench.trainers.opto_native.discovery import native_optimizers

    rows = [{"optimizer": name, "source": "built-in",
             "aliases": ",".join(sorted(a for a, target in _ALIASES.items() if target == name and a != name.lower()))}
            for name in OPTIMIZERS]
    rows += [{"optimizer": f"opto:{name}", "source": "opto", "aliases": ""} for name in native_optimizers()]
    return rows


def build_optimizer(name: str | None, parameters: list[Any], llm: Any, kwargs: dict[str, Any] | None = None) -> Any:
    """An optimizer over ``parameters`` that calls ``llm`` (never a global default LLM)."""
    import opto.optimizers as optimizers

    canonical = canonical_optimizer(name)
    options = dict(kwargs or {})
    options.pop("llm", None)
    if canonical == "OptoPrimeMulti" and "temperature_range" in options:
        # 0.1.3.8 raises AttributeError when temperature_range is given (it only sets the
        # attribute when the argument is None); set it after construction instead.
        temperature_range = options.pop("temperature_range")
        optimizer = optimizers.OptoPrimeMulti(parameters, llm=llm, **options)
        optimizer.temperature_range = list(temperature_range)
        return optimizer
    if canonical == "TextGrad":
        options.pop("memory_size", None)
        options.pop("include_example", None)
    cls = getattr(optimizers, canonical.removeprefix("opto:"))
    return cls(parameters, llm=llm, **options)


def clone_optimizer(optimizer: Any, parameters: list[Any]) -> Any:
    """A deep copy of ``optimizer`` that still points at the same live parameters."""
    memo: dict[int, Any] = {id(p): p for p in parameters}
    memo[id(optimizer.parameters)] = optimizer.parameters
    return copy.deepcopy(optimizer, memo)
