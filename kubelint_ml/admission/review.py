"""An AdmissionReview judged by the engine that ``kubelint-ml check`` runs.

A :class:`Policy` is everything one config file decides: the rules (built-in
and custom, with enable/disable and overrides), the excludes, the profile and
the facts it gives, and the admission settings. It is built once per config
version and never changed, so the server can swap in a new one atomically.

The object of a review goes through the same steps as a document of a file:
:func:`~kubelint_ml.input.objects.unpack` (so a wrong ``metadata`` is the same
``parse-error``), :meth:`Engine.evaluate` with a :class:`Context` holding the
profile and its facts, then the config's excludes. Only positions differ: the
object arrives as JSON, so findings carry the field path (``spec.template...``)
and no line numbers.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kubelint_ml.engine.api import Context
from kubelint_ml.engine.cluster import CLUSTER_KINDS
from kubelint_ml.engine.context import CONTEXT_KINDS, Facts
from kubelint_ml.engine.core import Engine
from kubelint_ml.findings import Finding
from kubelint_ml.input.loader import Document, PosDict, PosList
from kubelint_ml.input.objects import unpack
from kubelint_ml.k8s.kept import object_kept
from kubelint_ml.run.config import Config, ConfigError, load_config
from kubelint_ml.run.facts import context_facts
from kubelint_ml.usage import USAGE_FAMILY

REVIEW_API = "admission.k8s.io/v1"
DISPLAY = "<admission>"  # the "file" of an object under review
MODES = ("enforce", "audit")

DEFAULTS: dict[str, Any] = {
    "mode": "enforce",
    "excludeNamespaces": [],
    "excludeLabels": {},
    "maxWarnings": 10,
    "maxWarningLength": 256,
    # The API server takes request bodies up to 3 MiB; a review of an UPDATE carries the
    # object twice (object and oldObject) plus the envelope.
    "maxBodyBytes": 8 * 1024 * 1024,
    "requestTimeoutSeconds": 5.0,
    # A review that cannot be finished in time is not a free pass: denied (enforce mode), with the
    # reason; "allow" admits it with a warning (docs/admission.md: failurePolicy and onTimeout).
    "onTimeout": "deny",
    "memoryLimitBytes": None,  # None: the cgroup's limit
}
MAX_DENY_FINDINGS = 10  # listed in the status message; the rest are counted
# A rule stops on a pod template once it has this many hits and an error among them (the verdict is
# settled): a review's cost stays small however many times an object repeats one mistake.
MAX_HITS_PER_TEMPLATE = 100
MAX_NOTE_LENGTH = 1024  # per audit annotation value


class PolicyError(Exception):
    """A config (or rule file) that cannot be used; one line naming the file."""


class ReviewError(Exception):
    """A request body that is not an AdmissionReview (answered 400)."""


class TooDeep(ReviewError):
    """An AdmissionReview nested deeper than the JSON decoder goes (the API server's own decoder
    takes 10,000 levels): its object is not judged, which is answered as a parse-error, not 400."""


log = logging.getLogger("kubelint_ml.admission")


class PolicyThread:
    """The one thread on which a config version's Rego engines are compiled, evaluated and dropped.

    The Rego interpreter's engine belongs to the thread that made it: used from another thread it
    fails (a panic), and released on another it is never freed (a warning, and its memory stays for
    good). The webhook loads a config on a reload thread, reviews on the event loop's worker threads
    and retires a config on yet another; so every step that touches a version's engines runs here.
    Evaluations do too: their helper process is forked from this thread, and a child keeps the
    identity of the thread that forked it. :meth:`close` (the config retired, or garbage collected)
    stops the helper and drops the engines here, then ends the thread.
    """

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kubelint-ml-policies")
        self.policies: Any = None  # the compiled policies it owns (kubelint_ml.policy.lint.Policies)

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on this thread. A failure comes back as a new exception without the failed
        frames (they hold the engines of the work that failed: they are released here)."""

        def run() -> tuple[bool, Any]:
            try:
                return True, fn(*args)
            except PolicyError as e:
                return False, PolicyError(str(e))
            except BaseException as e:  # noqa: BLE001 - a bug; logged here, with its frames
                log.exception("policy evaluation failed")
                return False, RuntimeError(f"{type(e).__name__}: {e}")

        ok, value = self._pool.submit(run).result()
        if not ok:
            raise value
        return value

    def close(self, wait: bool = True) -> None:
        owned, self.policies = self.policies, None
        try:
            if owned is not None:
                done = self._pool.submit(_release, owned)
                del owned  # the last reference is the job's, on this thread
                if wait:
                    done.result()
            self._pool.shutdown(wait=False)
        except RuntimeError:  # the interpreter is shutting down: no new work, the process ends
            pass

    def __del__(self) -> None:
        self.close(wait=False)


