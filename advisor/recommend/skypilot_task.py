"""A SkyPilot task for the chosen offering, so ``sky launch task.yaml`` rents exactly it.

The task is built as a dict and written by PyYAML's safe dumper (``yaml.SafeDumper``, with our
own ``run`` command as a literal block): every catalog string (a region,
an instance type) is a quoted scalar under its own key, whatever characters it holds, so no
catalog row can add keys (a ``setup:`` or ``run:`` of its own) to the task. Comment lines hold
only sanitized single-line text. Task format:
https://docs.skypilot.co/en/latest/reference/yaml-spec.html
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml

from advisor.estimate.prediction import Prediction
from advisor.recommend.files import write_atomic
from advisor.recommend.recommendation import FallbackPlan
from advisor.workloads import stacks
from advisor.workloads.stacks import TrainingStack
from pricing.offers import Rentable

PLACEHOLDER_RUN = "python train.py  # advisor: replace with your training command\n"
MULTI_NODE_KERAS_RUN = (
    'export JAX_COORDINATOR_ADDRESS="$(echo "$SKYPILOT_NODE_IPS" | head -n1):8476"\n'
    "export JAX_NUM_PROCESSES=$SKYPILOT_NUM_NODES JAX_PROCESS_ID=$SKYPILOT_NODE_RANK\n"
    "KERAS_BACKEND=jax python train.py  # advisor: replace train.py with your training script; "
    "before building the model it calls jax.distributed.initialize(os.environ["
    '"JAX_COORDINATOR_ADDRESS"], int(os.environ["JAX_NUM_PROCESSES"]), '
    'int(os.environ["JAX_PROCESS_ID"])) and keras.distribution.set_distribution('
    "keras.distribution.DataParallel())\n"
)
"""The placeholder of a Keras job over several nodes: one JAX process a node over its GPUs, as
Keras 3's distribution API runs (it is implemented for JAX only); ``jax.distributed`` needs the
coordinator, the process count and this process's rank given outside TPU, Slurm and MPI."""
_CLOUDS = {"aws": "aws", "gcp": "gcp", "azure": "azure", "lambda": "lambda"}
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/@+-]")


def task(
    rentable: Rentable,
    *,
    workload: str,
    run: str = PLACEHOLDER_RUN,
    plan: FallbackPlan | None = None,
    prediction: Prediction | None = None,
) -> dict[str, Any]:
    """The task as plain data: ``name``, ``resources`` and ``run`` (ours), and for spot with an
    on-demand fallback (``plan``) the recovery strategy and the plan as ``envs``; a job laid
    out over the node (``prediction``'s layout, an LLM's GPUs and sharding) gets its plan as ``envs``
    and its stack's launch line over the node's GPUs; a cluster (``rentable.nodes`` > 1) gets
    ``num_nodes`` and a launch line a node: the stack's for an LLM, ``jax.distributed`` for
    Keras."""
    resources: dict[str, Any] = {
        "cloud": _CLOUDS.get(rentable.provider, str(rentable.provider)),
        "region": str(rentable.region),
    }
    if rentable.zone:
        resources["zone"] = str(rentable.zone)
    if rentable.instance_type:
        resources["instance_type"] = str(rentable.instance_type)
    if rentable.accelerator:
        resources["accelerators"] = f"{rentable.accelerator}:{int(rentable.accelerator_count)}"
    resources["use_spot"] = rentable.pricing in {"spot", "spot_fallback"}
    body: dict[str, Any] = {"name": f"advisor-{workload}", "resources": resources}
    if rentable.nodes > 1:
        body["num_nodes"] = int(rentable.nodes)
    envs = {name: str(value) for name, value in prediction.environment} if prediction else {}
    if plan is not None:
        # a managed job relaunches after each preemption (FAILOVER: same region first); the switch
        # to on-demand is the plan's, which SkyPilot does not make itself: the envs carry it
        resources["job_recovery"] = {"strategy": "FAILOVER"}
        envs.update(_plan_envs(plan))
    if envs:
        body["envs"] = envs
    layout = prediction.layout if prediction else None
    if run == PLACEHOLDER_RUN and layout is not None:  # an LLM job, laid out by its stack
        software = stacks.find(envs.get("ADVISOR_STACK", "")) or stacks.get(stacks.DEFAULT)
        run = stack_run(software, layout.gpus, envs.get("ADVISOR_METHOD", ""), rentable.nodes)
    elif run == PLACEHOLDER_RUN and rentable.nodes > 1:
        run = MULTI_NODE_KERAS_RUN
    body["run"] = _Block(run)
    return body


