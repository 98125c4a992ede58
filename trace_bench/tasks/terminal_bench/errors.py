"""The one failure type of the Terminal-Bench suite that is not a score.

A Harbor run can fail because the *agent* failed the task (a score of 0, with feedback) or because
the *infrastructure* failed: Harbor missing, a non-zero exit without a trial result, a trial that
died with an exception before the verifier could judge it, unreadable results, the CLI timeout.
The guide raises :class:`InfraError` for the latter, so the job ends with status ``infra_error``
(the job body reads ``job_status``) instead of reporting a misleading 0.
"""

from __future__ import annotations

from trace_bench._util.errors import TraceBenchError


class InfraError(TraceBenchError, RuntimeError):
    """Harbor or its environment failed; the candidate was not judged."""

    job_status = "infra_error"