def _release(policies: Any) -> None:
    """Stop the policies' helper process and drop their engines (on their own thread)."""
    policies.close()
    policies.runtime.evaluators.clear()


@dataclass(slots=True)
class Policy:
    config: Config
    engine: Engine
    facts: Facts
    settings: dict
    rule_ids: frozenset
    source: str  # the config path, or "(defaults)"
    loaded_at: float = field(default_factory=time.time)
    # Context rules that lack facts in the profile: rule id -> what is missing (logged at load).
    missing_context: dict[str, str] = field(default_factory=dict)
    # What `check` would run with this config that admission does not (logged at load).
    not_run: list[str] = field(default_factory=list)
    # Rego and Gatekeeper policies under `rules:` (kubelint_ml.policy.lint.Policies), or None.
    policies: Any = None
    # Observed usage from the snapshot in `usage.snapshot` (kubelint_ml.usage.model.Usage), or None.
    usage: Any = None
    # Files whose change means a reload: the config's rule files, context files, kubelet configs, snapshot.
    watched: list[str] = field(default_factory=list)
    # The thread that owns the policies' engines (PolicyThread), or None without policies.
    owner: Any = None
    # The policies' evaluator is one helper process: one review at a time uses it.
    lock: threading.Lock = field(default_factory=threading.Lock)
    retired: bool = False  # replaced by a newer config, its helper process stopped, its engines dropped

    @property
    def mode(self) -> str:
        return self.settings["mode"]

    def retire(self) -> None:
        """Stop the policies' helper process and drop their engines (once no review can still be using
        this policy)."""
        with self.lock:
            self.retired = True
            if self.owner is not None:
                self.owner.close()


def load_policy(config_path: str | None, mode: str | None = None) -> Policy:
    """The policy of a config file (None: the defaults); raises PolicyError."""
    try:
        config = load_config(config_path)
    except ConfigError as e:
        raise PolicyError(str(e)) from None
    settings = dict(DEFAULTS)
    settings.update(config.admission)
    if mode:
        settings["mode"] = mode
    owner = PolicyThread() if config.rules_dirs else None
    try:
        policies = owner.call(_policies, config, float(settings["requestTimeoutSeconds"])) if owner else None
        if owner is not None:
            owner.policies = policies
        policy = _build(config, config_path, settings, policies)
    except BaseException:
        if owner is not None:
            owner.close()  # its helper process and engines
        raise
    policy.owner = owner if policies is not None else None
    if policies is None and owner is not None:
        owner.close()
    policy.missing_context = _missing_context(policy)
    policy.watched = _watched(config, policy.usage)
    return policy


