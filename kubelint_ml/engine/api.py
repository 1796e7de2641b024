"""The contract between the engine and the check templates.

A template is a module with ``check(unit, params, ctx)`` that yields :class:`Hit`
records for one :class:`Unit` (an object, a pod template, a container or a
volume); it may raise :class:`SkipUnit` when it lacks the facts to decide (the
reason goes to ``--verbose``). The engine turns hits into findings: positions,
severity, suppressions. A hit carries a short ``message`` (one clause, with the
numbers that matter), an optional ``detail`` (the longer why, for ``-v``, JSON
and SARIF) and an optional ``fix`` (the edit that removes it, for ``--fix``).
"""

from __future__ import annotations

from typing import Any, Literal

from kubelint_ml.findings import RuleInfo
from kubelint_ml.input.objects import K8sObject
from kubelint_ml.input.workloads import (
    ContainerView,
    PodTemplate,
    VolumeView,
    argo_run_templates,
    is_training_kind,
    kserve_service_templates,
    llm_service_templates,
    ome_service_templates,
    pod_templates,
    train_job_templates,
)
from kubelint_ml.k8s.dra import PodDevices, pod_devices, unserved_names, uses_dra
from kubelint_ml.k8s.resources import (
    ACCELERATOR,
    GPU_SHARE_ANNOTATIONS,
    NO_DEVICES,
    accelerator_use,
    placeholder_accelerators,
    pod_level_gates,
    pod_requests,
)
from kubelint_ml.k8s.version import parse_version
from kubelint_ml.records import Record

# Findings the engine itself reports, beside the rules' own ids.
IGNORE_ANNOTATION = "kubelint-ml.io/ignore"
PARSE_ERROR = "parse-error"
RENDER_ERROR = "render-error"
UNKNOWN_IGNORE = "unknown-ignore-rule"
RULE_ERROR = "rule-error"
CEL_EVALUATION_ERROR = (
    "cel-evaluation-error"  # a CEL rule's expression failed (reported by kubelint_ml.engine.celcheck)
)
SCHEMA_INVALID = "schema-invalid"
SCHEMA_UNAVAILABLE = "schema-unavailable"

# The findings the tool reports about its input and its rules rather than about the
# manifests' content, declared here once: `rules list`, `rules show`, docs/rules.md and
# SARIF rule metadata all read this table. Their family is "input".
PSEUDO_RULES: dict[str, RuleInfo] = {
    r.id: r
    for r in (
        RuleInfo(
            PARSE_ERROR,
            "error",
            "File or document is not a usable manifest",
            "Invalid YAML or JSON, a document that is not a mapping, duplicate keys, a field of the wrong type "
            "(`containers: 3`), an object with a kind but no apiVersion (kubectl refuses it; the object is still "
            "linted as its kind), a Helm template, binary or non-UTF-8 data, or input over a safety limit (size, "
            "depth, alias expansion, documents per file). Reported by the loader at the line of the problem; the "
            "other documents and files are still linted, and a parse-error makes the exit code 1 like any error. A "
            "YAML tag other than the standard ones is never constructed: in a manifest it is a parse-error; another "
            "tool's file (a mapping with neither apiVersion nor kind, such as a CloudFormation template with !Sub) is "
            "skipped as any non-manifest is (-v says so), and so are a list of such mappings (a kustomize JSON patch, "
            "an Ansible playbook) and a kind no Kubernetes type is named like with no apiVersion (`kind: vllm-bench`).",
            "Fix the file so it is a valid Kubernetes manifest, render templates first "
            "(`helm template ... | kubelint-ml check -`), or exclude the path in the config.",
            "input",
        ),
        RuleInfo(
            RENDER_ERROR,
            "error",
            "A Helm chart or kustomization could not be rendered, so it was not linted",
            "A chart (a directory with `Chart.yaml`) or a kustomization among the inputs is linted through its "
            "rendered output. When `helm template` or `kustomize build` fails, or the tool is not on `PATH`, "
            "nothing of it was linted: reported on the `Chart.yaml` or `kustomization.yaml` with the tool's own "
            "message, at error severity, so that a repository of charts cannot pass having linted nothing.",
            "Fix what the tool reports, or install helm or kustomize (kubectl), or pipe the rendered output in "
            "(`helm template DIR | kubelint-ml check --stdin-filename DIR/rendered.yaml`); to skip charts, "
            "turn rendering off (`render: {enabled: false}`) or exclude the path.",
            "input",
        ),
        RuleInfo(
            SCHEMA_INVALID,
            "error",
            "Object does not match the Kubernetes API schema",
            "With `--schema`, the object fails the OpenAPI schema of the configured Kubernetes version (or of a "
            "CustomResourceDefinition given with `--crd`): the API server would reject it.",
            "Fix the field so the object matches the API schema.",
            "input",
        ),
        RuleInfo(
            SCHEMA_UNAVAILABLE,
            "info",
            "No schema to validate the object against",
            "With `--schema`, the object's apiVersion and kind are neither built into the bundled Kubernetes "
            "schema nor described by a CustomResourceDefinition among the inputs or `--crd` files (a Kubeflow "
            "TFJob without its CRD, say), so it was not validated. The rules still ran on it. A built-in "
            "group's version the chosen Kubernetes version does not serve is named as such: built in only "
            "from a later version (`resource.k8s.io/v1` before 1.34), only up to an earlier one "
            "(`resource.k8s.io/v1alpha3`), or not at all (`batch/v1beta1` CronJob), with the versions it serves.",
            "Pass the CRD with `--crd FILE` (or `schema.crds` in the config); for a built-in group, use an API "
            "version the cluster serves.",
            "input",
        ),
        RuleInfo(
            CEL_EVALUATION_ERROR,
            "error",
            "A CEL rule's expression failed on an object",
            "A custom rule's CEL expression raised an error (a missing key read without `has()`, a type error, "
            "the cost budget exceeded) or returned something other than a bool. As with a "
            "ValidatingAdmissionPolicy whose failurePolicy is Fail, the object is not let through silently.",
            "Guard optional fields with `has()` in the rule's expression, or fix the rule.",
            "input",
        ),
        RuleInfo(
            UNKNOWN_IGNORE,
            "info",
            "Suppression names an unknown rule or gives no reason",
            f"A `{IGNORE_ANNOTATION}` annotation or a `# kubelint-ml: ignore[...]` comment names a rule id that "
            "does not exist, or the comment gives no reason after its brackets, so it suppresses nothing.",
            "Correct the rule id (see `kubelint-ml rules list`), give the reason, or remove it.",
            "input",
        ),
        RuleInfo(
            RULE_ERROR,
            "error",
            "A rule failed on an object",
            "A rule raised an unexpected error on one object: a bug in the rule (for a custom rule, in its "
            "template). The other rules still ran on the object; this one's verdict is unknown.",
            "Report it with the manifest, or disable the rule.",
            "input",
        ),
    )
}

