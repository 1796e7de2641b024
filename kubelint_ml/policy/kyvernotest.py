"""``rules verify`` for Kyverno CLI tests: ``kyverno-test.yaml`` (``cli.kyverno.io/v1alpha1`` Test).

A Test names its ``policies`` and ``resources`` (files, relative to it), optionally a
``variables`` file (``Values``: ``namespaces``, ``namespaceSelector`` labels, per-resource
``request.operation``), a ``userinfo`` file (``UserInfo``: the request's user), a ``context``
file (``Context``: more objects, for ``resource.Get``/``List`` and params), ``paramResources``
(params of ValidatingAdmissionPolicies), ``clusterResources`` (more objects), ``exceptions``
(PolicyExceptions), and ``results``: ``{policy, rule, resources, kind, result, operation}``
with ``pass``, ``fail``, ``skip``, ``warn`` or ``error`` (a resource the policy does not match
at all passes, as in ``kyverno test``). Each (result, resource) pair is one case; a resource is
named ``name`` or ``namespace/name``, as ``kyverno test`` names them. Rule names
``autogen-<rule>`` and ``autogen-cronjob-<rule>`` are the rule as Kyverno's autogen applies it
to a controller's pods.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubelint_ml.policy import kyverno
from kubelint_ml.policy.load import PolicyError, _files, _yaml_docs
from kubelint_ml.policy.verify import CaseResult


def _docs(base: Path, entries: Any) -> list[tuple[str, Any, int]]:
    out: list[tuple[str, Any, int]] = []
    for entry in entries or []:
        entry = str(entry)
        if "://" in entry:
            raise PolicyError(f"{entry}: remote files are not read (offline)")
        path = base / entry
        if not path.exists():
            raise PolicyError(f"{path}: no such file or directory")
        for f in _files(path):
            if f.suffix in (".yaml", ".yml", ".json"):
                out.extend((str(f), d, line) for d, line in _yaml_docs(f) if isinstance(d, dict))
    return out


def _objects(docs: list[tuple[str, Any, int]]) -> list[Any]:
    """The resources as K8sObjects (``List`` documents unpacked), for pod templates and positions."""
    from kubelint_ml.input.loader import Document
    from kubelint_ml.input.objects import unpack

    out = []
    for i, (file, d, line) in enumerate(docs):
        out.extend(unpack(Document(i, d, line), file).objects)
    return out


def _name_matches(entry: str, obj: Any) -> bool:
    meta = kyverno._meta(obj.data)
    name = str(meta.get("name") or "")
    if "/" in entry:
        ns, _, n = entry.rpartition("/")
        return n == name and ns == str(meta.get("namespace") or "default")
    return entry == name


def _kind_matches(kind: str, obj: Any) -> bool:
    return not kind or kind.split("/")[-1] == obj.kind


def _values(base: Path, entry: Any) -> tuple[dict[str, dict], dict[tuple[str, str], str], list[dict]]:
    """Namespace labels, ``request.operation`` per (policy, resource) and Namespace objects from a
    Values file."""
    labels: dict[str, dict] = {}
    ops: dict[tuple[str, str], str] = {}
    namespaces: list[dict] = []
    if not entry:
        return labels, ops, namespaces
    for _, d, _ in _docs(base, [entry]):
        for ns in d.get("namespaces") or []:  # Namespace objects
            if isinstance(ns, dict) and kyverno._meta(ns).get("name"):
                labels[str(kyverno._meta(ns)["name"])] = dict(kyverno._submap(kyverno._meta(ns), "labels"))
                namespaces.append(ns)
        for ns in d.get("namespaceSelector") or []:
            if isinstance(ns, dict) and ns.get("name"):
                labels[str(ns["name"])] = dict(ns.get("labels") or {})
        for p in d.get("policies") or []:
            if not isinstance(p, dict):
                continue
            for r in p.get("resources") or []:
                values = (r or {}).get("values") or {}
                if isinstance(values, dict) and values.get("request.operation"):
                    ops[(str(p.get("name")), str(r.get("name")))] = str(values["request.operation"])
    return labels, ops, namespaces


def run_test(file: str, test: dict) -> list[CaseResult]:
    base = Path(file).parent
    tname = str(kyverno._meta(test).get("name") or base.parent.name)
    results = [r for r in test.get("results") or [] if isinstance(r, dict)]
    cases = [(r, str(res)) for r in results for res in r.get("resources") or []]

    def name_of(r: dict, res: str) -> str:
        rule = r.get("rule")
        return f"{tname}/{r.get('policy')}{'/' + str(rule) if rule else ''}/{r.get('kind')}/{res}"

    try:
        policy_docs = _docs(base, list(test.get("policies") or []) + list(test.get("exceptions") or []))
        rules = kyverno.build([d for d in policy_docs if _is_policy(d[1])])
        resources = _objects(_docs(base, test.get("resources")))
        extra: list[dict] = []  # params of VAPs, objects of the cluster (resource.*)
        more = list(test.get("paramResources") or []) + list(test.get("clusterResources") or [])
        for _, d, _ in _docs(base, more + ([test["context"]] if test.get("context") else [])):
            if str(d.get("apiVersion") or "").startswith("cli.kyverno.io/"):  # Context, ClusterResource
                extra.extend(o for o in ((d.get("spec") or {}).get("resources") or []) if isinstance(o, dict))
            else:
                extra.append(d)
        labels, ops, namespaces = _values(base, test.get("variables"))
        extra.extend(namespaces)
        user: dict = {}
        for _, d, _ in _docs(base, [test["userinfo"]] if test.get("userinfo") else []):
            user = dict(d.get("userInfo") or {})
            for key in ("roles", "clusterRoles"):
                if d.get(key):
                    user[key] = d[key]
    except (PolicyError, OSError, KeyError) as e:
        return [CaseResult(name_of(r, res), False, file, f"policies or resources: {e}") for r, res in cases]
    ctx = kyverno.Context.of([o.data for o in resources] + extra, labels)
    ctx.user_info = user
    ctx.unknown_namespaces_selected = False  # as the CLI: no labels but the test's values
    out = []
    for r, res in cases:
        name = name_of(r, res)
        expected = str(r.get("result") or "")
        policy = str(r.get("policy") or "")
        mine = [x for x in rules if x.policy == policy.rpartition("/")[2]]
        rule = str(r.get("rule") or "")
        if rule:
            base_rule = rule.removeprefix("autogen-cronjob-").removeprefix("autogen-")
            mine = [x for x in mine if x.rule in (rule, base_rule) or x.family not in ("ClusterPolicy", "Policy")]
        if not mine:
            out.append(
                CaseResult(name, False, file, f"no policy {policy}{' rule ' + rule if rule else ''} in the test")
            )
            continue
        unsupported = [x for x in mine if x.unsupported]
        if unsupported:
            out.append(CaseResult(name, False, file, f"not evaluated: {unsupported[0].unsupported}"))
            continue
        objs = [o for o in resources if _kind_matches(str(r.get("kind") or ""), o) and _name_matches(res, o)]
        if not objs:
            out.append(CaseResult(name, False, file, f"no resource {r.get('kind')} {res} among the test's resources"))
            continue
        operation = str(r.get("operation") or ops.get((policy, res), "CREATE"))
        got, why = _outcome(mine, objs[0], ctx, operation)
        # a resource the policy does not match is "excluded", which kyverno test counts as passing
        # whatever was expected (cmd/cli/kubectl-kyverno/commands/test/output.go)
        if got in (expected, "excluded") or (expected == "warn" and got == "fail"):
            out.append(CaseResult(name, True, file))
        else:
            out.append(CaseResult(name, False, file, f"expected {expected}, got {got}{': ' + why if why else ''}"))
    return out


def _is_policy(doc: dict) -> bool:
    group = str(doc.get("apiVersion") or "").split("/", 1)[0]
    return group in (kyverno.KYVERNO_CEL_GROUP, kyverno.KYVERNO_GROUP, kyverno.ADMISSION_GROUP)


def _outcome(rules: list[kyverno.Rule], obj: Any, ctx: kyverno.Context, operation: str) -> tuple[str, str]:
    statuses: list[tuple[str, str]] = []
    planned = kyverno.plan(rules, obj, ctx, operation)
    if not planned:
        return "excluded", ""
    for rule, t, _ in planned:
        o = kyverno.evaluate(rule, t, ctx)
        status = o.status
        if status == "error" and not rule.first_only:
            status = "fail"  # the API server's validator (failurePolicy Fail): an error denies
        statuses.append((status, "; ".join(o.messages)[:300]))
    for s in ("error", "fail", "pass"):
        for status, why in statuses:
            if status == s:
                return s, why
    return "skip", ""


def verify(tests: list[tuple[str, dict]]) -> list[CaseResult]:
    out: list[CaseResult] = []
    for file, test in tests:
        out.extend(run_test(file, test))
    return out