def stack_run(software: TrainingStack, gpus: int, method: str, nodes: int) -> str:
    """The stack's own launch line for an LLM job (``accelerate launch``, ``tune run``,
    ``torchrun``, ``composer``), each node's over a cluster, rendezvous at the first node."""
    line = software.launch_line(gpus, method, nodes)
    first = 'MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1)\n' if nodes > 1 else ""
    return (
        f"{first}{line}  # advisor: {software.id}'s launch; replace the script or config "
        "(CONFIG, RECIPE) with yours (the plan is in the ADVISOR_* variables)\n"
    )


def _plan_envs(plan: FallbackPlan) -> dict[str, str]:
    """The fallback plan for the job's controller (values are ours; catalog names are quoted
    scalars like every other)."""
    twin = plan.on_demand
    return {
        "ADVISOR_RECOVERY": "uniform_progress",
        "ADVISOR_PLAN_WORK_HOURS": f"{plan.plan_seconds / 3600:.3f}",
        "ADVISOR_RESTART_HOURS": f"{plan.restart_seconds / 3600:.4f}",
        "ADVISOR_FALLBACK_CLOUD": _CLOUDS.get(twin.provider, str(twin.provider)),
        "ADVISOR_FALLBACK_REGION": str(twin.region),
        "ADVISOR_FALLBACK_INSTANCE_TYPE": str(twin.instance_type or ""),
        "ADVISOR_SWITCH_RULE": plan.switch_rule,
    }


class _Block(str):
    """Our own multi-line command, written as a YAML literal block (``run: |``)."""


class _Dumper(yaml.SafeDumper):
    """The safe dumper, writing ``_Block`` strings as literal blocks (nothing else changes)."""


def _block(dumper: yaml.SafeDumper, value: _Block) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style="|")


_Dumper.add_representer(_Block, _block)


def task_yaml(
    rentable: Rentable,
    *,
    workload: str,
    run: str = PLACEHOLDER_RUN,
    plan: FallbackPlan | None = None,
    prediction: Prediction | None = None,
) -> str:
    """The task YAML text for ``rentable`` (and its fallback ``plan``, its job's layout)."""
    body = yaml.dump(
        task(rentable, workload=workload, run=run, plan=plan, prediction=prediction),
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=False,
        width=1_000,
    )
    price = rentable.usd_per_hour
    shown = f"${price:.4f}/h" if isinstance(price, int | float) and math.isfinite(price) else "?"
    comment = (
        f"# advisor: where to train {_safe(workload)}: {_safe(rentable.provider)} "
        f"{_safe(rentable.region)}, {shown} ({_safe(rentable.pricing)})\n"
    )
    if prediction is not None and prediction.layout is not None:
        layout = prediction.layout
        sharding = _SPREAD.get(layout.launcher_sharding, "data parallel")
        if layout.model_parallel > 1:
            sharding = f"tensor {layout.tensor} x pipeline {layout.pipeline}, distributed optimizer"
        method = dict(prediction.environment).get("ADVISOR_METHOD", "")
        comment += (
            f"# advisor: {_safe(method)} fine-tuning over {layout.gpus} GPU(s), {sharding}, "
            f"micro-batch {layout.micro_batch}\n"
        )
    if plan is not None:
        comment += (
            "# advisor: spot with an on-demand fallback (Uniform Progress, NSDI 2024): run as a\n"
            "# managed job (sky jobs launch); switch to the ADVISOR_FALLBACK_* machine by the\n"
            "# rule in ADVISOR_SWITCH_RULE (SkyPilot recovers on spot but does not switch itself)\n"
        )
    return comment + body


_SPREAD = {"fsdp": "FSDP", "hsdp": "HSDP", "zero1": "data parallel, ZeRO-1"}
"""A plan's ``ADVISOR_SHARDING`` in the task file's comment."""


def _safe(value: object) -> str:
    """One short line of plain characters for a comment (anything else becomes ``_``)."""
    return _UNSAFE.sub("_", str(value))[:80]


def write_task(
    path: str | Path,
    rentable: Rentable,
    *,
    workload: str,
    overwrite: bool = True,
    plan: FallbackPlan | None = None,
    prediction: Prediction | None = None,
) -> Path:
    """Write the task file atomically (never through a symlink; over an existing file only when
    ``overwrite``), returning its path."""
    text = task_yaml(rentable, workload=workload, plan=plan, prediction=prediction)
    return write_atomic(path, text, overwrite=overwrite)
