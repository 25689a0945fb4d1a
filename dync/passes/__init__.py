"""dync's named passes and the pipeline runner.

Each pass lives in its own module and exposes a `Pass` subclass with a `name`
(``dync-<concept>``), a one-line `summary` and a `run(module_op)`; `registry()` imports them
lazily. `run_pipeline` mixes them freely with textual upstream/IREE pass pipelines.
"""

from .pipeline import (
    DEFAULT_PIPELINE,
    LOW_MEMORY_PIPELINE,
    REQUIRED_PASSES,
    Pass,
    lower_control_flow,
    parse_pipeline,
    registry,
    run_pipeline,
    with_required_passes,
)

__all__ = ["DEFAULT_PIPELINE", "LOW_MEMORY_PIPELINE", "REQUIRED_PASSES", "Pass", "lower_control_flow",
           "parse_pipeline", "registry", "run_pipeline", "with_required_passes"]