UnitKind = Literal["object", "podTemplate", "container", "volume"]
UNIT_KINDS: tuple[UnitKind, ...] = ("object", "podTemplate", "container", "volume")


class Hit(Record):
    path: tuple  # from the object's root
    message: str
    container: str | None
    at_value: bool  # point at the value rather than the key
    severity: str | None  # a template may lower/raise for a specific case (a config override still wins)
    data: dict
    rule: str | None  # reported under another id (e.g. cel-evaluation-error)
    detail: str | None  # the longer explanation of this case (rationale, numbers), shown by -v, JSON and SARIF
    fix: Any  # kubelint_ml.fix.Fix: the edit that removes this hit, when one is known
    __slots__ = _fields = ("path", "message", "container", "at_value", "severity", "data", "rule", "detail", "fix")

    def __init__(
        self,
        path: tuple,
        message: str,
        container: str | None = None,
        at_value: bool = False,
        severity: str | None = None,
        data: dict | None = None,
        rule: str | None = None,
        detail: str | None = None,
        fix: Any = None,
    ) -> None:
        self.path = path
        self.message = message
        self.container = container
        self.at_value = at_value
        self.severity = severity
        self.data = {} if data is None else data
        self.rule = rule
        self.detail = detail
        self.fix = fix


class Unit(Record):
    obj: K8sObject
    tpl: PodTemplate | None
    container: ContainerView | None
    volume: VolumeView | None
    ctx: Context | None
    __slots__ = _fields = ("obj", "tpl", "container", "volume", "ctx")

    def __init__(
        self,
        obj: K8sObject,
        tpl: PodTemplate | None = None,
        container: ContainerView | None = None,
        volume: VolumeView | None = None,
        ctx: Context | None = None,
    ) -> None:
        self.obj = obj
        self.tpl = tpl
        self.container = container
        self.volume = volume
        self.ctx = ctx

    def templates(self) -> list[PodTemplate]:
        return self.ctx.templates(self.obj) if self.ctx else pod_templates(self.obj)


