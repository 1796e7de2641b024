"""A training pod template that runs at the default priority."""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.engine.context import ArgoRunFact
from kubelint_ml.input.kinds.kubeflow import train_job_spec_path
from kubelint_ml.input.loader import render_path
from kubelint_ml.input.objects import K8sObject, clip, dig
from kubelint_ml.input.workloads import PodTemplate, is_training_kind
from kubelint_ml.templates import _fixes
from kubelint_ml.templates._common import is_fragment, raw_text
from kubelint_ml.templates._priority import (
    KAI_LABEL,
    KUEUE_LABEL,
    RAY_LABEL,
    facts_of,
    is_ray,
    is_volcano_job,
    kai_object_ref,
    named,
    object_refs,
    origin,
    template_refs,
    uses_kai,
    volcano_job_spec_path,
)

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "fixClass": _fixes.CLASS_PARAM,
    },
}

# Shared runtimes: the TrainJob that uses one may carry its priority (Kueue label or overrides):
# judged with the TrainJobs among the inputs that name it.
_RUNTIMES = {("trainer.kubeflow.org", "TrainingRuntime"), ("trainer.kubeflow.org", "ClusterTrainingRuntime")}
# Argo's shared templates: judged with the Workflows among the inputs that run them (workflowTemplateRef,
# templateRef); with none, on their own, as the Workflow `argo submit --from` makes of one runs them.
_ARGO_TEMPLATES = {("argoproj.io", "WorkflowTemplate"), ("argoproj.io", "ClusterWorkflowTemplate")}
# Where an object-level field gives every pod a priority (or, for Kueue, the workload one).
_COUNTS = ("volcano", "ray", "kai", "kueue")


def _argo_patch_sets_priority(obj: K8sObject, tpl: PodTemplate) -> bool:
    """An Argo pod whose ``podSpecPatch`` (its template's or the workflow's) sets a priorityClassName."""
    if obj.group != "argoproj.io" or tpl.spec_path[-2:-1] != ("templates",):
        return False
    for at in (tpl.spec_path, tpl.spec_path[:-2]):
        patch = dig(obj.data, *at, "podSpecPatch")
        if isinstance(patch, str) and "priorityClassName" in patch:
            return True
    return False


