"""What keeps one driver on one run directory: ``<run>/.lock``, held with ``flock`` so the kernel
frees it when the driver dies, and the directory's identity, so a driver notices its run deleted or
replaced under it and stops writing."""

from __future__ import annotations

import os
from pathlib import Path

from trace_bench.store.models import StoreError


class RunLocked(StoreError):
    """Another process is executing the run."""


class RunVanished(StoreError):
    """The run directory was deleted or replaced under a running driver: nothing more is written
    (the driver would recreate part of it), its jobs are stopped, the run ends with an error."""


class RunLock:
    """An exclusive ``flock`` on ``<run>/.lock``, held until :meth:`release` or the process dies
    (the kernel releases it then, so a killed driver's run can be resumed at once)."""

    def __init__(self, path: Path) -> None:
        import fcntl

        self.path = path
        self._handle = open(path, "a+")  # noqa: SIM115 - held until released
        try:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._handle.close()
            raise RunLocked(f"run {path.parent.name} is being executed by another trace-bench process") from None

    def release(self) -> None:
        self._handle.close()

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def directory_identity(root: Path) -> tuple[int, int]:
    """(device, inode) of a run directory, to tell it from a replacement at the same path."""
    info = os.stat(root)
    return info.st_dev, info.st_ino


def check_identity(root: Path, identity: tuple[int, int]) -> None:
    """:class:`RunVanished` when the directory at ``root`` is gone, or is not the one that had
    ``identity`` (deleted and made again, moved away and replaced)."""
    gone = f"the run directory {root} was deleted or replaced while the run was going"
    try:
        now = directory_identity(root)
    except FileNotFoundError:
        raise RunVanished(gone) from None
    except OSError as exc:
        raise RunVanished(f"{gone} ({exc})") from None
    if now != identity:  # a job process that was still writing may have made the path again
        raise RunVanished(gone)