class Context(Record):
    """What a rule may know beyond its unit: the profile and context objects."""

    profile: Any  # kubelint_ml.run.config.Profile
    facts: Any  # kubelint_ml.engine.context.Facts (PriorityClasses, KubeletConfigurations, ...)
    # Observed usage (kubelint_ml.usage), when a usage source is configured: per-container
    # summaries that usage rules judge against and that fixes take their values from.
    usage: Any
    notes: list[str]  # "skipped because..." for --verbose
    # False when nobody reads the notes (a run without --verbose): a template may then
    # leave out work whose only outcome would be a note.
    wants_notes: bool
    # False when nobody reads fixes (admission): a template may then leave out planning a fix
    # whose cost grows with the pod (memory for every container).
    wants_fixes: bool
    # What checks remember while this file is linted (dropped with it): keys are
    # prefixed by the module that owns them ("cel:converted").
    cache: dict[str, Any]
    # At admission (kubelint_ml.admission): once a rule has this many hits on one pod template and
    # one of them is an error that is not suppressed, its remaining units are not evaluated: the
    # verdict cannot change, and an object made of 18,000 copies of one mistake costs 100 hits, not
    # 18,000. None (check, the editor): every unit is evaluated.
    max_hits_per_template: int | None
    # id(obj) -> (obj, its templates); the object is held so that its id is not reused.
    _templates: dict[int, tuple[K8sObject, list[PodTemplate]]]
    __slots__ = _fields = (
        "profile",
        "facts",
        "usage",
        "notes",
        "wants_notes",
        "wants_fixes",
        "cache",
        "max_hits_per_template",
        "_templates",
    )

    def __init__(
        self,
        profile: Any = None,
        facts: Any = None,
        usage: Any = None,
        notes: list[str] | None = None,
        wants_notes: bool = True,
        wants_fixes: bool = True,
        cache: dict[str, Any] | None = None,
        max_hits_per_template: int | None = None,
        _templates: dict[int, tuple[K8sObject, list[PodTemplate]]] | None = None,
    ) -> None:
        self.profile = profile
        self.facts = facts
        self.usage = usage
        self.notes = [] if notes is None else notes
        self.wants_notes = wants_notes
        self.wants_fixes = wants_fixes
        self.cache = {} if cache is None else cache
        self.max_hits_per_template = max_hits_per_template
        self._templates = {} if _templates is None else _templates

    def templates(self, obj: K8sObject) -> list[PodTemplate]:
        found = self._templates.get(id(obj))
        if found is not None and found[0] is obj:
            return found[1]
        templates = pod_templates(obj)
        if (
            not templates
            and obj.kind in ("TrainJob", "OptimizationJob")
            and obj.group == "trainer.kubeflow.org"
            and self.facts is not None
        ):
            runtime = self.facts.runtime_of(obj)  # its pods are the runtime's, with what it sets
            if runtime is not None:
                templates = train_job_templates(obj, runtime)
        elif obj.kind == "LLMInferenceService" and obj.group == "serving.kserve.io" and self.facts is not None:
            bases = self.facts.llm_bases_of(obj)  # the configs its baseRefs name, merged as KServe does
            if bases is not None:
                templates = llm_service_templates(obj, bases)
        elif (
            not templates
            and obj.kind in ("Workflow", "CronWorkflow")
            and obj.group == "argoproj.io"
            and self.facts is not None
        ):
            found = self.facts.context_template_of(obj)  # the template it runs, read only as context
            if found is not None:
                templates = argo_run_templates(obj, *found)
        elif obj.kind == "InferenceService" and obj.group == "serving.kserve.io" and self.facts is not None:
            named = self.facts.kserve_runtime_of(obj)  # the runtime its model names, merged as KServe does
            if named is not None:
                templates = kserve_service_templates(obj, *named)
        elif obj.kind == "InferenceService" and obj.group == "ome.io" and self.facts is not None:
            runtime = self.facts.ome_runtime_of(obj)  # the runtime it names, merged under it as OME does
            if runtime is not None:
                templates = ome_service_templates(obj, *runtime)
            elif not templates:
                from kubelint_ml.input.kinds.ome import without_runtime

                self.note(f"{obj.file}: {obj.ref.display()}: {without_runtime(obj)}")
        self._templates[id(obj)] = (obj, templates)
        dra = getattr(self.facts, "dra", None)
        gates = self.cache.get("pod_level_gates")
        if gates is None:
            version = parse_version(getattr(self.profile, "kubernetes_version", None))
            overrides = getattr(self.profile, "feature_gates", None)
            gates = self.cache["pod_level_gates"] = pod_level_gates(version, overrides)
        for t in templates:
            t.cache["gates"] = gates  # the cluster version's pod-level resources gates
            if dra is not None:
                t.cache["dra"] = dra  # the run's claims, templates and device classes
        if self.wants_notes:
            from kubelint_ml.input.workloads import search_note

            note = search_note(obj, templates)
            if note:
                self.note(f"{obj.file}: {note}")
            for t in templates:
                devices = template_devices(t) if not t.broken else None
                for why in devices.unknown if devices is not None else ():
                    self.note(f"{obj.file}: {t.describe()}: {why}; not counted as an accelerator")
                for what in devices.assumed if devices is not None else ():
                    self.note(f"{obj.file}: {t.describe()}: {what}")
                for claim, cls in devices.missing_classes if devices is not None else ():
                    self.note(
                        f"{obj.file}: {t.describe()}: DeviceClass '{cls}' of {claim.kind} '{claim.name}' is not among "
                        "the DeviceClasses of the inputs or --context: the scheduler cannot allocate the claim unless "
                        "the cluster has it"
                    )
                for name in unserved_names(t.spec, dra) if not t.broken else ():
                    self.note(
                        f"{obj.file}: {t.describe()}: {name} is not a device plugin resource known here and no "
                        "DeviceClass among the inputs or --context serves it (extendedResourceName), so whether it "
                        "is an accelerator is not known; not counted as one (give its DeviceClass with --context, "
                        "or list the class in profile.acceleratorDeviceClasses)"
                    )
        return templates

    def note(self, text: str) -> None:
        if self.wants_notes:
            self.notes.append(text)


