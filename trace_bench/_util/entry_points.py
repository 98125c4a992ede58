"""Entry points of one group, without parsing every installed distribution's metadata when none
declares the group.

``importlib.metadata.entry_points(group=...)`` builds a distribution object for each of the ~300
packages of a full environment and parses every ``entry_points.txt`` (40-50 ms of CPU); a run's
driver and job template each asked it twice (our trainer plugins, then pydantic's plugins at the
first model), for groups that nothing declares on most machines.  :func:`declares` answers from the
section headers of the ``entry_points.txt`` files on ``sys.path`` (a few ms), and only a group
that one of them declares is looked up the standard way, so the answer is the same.  Where
distributions may come from elsewhere (a ``sys.path`` entry that is a zip file, or a meta-path
finder of its own that finds distributions) the standard lookup always runs.
"""

from __future__ import annotations

import os
import sys
from importlib import machinery
from importlib.metadata import EntryPoint
from importlib.metadata import entry_points as _standard_entry_points

_METADATA_DIRS = (".dist-info", ".egg-info")


def _groups_on_path() -> set[str] | None:
    """The groups declared by the distributions found on ``sys.path``; None when the scan cannot be
    sure it sees every distribution the standard lookup would."""
    for finder in sys.meta_path:
        if finder is not machinery.PathFinder and hasattr(finder, "find_distributions"):
            return None
    groups: set[str] = set()
    for entry in sys.path:
        directory = entry or "."
        if os.path.isfile(directory):
            return None
        try:
            names = [name for name in os.listdir(directory) if name.endswith(_METADATA_DIRS)]
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(directory, name, "entry_points.txt"), encoding="utf-8") as handle:
                    text = handle.read()
            except OSError:
                continue
            groups.update(line.strip()[1:-1].strip() for line in text.splitlines() if line.lstrip().startswith("["))
    return groups


def declares(group: str) -> bool:
    """Whether some distribution may declare entry points of ``group`` (True when unsure)."""
    groups = _groups_on_path()
    return groups is None or group in groups


def entry_points(group: str) -> tuple[EntryPoint, ...]:
    """``importlib.metadata.entry_points(group=group)``, skipped when no distribution declares it."""
    return tuple(_standard_entry_points(group=group)) if declares(group) else ()


def skip_empty_pydantic_plugin_scan() -> None:
    """Tell pydantic it has no plugins when no distribution declares one, so that its first model
    does not scan every distribution's entry points to find that out (its answer would be the same)."""
    try:
        from pydantic.plugin import _loader
    except ImportError:  # pragma: no cover - another pydantic layout: it scans as it always did
        return
    if getattr(_loader, "_plugins", "missing") is None and not declares(_loader.PYDANTIC_ENTRY_POINT_GROUP):
        _loader._plugins = {}