def _build(config: Config, config_path: str | None, settings: dict, policies: Any) -> Policy:
    from kubelint_ml.run.facts import first_pass
    from kubelint_ml.run.selection import SelectionError, policy_off, select_rules

    policy_ids = policies.rule_ids() if policies is not None else set()
    try:
        rules, severity, all_ids = select_rules(config, (), verbose=False, policy_ids=policy_ids)
    except SelectionError as e:
        raise PolicyError(str(e)) from None
    if policies is not None:
        policies.choose(policy_off(config, policy_ids), severity)
    try:
        facts = first_pass([], config, None)[0]
        context_facts(facts, list(config.context), [], config)
    except ConfigError as e:
        raise PolicyError(str(e)) from None
    usage, not_run = _usage(config)
    if policies is not None:  # Kyverno rules not evaluated (other rule forms, network libraries)
        not_run = list(not_run) + [f.message for f in policies.load_findings()]
    if usage is None:  # as `check`: the usage rules run only with a usage source
        rules = [r for r in rules if r.family != USAGE_FAMILY]
    engine = Engine(rules, severity_overrides=severity, known_rule_ids=all_ids)
    return Policy(
        config,
        engine,
        facts,
        settings,
        frozenset(r.id for r in rules) | (frozenset(policies.rule_ids()) if policies is not None else frozenset()),
        str(config_path) if config_path else "(defaults)",
        policies=policies,
        usage=usage,
        not_run=not_run,
    )


# A policy rule that hit a limit in a review is skipped (a rule-error finding in each review) until
# this many seconds have passed, or the config is reloaded.
POLICY_READMIT_SECONDS = 300.0


def _policies(config: Config, timeout: float) -> Any:
    """The Rego and Gatekeeper policies under the config's ``rules:``, as ``check`` compiles them.

    Gatekeeper's ``data.inventory`` comes from the config's ``context:`` files (at admission there
    is no run to take it from). One evaluation may take at most 80% of the review's time limit.
    """
    if not config.rules_dirs:
        return None
    from kubelint_ml.policy.lint import compile_policies
    from kubelint_ml.policy.load import PolicyError as Unusable

    try:
        policies = compile_policies(list(config.rules_dirs), context_paths=list(config.context))
    except Unusable as e:
        raise PolicyError(str(e)) from None
    if policies is None:
        return None
    bounded = policies.runtime.bounded
    bounded.time_limit = min(bounded.time_limit, max(0.2, timeout * 0.8))
    policies.readmit_after(POLICY_READMIT_SECONDS)
    policies.prepare([], config.limits, None, 1)
    return policies


def _usage(config: Config) -> tuple[Any, list[str]]:
    """Observed usage from ``usage.snapshot`` (read once per config version), and what is not run.

    A review has a few seconds at most: admission does not query Prometheus. ``usage.prometheus``
    is said at start-up instead, with the way to get the same rules (a snapshot, refreshed by a job).
    """
    section = getattr(config, "usage", None)
    if not section:
        return None, []
    from kubelint_ml.usage.model import UsageError
    from kubelint_ml.usage.source import settings

    try:
        s = settings(section, config_path=config.path)
        if not s.snapshot:
            return None, [
                "observed-usage rules with usage.prometheus: a review does not query Prometheus; export a "
                "snapshot (kubelint-ml usage export) and give it as usage.snapshot"
            ]
        from kubelint_ml.usage.snapshot import read

        usage = read(
            s.snapshot,
            cluster=s.cluster,
            name="usage.snapshot",
            default_namespace=s.namespace,
            min_samples=s.min_samples,
            headroom=s.headroom,
        )
    except UsageError as e:
        raise PolicyError(f"{config.path}: {e}") from None
    return usage, []


def _watched(config: Config, usage: Any) -> list[str]:
    """The files (and directories, for files added) a policy was built from, besides the config."""
    from kubelint_ml.input.sources import SourceError, collect

    out: list[str] = []
    for d in config.rules_dirs:
        out.append(d)
        if os.path.isdir(d):
            try:
                out.extend(os.path.join(d, n) for n in sorted(os.listdir(d)))
            except OSError:
                pass
    out.extend(config.profile.kubelet_config_paths())
    for path in config.context:
        out.append(path)
        try:
            out.extend(s.real for s in collect([path]) if s.real != "-")
        except SourceError:
            pass
    if usage is not None and usage.source:
        out.append(usage.source)
    return list(dict.fromkeys(out))