def origin_of(source: str, here: str) -> str:
    return "" if source == here else f" ({source})"


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    obj, tpl = unit.obj, unit.tpl
    users: list = []
    runtime: tuple[str, str] | None = None  # a TrainJob judged for its runtime read as context: (name, file)
    if (obj.group, obj.kind) in _RUNTIMES:
        # A shared runtime: each TrainJob that uses it may set the priority. Judged with the
        # TrainJobs among the inputs that name it; with none, left to them.
        users = facts_of(ctx).train_jobs_using(obj)
        if not users or all(u.gives_priority for u in users):
            return None
        users = [u for u in users if not u.gives_priority]
    elif (obj.group, obj.kind) in _ARGO_TEMPLATES:
        runs = facts_of(ctx).argo_runs_of(obj, tpl.role)
        if runs and all(r.gives_priority(tpl.role) for r in runs):
            return None
        users = [r for r in runs if not r.gives_priority(tpl.role)]
    elif tpl.shared:
        return None  # a shared definition: what uses it sets the priority (docs/kinds.md)
    elif tpl.cache.get("from-runtime"):
        # A TrainJob's pod from its runtime: judged on the runtime, with the TrainJobs using it, when the
        # runtime is linted; one read only as context is never reported on, so the TrainJob is judged.
        runtime_file = facts_of(ctx).runtime_file_of(obj)
        if runtime_file is None or runtime_file not in facts_of(ctx).cluster.context_files:
            return None
        ref = (train_job_spec_path(obj.kind) or ("spec",)) + ("runtimeRef",)
        name = dig(obj.data, *ref, "name")
        runtime = (clip(name) if isinstance(name, str) else "?", runtime_file)
    if is_ray(obj) and tpl.path[-1:] == ("submitterPodTemplate",):
        return None  # the short-lived `ray job submit` pod, not the cluster that trains
    spec = tpl.spec
    if named(spec.get("priorityClassName")) or is_fragment(tpl) or _argo_patch_sets_priority(obj, tpl):
        return None
    refs = object_refs(obj) + template_refs(tpl)
    kai = kai_object_ref(obj, tpl)
    if kai is not None:
        refs.append(kai)
    if any(r.source in _COUNTS for r in refs):
        return None

    notes: list[str] = []
    path = tpl.spec_path + ("priorityClassName",)
    if "priorityClass" in spec:
        notes.append(
            f"spec.priorityClass {raw_text(spec['priorityClass'])} is not a pod field, so it is dropped: "
            "the field is priorityClassName"
        )
        path = tpl.spec_path + ("priorityClass",)
    for r in refs:
        if r.source == "kubeflow":
            notes.append(
                f"{r.field} '{r.name}' is copied only into the gang-scheduling PodGroup, not into the pods, "
                "so kube-scheduler preemption does not see it"
            )
    if (obj.group, obj.kind) == ("ray.io", "RayCronJob"):
        copied = [k for k in (RAY_LABEL, KUEUE_LABEL) if named(obj.labels.get(k))]
        if copied:
            notes.append(
                f"the label {copied[0]} on a RayCronJob is not copied to the RayJobs it creates (KubeRay "
                "constructRayJob), so it gives their pods nothing"
            )
    if not uses_kai(tpl) and (named(tpl.labels.get(KAI_LABEL)) or named(obj.labels.get(KAI_LABEL))):
        notes.append(
            f"the label {KAI_LABEL} is read only by KAI Scheduler, and this template's schedulerName "
            "is not kai-scheduler"
        )
    if users:
        first = users[0]
        more = f" and {len(users) - 1} more" if len(users) > 1 else ""
        if isinstance(first, ArgoRunFact):
            notes.append(
                f"Workflow '{first.name}'{origin_of(first.source, obj.file)}{more} runs this template and sets no "
                "priority (no podPriorityClassName, no priorityClassName for it)"
            )
        else:
            notes.append(
                f"{first.kind} '{first.name}'{origin_of(first.source, obj.file)}{more} uses this runtime and sets no "
                f"priority (no {KUEUE_LABEL} label)"
                + (
                    "; the priorityClassName in its runtime patches is not a field Trainer patches into pods "
                    "(PodSpecPatch has none), so the API server drops it"
                    if first.patch_names_priority
                    else ""
                )
            )
    if runtime is not None:
        notes.append(f"its runtime '{runtime[0]}' ({runtime[1]}) sets none either")
    prio = spec.get("priority")
    if isinstance(prio, int) and not isinstance(prio, bool):
        notes.append(
            f"spec.priority {prio} cannot set it: the Priority admission plugin computes spec.priority "
            "from the class and rejects a pod whose value differs"
        )

    default = facts_of(ctx).global_default()
    if uses_kai(tpl):  # KAI Scheduler's documented defaults, by workload type
        runs_at = (
            "KAI Scheduler gives its pods its built-in default priority for the workload type ('inference' "
            "for a Deployment, 'train' otherwise)"
        )
    elif default is not None:
        value = f", value {default.value}" if default.value is not None else ""
        runs_at = (
            "its pods run at the cluster's default priority (the globalDefault PriorityClass "
            f"'{default.name}'{value}{origin(default, obj.file)})"
        )
    else:
        runs_at = "its pods run at the cluster's default priority (0 unless a globalDefault PriorityClass exists)"

    gang = next((r.name for r in refs if r.source == "kubeflow"), None)
    training = is_training_kind(
        obj
    )  # else an accelerator Deployment, LeaderWorkerSet, ...: serving or interactive work
    target = f"'{gang}' too" if gang else f"a PriorityClass for {'training' if training else 'this workload'}"
    alternatives = [f"the Kueue label {KUEUE_LABEL} on the object if Kueue admits it"]
    if (obj.group, obj.kind) == ("ray.io", "RayCronJob"):
        alternatives = []  # its RayJobs get none of its labels
    if uses_kai(tpl):
        alternatives.insert(0, f"KAI Scheduler's label {KAI_LABEL} on the workload")
    if is_volcano_job(obj):
        alternatives.insert(0, ".".join(volcano_job_spec_path(obj)) + ".priorityClassName on the Volcano " + obj.kind)
    if obj.group == "argoproj.io" and tpl.spec_path[-2:-1] == ("templates",):
        workflow = render_path(tpl.spec_path[:-2] + ("podPriorityClassName",))
        alternatives.insert(0, f"{workflow} for every pod of the {obj.kind}")
        if users:
            alternatives.insert(1, f"podPriorityClassName on the Workflow '{users[0].name}' that runs it")
    field = tpl.cache.get("pod_fields") or tpl.real_path(tpl.spec_path)
    fix = f"set {render_path(field + ('priorityClassName',))} to {target}" + (
        f" (or {' or '.join(alternatives)})" if alternatives else ""
    )
    run_of = tpl.cache.get("run_of")  # a Workflow's pod from the WorkflowTemplate it runs, read as context
    if run_of is not None:
        path = run_of[2]
        workflow = render_path(run_of[2][:-1] + ("podPriorityClassName",))
        fix = (
            f"set priorityClassName in the template '{tpl.role}' of the {run_of[0]} {run_of[1]} to {target} (or "
            f"{workflow} for every pod of this {obj.kind}, or the Kueue label {KUEUE_LABEL} if Kueue admits it)"
        )
    if runtime is not None:
        # Trainer patches no priorityClassName into the pods (PodSpecPatch has none): the runtime's
        # pod template, or the Kueue label on the TrainJob, gives it
        path = (train_job_spec_path(obj.kind) or ("spec",)) + ("runtimeRef",)
        fix = (
            f"set priorityClassName in the pod templates of the runtime '{runtime[0]}' to {target} (or the "
            f"Kueue label {KUEUE_LABEL} "
            + ("on the TrainJob" if obj.kind == "TrainJob" else "in spec.trainJobTemplate.metadata.labels")
            + " if Kueue admits it)"
        )

    short = "no priorityClassName"
    if users:
        user = "Workflow" if isinstance(users[0], ArgoRunFact) else users[0].kind
        short += f": {user} '{users[0].name}' sets none either; pods run at the default priority"
    elif runtime is not None:
        short += f": runtime '{runtime[0]}' sets none either; pods run at the default priority"
    elif "priorityClass" in spec:
        short += " (spec.priorityClass is not a pod field)"
    elif gang:
        short += f" ('{gang}' is set on the PodGroup only)"
    else:
        short += ": pods run at the default priority"
    message = f"{tpl.describe()}: pod template has no priorityClassName"
    if notes:
        message += " (" + "; ".join(notes) + ")"
    message += (
        f": {runs_at}, so any higher-priority pod can preempt them{' mid-run' if training else ''} and they "
        f"cannot preempt lower-priority work; {fix}"
    )
    # a TrainJob has no field for its pods' priority (only the Kueue label, a choice left to the user)
    fixable = runtime is None and run_of is None
    edit = _fixes.missing_priority(tpl, refs, params, uses_kai(tpl), training, ctx) if fixable else None
    return [Hit(path, short, detail=message, fix=edit)]
