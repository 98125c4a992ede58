"""Static metadata of the built-in trainers, and the listing that ``list-trainers`` prints.

Listing must cost what ``list-tasks`` costs, so it imports no trainer module (they bring pydantic
and, later, ``opto`` and the external libraries): availability comes from ``find_spec`` of the
packages a trainer requires.  Resolution (``registry.trainers.all_trainers``) imports the classes;
``tests/cli/test_listing.py`` checks that this table says exactly what the classes say, so the two
cannot drift.  Entry-point plugins have no static metadata: their classes are imported to list them.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from trace_bench.registry.specs import missing_packages

ENTRY_POINT_GROUP = "trace_bench.trainers"


@dataclass(frozen=True)
class TrainerMetadata:
    """What listing needs to know about a built-in trainer, written next to its import target."""

    id: str
    target: str  # "module:Class"
    description: str
    source: str = "built-in"
    requires: tuple[str, ...] = ()
    extra: str | None = None
    optional: bool = False  # the module may be absent from a checkout: registered only when present
    probe: str | None = None  # "module:function" returning a finer reason (or None); must import nothing heavy

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]

    def present(self) -> bool:
        if not self.optional:
            return True
        try:
            return importlib.util.find_spec(self.module) is not None
        except (ImportError, ValueError):
            return False


def unavailable_reason(requires: tuple[str, ...], extra: str | None, probe: str | None = None) -> str | None:
    """The reason a trainer cannot run here, or None: its required packages are missing, else its
    ``probe`` (a light ``module:function``, for a dependency a package name cannot describe, such
    as a library version without the API a backend imports) answers with a reason."""
    absent = missing_packages(*requires)
    if absent:
        return f"install trace-bench[{extra}]" if extra else f"missing {', '.join(absent)}"
    if probe is None:
        return None
    module_name, _, attr = probe.partition(":")
    try:
        reason = getattr(importlib.import_module(module_name), attr)()
    except Exception as exc:  # a broken probe must not break listing
        return f"availability check {probe} failed: {type(exc).__name__}: {exc}"
    return str(reason) if reason else None


_OPTO = "trace_bench.trainers.opto_search"
_EXTERNAL = "trace_bench.trainers.external"

# Listing order inside a source; ``optional`` entries were added after the first two.
BUILTIN_TRAINERS: tuple[TrainerMetadata, ...] = (
    TrainerMetadata("NoOpTrainer", "trace_bench.trainers.noop:NoOpTrainer",
                    "Baseline: evaluates the initial parameters, never updates them."),
    TrainerMetadata("PrioritySearch", f"{_OPTO}.priority_search:PrioritySearch",
                    "Priority queue of candidates with their own optimizers; proposals validated per step."),
    TrainerMetadata("StreamingPrioritySearch", f"{_OPTO}.streaming:StreamingPrioritySearch",
                    "PrioritySearch without validation: proposals are evaluated on the next training batch.",
                    optional=True),
    TrainerMetadata("GEPA-Base", f"{_OPTO}.gepa:GEPABase",
                    "GEPA: parents by Pareto-subset wins, reflective mutation, always-add children, merges.",
                    optional=True),
    TrainerMetadata("GEPA-UCB", f"{_OPTO}.gepa:GEPAUCB",
                    "GEPA with UCB-search plumbing: evicts the single worst (wins, mean) above max_buffer_size.",
                    optional=True),
    TrainerMetadata("GEPA-Beam", f"{_OPTO}.gepa:GEPABeam",
                    "GEPA with the beam-search plumbing and defaults (keeps the top 16 by wins, then mean).",
                    optional=True),
    TrainerMetadata("BeamsearchAlgorithm", f"{_OPTO}.beam:BeamsearchAlgorithm",
                    "Beam of states; all members propose, the top beam_width on a validation minibatch survive.",
                    optional=True),
    TrainerMetadata("BeamsearchHistoryAlgorithm", f"{_OPTO}.beam:BeamsearchHistoryAlgorithm",
                    "Beam search whose feedback lists earlier selected states and their validation scores.",
                    optional=True),
    TrainerMetadata("UCBSearchAlgorithm", f"{_OPTO}.ucb:UCBSearchAlgorithm",
                    "Bandit over a buffer of states: improve the highest UCB, add the child, evict the lowest.",
                    optional=True),
    TrainerMetadata("MinibatchAlgorithm", f"{_OPTO}.minibatch:MinibatchAlgorithm",
                    "One state; one proposal per minibatch, rolled back unless it improves on the same batch.",
                    optional=True),
    TrainerMetadata("BasicSearchAlgorithm", f"{_OPTO}.minibatch:BasicSearchAlgorithm",
                    "Minibatch with num_proposals proposals per batch, the best on the validation set kept.",
                    optional=True),
    TrainerMetadata("DSPyTrainer", f"{_EXTERNAL}.dspy_trainer:DSPyTrainer",
                    "DSPy optimizers (MIPROv2, GEPA, COPRO, SIMBA, BootstrapFewShot) via the gateway.",
                    source="external", requires=("dspy",), extra="dspy", optional=True),
    TrainerMetadata("TextGradTrainer", f"{_EXTERNAL}.textgrad_trainer:TextGradTrainer",
                    "textgrad's TGD (textual gradients) over every trainable parameter, via the gateway.",
                    source="external", requires=("textgrad",), extra="textgrad", optional=True),
    TrainerMetadata("OpenEvolveTrainer", f"{_EXTERNAL}.openevolve_trainer:OpenEvolveTrainer",
                    "OpenEvolve's islands + MAP-Elites evolution over the parameters as one program, via the "
                    "gateway.",
                    source="external", requires=("openevolve",), extra="openevolve", optional=True),
    TrainerMetadata("GEPATrainer", f"{_EXTERNAL}.gepa_trainer:GEPATrainer",
                    "The gepa library's reflective evolution over every parameter's text, via the gateway.",
                    source="external", requires=("gepa",), extra="gepa", optional=True),
    TrainerMetadata("SkyDiscover", f"{_EXTERNAL}.skydiscover_trainer:SkyDiscoverTrainer",
                    "SkyDiscover's searches (AdaEvolve, EvoX, top-k, beam, best-of-n) over the program, via the "
                    "gateway.",
                    source="external", requires=("skydiscover",), extra="skydiscover", optional=True),
    TrainerMetadata("ShinkaEvolve", f"{_EXTERNAL}.shinkaevolve_trainer:ShinkaEvolveTrainer",
                    "ShinkaEvolve (Sakana AI) through SkyDiscover's shinkaevolve backend, via the gateway.",
                    source="external", requires=("skydiscover",), extra="skydiscover", optional=True,
                    probe=f"{_EXTERNAL}.shinka_probe:unavailable_reason"),
)


@dataclass(frozen=True)
class TrainerListing:
    """One row of ``list-trainers``."""

    id: str
    source: str
    reason: str | None
    description: str

    @property
    def available(self) -> bool:
        return self.reason is None


def _plugin_rows() -> list[TrainerListing]:
    """Entry-point trainers: their classes are imported (a plugin has no static metadata)."""
    from importlib.metadata import entry_points

    try:
        points = list(entry_points(group=ENTRY_POINT_GROUP))
    except Exception:  # a broken plugin distribution must not break listing
        return []
    rows = []
    for point in points:
        module_name, _, attr = point.value.partition(":")
        try:
            cls = getattr(importlib.import_module(module_name), attr)
        except Exception as exc:
            rows.append(TrainerListing(point.name, "plugin", f"import failed: {type(exc).__name__}: {exc}", ""))
            continue
        reason = unavailable_reason(tuple(getattr(cls, "requires", ())), getattr(cls, "extra", None),
                                    getattr(cls, "probe", None))
        rows.append(TrainerListing(getattr(cls, "id", point.name), "plugin", reason,
                                   getattr(cls, "description", "")))
    return rows


def _opto_native_rows(taken: set[str]) -> list[TrainerListing]:
    """opto's own trainers (OpenTrace 0.2.x), found by reading its source; none on trace-opt 0.1.3.8,
    where this costs one ``find_spec`` and imports no trainer module."""
    import importlib.util
    from pathlib import Path

    try:
        spec = importlib.util.find_spec("opto")
    except (ImportError, ValueError):
        return []
    roots = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    if not any((root / "trainer" / "algorithms" / "__init__.py").is_file() for root in roots):
        return []
    from trace_bench.trainers.opto_native import native_trainer_classes

    return [TrainerListing(cls.id, "opto", None, cls.description)
            for cls in native_trainer_classes({trainer_id.lower() for trainer_id in taken})]


def list_trainer_rows(include_unavailable: bool = False) -> list[TrainerListing]:
    """Every registered trainer, sorted by id; unavailable ones only when asked, with the reason.

    Same rows as ``registry.trainers.list_trainers`` (which imports every class), at the cost of a
    few ``find_spec`` calls.  A plugin replaces a built-in trainer of the same id, as in resolution.
    """
    rows = {meta.id: TrainerListing(meta.id, meta.source, unavailable_reason(meta.requires, meta.extra, meta.probe),
                                    meta.description)
            for meta in BUILTIN_TRAINERS if meta.present()}
    rows.update({row.id: row for row in _plugin_rows()})
    rows.update({row.id: row for row in _opto_native_rows(set(rows))})
    ordered = sorted(rows.values(), key=lambda row: row.id.lower())
    return [row for row in ordered if include_unavailable or row.available]