def _missing_context(policy: Policy) -> dict[str, str]:
    """Rules that judge against other objects the cluster has, where the profile does not describe them.

    In ``check`` those objects can come from the inputs; at admission only the
    profile gives them, so this is said once at load (and each skip goes to the
    review's audit annotations).
    """
    ids = policy.rule_ids
    profile = policy.config.profile
    out = {}
    if not policy.facts.priority_classes:
        for rid in ("unknown-priority-class", "preemption-consumes-backoff"):
            if rid in ids:
                out[rid] = "no PriorityClasses in the profile (profile.priorityClasses)"
    if "group-oom-kill-multiprocess" in ids:
        if profile.cgroup_version is None or not profile.kubernetes_version:
            out["group-oom-kill-multiprocess"] = "no cgroupVersion or kubernetesVersion in the profile"
        elif not policy.facts.kubelet_configs:
            out["group-oom-kill-multiprocess"] = "no KubeletConfiguration in the profile (profile.kubeletConfig)"
    if not profile.node_pools:
        for rid in ("gpu-memory-share-mismatch", "emptydir-exceeds-ephemeral-storage"):
            if rid in ids:
                out[rid] = "no nodePools in the profile (node types from the built-in GPU catalog only)"
    return out


# ----------------------------------------------------------------------------
# Objects from JSON


class NestedTooDeep(Exception):
    """A value nested deeper than the limit; ``path`` leads to the first dict or list past it."""

    def __init__(self) -> None:
        super().__init__("nested too deep")
        self.path: list = []


def positioned(value: Any, max_depth: int | None = None) -> Any:
    """A JSON value as the loader's mappings and lists, so that findings get their field paths.

    The object arrives as JSON, not as a file: there are no lines. Each key and
    item is numbered in document order instead (as its "line", column 0), so
    that findings sort as ``check`` sorts those of the same object in a file.
    With ``max_depth``, a dict or list nested deeper (the value itself is level 1, as the loader
    counts ``limits.maxDepth``) raises :class:`NestedTooDeep`.
    """
    n = 0
    limit = max_depth if max_depth is not None else 1 << 30

    def build(node: Any, level: int) -> Any:  # JSON's dicts and lists (exact types); scalars are left as they are
        nonlocal n
        if level > limit:
            raise NestedTooDeep()
        deeper = level + 1
        if type(node) is dict:
            out = PosDict()
            out.start = (n, 0)
            lc = {}
            for k, v in node.items():
                n += 1
                lc[k] = (n, 0, n, 0)
                try:
                    out[k] = build(v, deeper) if type(v) is dict or type(v) is list else v
                except NestedTooDeep as e:
                    e.path.append(k)
                    raise
            out.lc = lc
            return out
        seq = PosList()
        seq.start = (n, 0)
        lines = []
        for i, v in enumerate(node):
            n += 1
            lines.append((n, 0))
            try:
                seq.append(build(v, deeper) if type(v) is dict or type(v) is list else v)
            except NestedTooDeep as e:
                e.path.append(i)
                raise
        seq.lc = lines
        return seq

    return build(value, 1) if type(value) is dict or type(value) is list else value


