"""The job template owns every process of every job, and takes them all down when the driver dies.

Why.  Jobs are forked by the ``forkserver`` template, which the standard library keeps alive while
any process holds the write end of its "alive" pipe, and it hands that end to every process it
forks.  So jobs kept the template alive after the driver died, and ``PR_SET_PDEATHSIG`` (which
fires on the death of the parent *thread*, here the template) never fired: a ``kill -9`` of the
driver left jobs running, calling the LLM provider and writing into a run directory that
``--resume`` was about to reuse.  And a signal on a job's death does not reach what the job
started in a session of its own (a tool run with ``start_new_session``, a sandbox).

How.  The template imports this module first (it is named first in the forkserver preload, and
nothing else imports it), which makes the template a *subreaper*: an orphan among its descendants
comes back to it, whatever session it moved to, instead of going to init.  Each job closes its
copy of the alive pipe at once (:func:`forget_forkserver_pipe`) and dies with the template
(``die_with_parent``).  When the driver dies, by ``kill -9`` or normally, the template reads EOF
on the alive pipe and exits, and on its way out (``atexit``) kills every descendant: jobs, their
children, sandboxes, tools.  The template is single-threaded and idle in ``select``, so no job
code can delay it; a job costs nothing more.

What a job leaves behind when it ends (the driver kills its process group; a process in another
session survives that) is re-parented to the template and killed when the run ends.  Not covered:
a ``SIGKILL`` of the template itself (a kill of the driver's whole process group) kills the jobs
through their death signal, but not what they started in other sessions.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import warnings
from typing import Any

from trace_bench._util.processes import become_subreaper, kill_descendants


def forget_forkserver_pipe() -> None:
    """Close this process's copy of the template's alive pipe, so that the template exits as soon
    as the driver does (no-op outside a forkserver child)."""
    from multiprocessing import forkserver

    server: Any = forkserver._forkserver  # CPython's private forkserver state, which typeshed does not declare
    fd = getattr(server, "_forkserver_alive_fd", None)
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)
        server._forkserver_alive_fd = None


def _in_template() -> bool:
    """True in the forkserver process (``python -c 'from multiprocessing.forkserver import main; ...'``)."""
    return sys.argv[:1] == ["-c"] and "multiprocessing.forkserver" in sys.modules


if _in_template() and become_subreaper():
    # the template's loop reaps the orphans that now come back to it, and warns about each one
    warnings.filterwarnings("ignore", message="forkserver: waitpid returned unexpected pid")
    atexit.register(kill_descendants)
