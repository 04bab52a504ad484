"""The one way a paper's flow declares a Prefect task: `@stage_task`, or `@stage_task(retries=2)` where a fault
can be transient. DVC decides what reruns (it hashes a stage's deps and params), so Prefect's own result cache
stays off: it would hash every argument (arrays, models) of every call, and could skip work DVC asked for."""
from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE


def stage_task(function=None, /, *, retries: int | None = None, retry_delay_seconds: float | None = None):
    """A Prefect task without result caching; retries as Prefect's own (None: its settings' default)."""
    decorate = task(cache_policy=NO_CACHE, retries=retries, retry_delay_seconds=retry_delay_seconds)
    return decorate if function is None else decorate(function)