def lint_object(
    policy: Policy, data: Any, request: dict | None = None, deadline: float | None = None
) -> tuple[list[Finding], list[str]]:
    """Findings (excludes applied; suppressed ones kept, marked) and skip notes for one object.

    ``request``: the AdmissionReview request it came in, for Gatekeeper templates' ``input.review``
    (without one, a CREATE, as ``check`` builds it). ``deadline`` (``time.perf_counter()``): the
    policies are not evaluated past it (the review was answered for its time limit meanwhile; one
    used all the same is denied by a rule-error, never passed without them)."""
    from kubelint_ml.engine.core import parse_error
    from kubelint_ml.input.loader import locate, render_path
    from kubelint_ml.run.lint import apply_excludes

    try:
        tree = positioned(data, policy.config.limits.max_depth)
    except NestedTooDeep as e:  # as `check` says of a file so nested (and nothing recurses that deep)
        return [nested_too_deep(policy, render_path(tuple(reversed(e.path))))], []
    doc = Document(0, tree, 0)
    unpacked = unpack(doc, DISPLAY)
    findings: list[Finding] = []
    for prob in unpacked.problems:
        _, _, found = locate(prob.root, prob.path)
        findings.append(parse_error(DISPLAY, 0, 0, prob.message, 0, prob.ref, render_path(found)))
    facts = policy.facts
    if any(o.kind in CONTEXT_KINDS for o in unpacked.objects):
        # As `check` on a file holding this object: the object is among the facts too.
        facts = _facts_with(policy, unpacked.objects)
    ctx = Context(
        profile=policy.config.profile,
        facts=facts,
        usage=policy.usage,
        wants_notes=True,
        wants_fixes=False,  # a validating webhook returns no patches
        max_hits_per_template=MAX_HITS_PER_TEMPLATE,
    )
    # The API server drops a gated field with its gate off before validating webhooks see the object: one
    # that reaches the review with the field shows the gate on (as a stored object does in an audit).
    for obj in unpacked.objects:
        for key in object_kept(obj.group, obj.kind, obj.data):
            ctx.cache[key] = True
    for obj in unpacked.objects:
        findings.extend(policy.engine.evaluate(obj, ctx))
    if policy.policies is not None:
        if request is not None:
            request = dict(request, object=doc.data)
        with policy.lock:
            if deadline is not None and time.perf_counter() >= deadline:
                findings.append(_late(unpacked.objects[0].ref if unpacked.objects else None))
            elif not policy.retired:  # (a review in a thread that outlived its time limit and its config)
                policy.owner.call(_evaluate, policy.policies, [(doc, unpacked.objects)], findings, ctx.notes, request)
    apply_excludes(findings, policy.config)
    findings.sort(key=Finding.sort_key)
    return findings, list(dict.fromkeys(ctx.notes))


def _late(ref: Any) -> Finding:
    from kubelint_ml.engine.api import RULE_ERROR

    return Finding(
        RULE_ERROR,
        "error",
        "the policies were not evaluated: the review's time limit passed while it waited for them",
        "Retry; if it recurs, the policies are slower than admission.requestTimeoutSeconds allows.",
        DISPLAY,
        0,
        0,
        "",
        ref,
    )


def nested_too_deep(policy: Policy, path: str = "") -> Finding:
    from kubelint_ml.engine.core import parse_error

    limit = policy.config.limits.max_depth
    return parse_error(
        DISPLAY, 0, 0, f"nesting deeper than {limit} levels (limits.maxDepth); document not linted", 0, None, path
    )


def _evaluate(policies: Any, units: list, into: list[Finding], notes: list[str], request: dict | None) -> None:
    policies.defer(DISPLAY, units, into, notes, request)
    policies.flush()


def _facts_with(policy: Policy, objects: list) -> Facts:
    """The policy's facts with the reviewed objects among them (first, as the file being linted)."""
    base = policy.facts
    facts = Facts()
    for obj in objects:
        facts.add_object(obj)
    for pc in base.priority_class_objects:
        facts.priority_class_objects.append(pc)
        if pc.name:
            facts.priority_classes.setdefault(pc.name, pc)
    for name, value in base.workload_priority_classes.items():
        facts.workload_priority_classes.setdefault(name, value)
        facts.workload_priority_class_files.setdefault(name, base.workload_priority_class_files.get(name, ""))
    facts.kubelet_configs.extend(base.kubelet_configs)
    facts.crds.extend(base.crds)
    # the controllers' objects the context gives: a reviewed TrainJob runs its (Cluster)TrainingRuntime, a
    # reviewed runtime is judged with the context's TrainJobs, a Workflow with the runs of its templates
    facts.train_jobs.extend(base.train_jobs)
    for key, runtime in base.training_runtimes.items():
        facts.training_runtimes.setdefault(key, runtime)
        if key in base.training_runtime_files:
            facts.training_runtime_files.setdefault(key, base.training_runtime_files[key])
    facts.argo_runs.extend(base.argo_runs)
    for ref, spec in base.llm_configs.items():
        facts.llm_configs.setdefault(ref, spec)
    for key, spec in base.kserve_runtimes.items():
        facts.kserve_runtimes.setdefault(key, spec)
    if not any(o.kind in CLUSTER_KINDS for o in objects):
        facts.cluster = base.cluster  # the context's cluster (nodes, LimitRanges, queues), unchanged
    else:
        facts.cluster.context_files |= base.cluster.context_files  # (what the context's objects came from)
    facts.add_profile(policy.config.profile)
    facts.dra = base.dra  # the context's claims and classes (a reviewed claim object holds no pods)
    return facts


