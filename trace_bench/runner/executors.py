"""The executor a run uses, handed the runner's job body by name (executors never import the
runner; the driver never imports the in-job package, which the job process imports)."""

from __future__ import annotations

from typing import Any

from trace_bench._util.errors import ConfigError
from trace_bench.config.models import RunConfig
from trace_bench.runner.warm import preload_for

#: the job body every executor runs, imported in the job process only (see trace_bench/runner/job/)
JOB_BODY = "trace_bench.runner.job.body:job_body"


def connect_executor(config: RunConfig, kind: str | None = None, ray_address: str | None = None) -> None:
    """Reach the Ray cluster before the run starts: an unreachable one is a config error (exit 2)
    naming its address, not a failure to write the run."""
    if (kind or config.executor) != "ray":
        return
    try:
        from trace_bench.execution.ray_executor import RayConnectionError, init_ray
    except ImportError as exc:  # pragma: no cover - ray is an optional extra
        raise ConfigError(f"executor ray needs the ray extra (pip install 'trace-bench[ray]'): {exc}") from None
    try:
        init_ray(ray_address or config.ray.address)
    except ImportError as exc:
        raise ConfigError(f"executor ray needs the ray extra (pip install 'trace-bench[ray]'): {exc}") from None
    except RayConnectionError as exc:
        raise ConfigError(str(exc), key_path="--ray-address" if ray_address else "ray.address") from None


def make_executor(config: RunConfig, kind: str | None = None, ray_address: str | None = None) -> Any:
    """A ``LocalExecutor`` (default) or a ``RayExecutor``, both running :data:`JOB_BODY`."""
    if (kind or config.executor) == "ray":
        from trace_bench.execution.ray_executor import RayExecutor

        ray_cfg = config.ray
        try:
            return RayExecutor(config.max_workers, JOB_BODY, address=ray_address or ray_cfg.address,
                               num_cpus=ray_cfg.num_cpus, num_gpus=ray_cfg.num_gpus, memory_mb=ray_cfg.memory_mb,
                               max_retries=config.max_retries, preload=preload_for(config))
        except ImportError as exc:  # pragma: no cover - ray is an optional extra
            raise ConfigError(f"executor ray needs the ray extra (pip install 'trace-bench[ray]'): {exc}") from None
    from trace_bench.execution.local import LocalExecutor

    return LocalExecutor(config.max_workers, JOB_BODY, preload=preload_for(config))