def did_you_mean(name: str, choices: Any, cutoff: float = 0.6) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices`` (rule ids, config keys), or ""."""
    from difflib import get_close_matches

    close = get_close_matches(str(name), sorted(str(c) for c in choices), n=1, cutoff=cutoff)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _pods_at_once(tpl: PodTemplate) -> int:
    """How many pods of the template run at once, as far as the object says: its ``replicas``, or a Job's
    (or a CronJob's Jobs') ``parallelism`` (default 1)."""
    if isinstance(tpl.replicas, int) and not isinstance(tpl.replicas, bool):
        return max(tpl.replicas, 1)
    obj = tpl.obj
    if obj.group == "batch" and obj.kind in ("Job", "CronJob"):
        spec = obj.data.get("spec")
        if obj.kind == "CronJob":
            spec = (spec or {}).get("jobTemplate") if isinstance(spec, dict) else None
            spec = spec.get("spec") if isinstance(spec, dict) else None
        parallelism = spec.get("parallelism") if isinstance(spec, dict) else None
        if isinstance(parallelism, int) and not isinstance(parallelism, bool) and parallelism > 1:
            return parallelism
    return 1


def template_devices(tpl: PodTemplate) -> PodDevices | None:
    """The devices the template's DRA claims and DRA extended resources ask for (None: it uses none),
    resolved against the run's DRA objects (set on the template by :meth:`Context.templates`)."""
    if "dra.devices" in tpl.cache:
        return tpl.cache["dra.devices"]
    facts = tpl.cache.get("dra")
    found = None
    if uses_dra(tpl.spec, facts):
        found = pod_devices(
            tpl.spec, tpl.obj.ref.namespace, facts, pod_requests(tpl.spec), _pods_at_once(tpl), tpl.obj.file
        )
    tpl.cache["dra.devices"] = found
    return found


def gpu_share_annotated(tpl: PodTemplate) -> bool:
    """The pod asks KAI Scheduler for a share of a GPU by annotation."""
    annotations = tpl.metadata.get("annotations") if isinstance(tpl.metadata, dict) else None
    return isinstance(annotations, dict) and any(a in annotations for a in GPU_SHARE_ANNOTATIONS)


def template_placeholders(tpl: PodTemplate) -> list[str]:
    """``placeholder_accelerators(tpl.spec)``, computed once per template for every rule (do not mutate)."""
    found = tpl.cache.get("placeholder_accelerators")
    if found is None:
        found = tpl.cache["placeholder_accelerators"] = placeholder_accelerators(tpl.spec)
    return found


def is_accelerator_template(tpl: PodTemplate) -> bool:
    """An accelerator pod: some container asks for an accelerator resource, or a DRA claim (or a
    DRA extended resource) holds accelerator devices; an accelerator resource whose count is an
    unrendered placeholder (``{{inputs.parameters.gpus}}``, ``$GPUS``) makes one too, its count not
    known, and so does a share of a GPU asked of KAI Scheduler by annotation. A claim whose devices
    cannot be known, or that holds NICs or IMEX channels only, does
    not make one."""
    found = tpl.cache.get("accelerator")
    if found is None:
        use = accelerator_use(tpl.spec)
        found = use == ACCELERATOR or bool(template_placeholders(tpl))
        if not found:
            if use == NO_DEVICES and not tpl.spec.get("resourceClaims"):
                tpl.cache.setdefault("dra.devices", None)  # no claim, no name a DeviceClass may serve
            devices = template_devices(tpl)
            found = (devices is not None and devices.accelerator) or gpu_share_annotated(tpl)
        tpl.cache["accelerator"] = found
    return found


def is_training_workload(obj: K8sObject, templates: list[PodTemplate]) -> bool:
    return is_training_kind(obj) or any(is_accelerator_template(t) for t in templates)


class SkipUnit(Exception):
    """Raised by a template when it lacks facts (profile) to decide."""