# ----------------------------------------------------------------------------
# Reviews


@dataclass(slots=True)
class Verdict:
    """What one review decided, for the response, the log and the metrics."""

    uid: str
    allowed: bool
    response: dict
    findings: list[Finding] = field(default_factory=list)
    would_deny: bool = False  # error findings (denied in enforce mode; only counted in audit mode)
    excluded: str = ""  # why the object was not reviewed
    request: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def parse_review(body: bytes) -> dict:
    """The ``request`` of an AdmissionReview body; raises ReviewError."""
    try:
        review = json.loads(body)
    except RecursionError:
        raise TooDeep("body is not JSON that can be decoded here: nested deeper than the decoder goes") from None
    except ValueError as e:
        raise ReviewError(f"body is not JSON: {str(e)[:200]}") from None
    if not isinstance(review, dict):
        raise ReviewError("body is not a JSON object")
    if review.get("kind") != "AdmissionReview":
        raise ReviewError(f"kind is {str(review.get('kind'))[:100]!r}, not AdmissionReview")
    if review.get("apiVersion") != REVIEW_API:
        raise ReviewError(f"apiVersion is {str(review.get('apiVersion'))[:100]!r}, not {REVIEW_API}")
    request = review.get("request")
    if not isinstance(request, dict):
        raise ReviewError("AdmissionReview has no request")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise ReviewError("request.uid is missing")
    return request


def review(policy: Policy, request: dict, deadline: float | None = None) -> Verdict:
    """Judge one AdmissionReview request under ``policy`` (``deadline``: see :func:`lint_object`)."""
    uid = request["uid"]
    obj = request.get("object")
    namespace = request.get("namespace") or ""
    settings = policy.settings
    why = ""
    if request.get("operation") not in (None, "CREATE", "UPDATE"):
        why = f"operation {request.get('operation')}"
    elif not isinstance(obj, dict):
        why = "no object"
    elif namespace and namespace in settings["excludeNamespaces"]:
        why = f"namespace {namespace} is excluded"
    else:
        label = _excluded_label(obj, settings["excludeLabels"])
        if label:
            why = f"label {label} is excluded"
    if why or not isinstance(obj, dict):
        return Verdict(uid, True, _response(uid, True), excluded=why, request=request)
    if namespace and isinstance(obj.get("metadata"), dict) and not obj["metadata"].get("namespace"):
        # The API server fills metadata.namespace in after admission: judge (and exclude) by the request's.
        obj = dict(obj)
        obj["metadata"] = dict(obj["metadata"], namespace=namespace)
    findings, notes = lint_object(policy, obj, request, deadline)
    return verdict_of(policy, request, findings, notes)


def verdict_of(policy: Policy, request: dict, findings: list[Finding], notes: list[str]) -> Verdict:
    """The answer to ``request`` given its object's findings."""
    uid = request["uid"]
    settings = policy.settings
    active = [f for f in findings if f.suppressed is None]
    errors = [f for f in active if f.severity == "error"]
    warnings = [f for f in active if f.severity == "warning"]
    enforce = policy.mode == "enforce"
    allowed = not (errors and enforce)
    resp = _response(uid, allowed)
    if enforce:
        if errors:
            resp["status"] = {"code": 403, "reason": "Forbidden", "message": deny_message(errors)}
        if warnings:
            resp["warnings"] = warning_texts(warnings, settings["maxWarnings"], settings["maxWarningLength"])
    annotations = {}
    if active:
        annotations["findings"] = _clip(", ".join(sorted({f"{f.rule}={f.severity}" for f in active})), MAX_NOTE_LENGTH)
    if notes:
        annotations["skipped"] = _clip("; ".join(_short_note(n) for n in notes), MAX_NOTE_LENGTH)
    if annotations:
        resp["auditAnnotations"] = annotations
    return Verdict(uid, allowed, resp, active, bool(errors), request=request, notes=notes)


def _response(uid: str, allowed: bool) -> dict:
    return {"uid": uid, "allowed": allowed}


def envelope(response: dict) -> dict:
    return {"apiVersion": REVIEW_API, "kind": "AdmissionReview", "response": response}


def _excluded_label(obj: dict, excluded: dict) -> str:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    if not isinstance(labels, dict) or not excluded:
        return ""
    for key, value in excluded.items():
        if key in labels and (value == "*" or labels[key] == value):
            return f"{key}={labels[key]}"
    return ""


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def _short_note(note: str) -> str:
    # "<admission>: Job/ns/name: rule skipped: why" -> "rule skipped: why"
    parts = note.split(": ", 2)
    return parts[2] if len(parts) == 3 and parts[0] == DISPLAY else note


def finding_text(f: Finding) -> str:
    """``rule-id: message (at path)``: one finding as the API client sees it."""
    at = f" (at {f.path})" if f.path else ""
    return f"{f.rule}: {f.message}{at}"


def deny_message(errors: list[Finding]) -> str:
    shown = errors[:MAX_DENY_FINDINGS]
    text = f"kubelint-ml: {len(errors)} error finding{'s' if len(errors) != 1 else ''}: "
    text += "; ".join(_clip(finding_text(f), 512) for f in shown)
    if len(errors) > len(shown):
        text += f"; and {len(errors) - len(shown)} more"
    return text


def warning_texts(warnings: list[Finding], limit: int, length: int) -> list[str]:
    """At most ``limit`` warnings of at most ``length`` characters; the last says how many were left out."""
    if limit <= 0:
        return []
    texts = [_clip(finding_text(f), length) for f in warnings]
    if len(texts) > limit:
        rest = len(texts) - (limit - 1)
        texts = texts[: limit - 1] + [f"kubelint-ml: and {rest} more warnings"]
    return texts


_WARM_UP_OBJECT = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "warm-up", "namespace": "default"},
    "spec": {
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}, {"name": "scratch", "emptyDir": {}}],
                "initContainers": [{"name": "fetch", "image": "busybox", "resources": {"limits": {"memory": "1Gi"}}}],
                "containers": [
                    {
                        "name": "train",
                        "image": "trainer",
                        "command": ["torchrun", "--nproc_per_node=8", "train.py"],
                        "volumeMounts": [
                            {"name": "shm", "mountPath": "/dev/shm"},
                            {"name": "scratch", "mountPath": "/s"},
                        ],
                        "resources": {
                            "requests": {"cpu": "8", "memory": "64Gi"},
                            "limits": {"nvidia.com/gpu": "8", "memory": "64Gi"},
                        },
                    }
                ],
                "nodeSelector": {"node.kubernetes.io/instance-type": "p4d.24xlarge"},
            }
        }
    },
}


def warm_up(policy: Policy) -> None:
    """One review before serving: lazy imports, tables and caches are built then, not on the first request.

    Then what the process holds so far (modules, rule tables, schemas, the policy) is moved out of
    the garbage collector's generations (``gc.freeze``): a full collection no longer walks it, which
    took about 2 ms, in the middle of some review. And the youngest generation is collected after
    20,000 allocations, not 700: a review builds its object's tree (acyclic: reference counting frees
    it), and a 1.5 MB Pod's 300,000 nodes cost a third of its review in collections that found nothing.
    """
    import gc

    review(policy, {"uid": "warm-up", "operation": "CREATE", "namespace": "default", "object": _WARM_UP_OBJECT})
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


GC_THRESHOLDS = (20_000, 20, 20)
