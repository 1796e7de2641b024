"""Documentation generated from the rule files: lists, one rule, docs/rules.md."""

from __future__ import annotations

import json
from collections.abc import Iterable

from kubelint_ml.engine.rulefile import Rule

FAMILY_TITLES = {
    "qos-and-limits": "QoS and limits",
    "accelerators": "Accelerators and their share of the node",
    "emptydir": "emptyDir and ephemeral storage",
    "priority": "Priority and preemption",
    "kubelet": "OOM kill mode and cgroup configuration",
    "cluster": "The cluster's own objects: LimitRanges, quotas, queues, gangs and volumes",
    "input": "Input and rule problems",
    "usage": "Observed usage (on only with a usage source)",
    "custom": "Custom rules",
}


def pseudo_rules() -> list[Rule]:
    """The engine's own findings (parse-error, schema-invalid, ...) as rules for the docs and
    `rules list`/`rules show`; the engine never runs them (see kubelint_ml.engine.api.PSEUDO_RULES)."""
    from kubelint_ml.engine.api import PSEUDO_RULES

    return [
        Rule.described(
            i, family=i.family, source="kubelint_ml/engine/api.py", check={"reportedBy": "kubelint-ml"}, builtin=True
        )
        for i in PSEUDO_RULES.values()
    ]


# What makes an accelerator pod, said by every rule whose severity or scope depends on it.
ACCELERATOR_PODS = (
    "Accelerator pods: a container asks for an accelerator resource (nvidia.com/gpu, nvidia.com/mig-*, nvidia.com/pgpu, "
    "amd.com/gpu, gpu.intel.com/*, habana.ai/gaudi, npu.intel.com/accel, aws.amazon.com/neuron*, google.com/tpu, and the device "
    "counts of HAMi and other vendors' plugins: huawei.com/Ascend*, hygon.com/dcunum, cambricon.com/vmlu, "
    "mthreads.com/vgpu, metax-tech.com/sgpu, iluvatar.ai/vgpu, enflame.com/vgcu, kunlunxin.com/xpu...; not a "
    "device's memory, cores or percentage such as huawei.com/Ascend910B-memory, except that HAMi's webhook gives "
    "a container whose limits name only nvidia.com/gpumem, nvidia.com/gpucores or nvidia.com/gpumem-percentage "
    "one nvidia.com/gpu, and one Enflame GCU slice for enflame.com/gcu-memory or gcu-core), or a DRA claim "
    "holds accelerator devices. A pod's resourceClaims are followed to their ResourceClaimTemplate or "
    "ResourceClaim (among the inputs and --context files), and each device request's DeviceClass is judged by "
    "the driver its selectors pin when the DeviceClass is among them (gpu.nvidia.com, gpu.amd.com, "
    "gpu.intel.com, gaudi.intel.com, neuron.aws.com, tpu.google.com; any other driver is no accelerator, "
    "whatever the class is called), else by its name (those, mig.nvidia.com, or a whole part of its first "
    "label such as gpu, tpu, npu or mig, unless another part such as nic, rdma or storage names something "
    "else); where neither tells (a driver known for nothing, as the DRA example driver.example.com), a "
    "selector of the class or the request comparing the device's type attribute with gpu, tpu or npu "
    '(device.attributes[...].type == "gpu") does; profile.acceleratorDeviceClasses lists a cluster\'s own '
    "and wins over all. DRA extended "
    "resources count by their class: deviceclass.resource.kubernetes.io/<class>, "
    "and a DeviceClass's extendedResourceName. A claim holding only NICs, storage or NVIDIA's IMEX channels "
    "does not make an accelerator pod, nor does a request for administrative access (adminAccess: a "
    "monitoring agent's, which holds no device), nor one whose devices cannot be known (--verbose says why). "
    "Claimed GPUs count for the pod's GPU share of its node (gpu-memory-share-mismatch, the memory fixes) as "
    "the device plugin's do."
)


def _about_accelerators(r: Rule) -> bool:
    """The rule's severity, scope or fix depends on which pods are accelerator pods."""
    return (
        bool(r.accelerator_severity)
        or r.workloads in ("accelerator", "training")
        or "GPU share" in (r.fix or {}).get("source", "")
        or (r.check.get("template"), (r.check.get("params") or {}).get("check")) in _ACCELERATOR_CHECKS
    )


# Checks whose scope is the accelerator pods though the rule says so in no field of its own: Kueue's
# missing queue label is reported on accelerator workloads only.
_ACCELERATOR_CHECKS = {("queue", "missing")}


def _severity(r: Rule) -> str:
    return r.severity + (f" ({r.accelerator_severity} for accelerator pods)" if r.accelerator_severity else "")


def fix_label(r: Rule) -> str:
    """``safe``, ``unsafe`` or ``-`` (no fix)."""
    return r.fix["applicability"] if r.fix else "-"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_list(rules: Iterable[Rule], fmt: str, enabled: set[str] | None = None) -> str:
    rules = sorted(rules, key=lambda r: (r.family, r.id))
    if fmt == "json":
        return (
            json.dumps(
                [
                    {
                        "id": r.id,
                        "severity": r.severity,
                        "acceleratorSeverity": r.accelerator_severity,
                        "family": r.family,
                        "title": r.title,
                        "enabled": r.id in enabled if enabled is not None else r.enabled,
                        "builtin": r.builtin,
                        "source": r.source,
                        "fix": r.fix,
                    }
                    for r in rules
                ],
                indent=2,
            )
            + "\n"
        )
    if fmt == "markdown":
        lines = ["| id | severity | family | what it finds | fix |", "|---|---|---|---|---|"]
        for r in rules:
            lines.append(
                f"| [`{r.id}`](#{r.id}) | {_md_cell(_severity(r))} | {r.family} | {_md_cell(r.title)} "
                f"| {fix_label(r)} |"
            )
        return "\n".join(lines) + "\n"
    width = max((len(r.id) for r in rules), default=10)
    lines = [f"{'ID':<{width}}  {'SEVERITY':<8}  {'FAMILY':<15}  {'FIX':<6}  TITLE"]
    for r in rules:
        off = "" if enabled is None or r.id in enabled else "  (off by default)"
        sev = r.severity + ("+" if r.accelerator_severity else "")
        lines.append(f"{r.id:<{width}}  {sev:<8}  {r.family:<15}  {fix_label(r):<6}  {r.title}{off}")
    lines.append("")
    lines.append("FIX: safe = applied by `check --fix`; unsafe = only with --unsafe-fixes; - = no automatic fix.")
    lines.append(
        "+ : raised to the accelerator severity for GPU/accelerator pods. `kubelint-ml rules show ID` for details."
    )
    return "\n".join(lines) + "\n"


def _examples(r: Rule, heading: str) -> list[str]:
    out: list[str] = []
    for kind, label in (("fail", "Fails"), ("pass", "Passes")):
        for ex in r.examples.get(kind, []):
            title = f" — {ex['title']}" if ex.get("title") else ""
            out.append(f"{heading} {label}{title}")
            out.append("")
            if ex.get("profile"):
                out.append("With the profile:")
                out.append("")
                out.append("```yaml")
                import yaml

                out.append(yaml.safe_dump(json.loads(json.dumps(ex["profile"])), sort_keys=False).rstrip())
                out.append("```")
                out.append("")
            out.append("```yaml")
            out.append(ex["manifest"].rstrip())
            out.append("```")
            if kind == "fail":
                lines = ", ".join(str(f["line"]) for f in ex.get("findings", []))
                out.append("")
                out.append(f"Findings at line{'s' if ',' in lines else ''} {lines}.")
            out.append("")
    return out


def render_rule(r: Rule) -> str:
    lines = [
        f"{r.id}  [{_severity(r)}]  family: {r.family or '-'}",
        "",
        r.title,
        "",
        "Why it matters:",
        r.description.strip(),
        "",
        "Fix:",
        r.remediation.strip(),
        "",
        f"Scope: {r.unit}"
        + (f", kinds {', '.join(r.kinds)}" if r.kinds else "")
        + (f", {r.workloads} workloads" if r.workloads != "all" else ""),
        "Check: " + (f"template {r.check['template']}" if "template" in r.check else "CEL"),
        "",
    ]

    if "reportedBy" in r.check:  # a pseudo-rule: reported by the tool itself, always on
        import textwrap

        lines[5] = textwrap.fill(lines[5], 76)
        lines[8] = textwrap.fill(lines[8], 76)
        lines[-3:] = ["Reported by the tool itself (always on; cannot be disabled).", ""]
    if _about_accelerators(r):
        import textwrap

        lines += [textwrap.fill(ACCELERATOR_PODS, 76), ""]
    if r.params:
        lines.append("Params: " + ", ".join(f"{k}={v}" for k, v in sorted(r.params.items())))
        lines.append("")
    lines += [_fix_text(r), ""]
    lines += _examples(r, "##")
    return "\n".join(lines).rstrip() + "\n"


def _fix_text(r: Rule) -> str:
    if not r.fix:
        return "Autofix: none."
    how = (
        "safe, applied by `check --fix`"
        if r.fix["applicability"] == "safe"
        else "unsafe, applied by `check --fix --unsafe-fixes`"
    )
    text = f"Autofix: {how}. Value from: {r.fix['source'].strip()}."
    if r.fix.get("description"):
        text += " " + " ".join(r.fix["description"].split())
    return text


def render_docs(rules: Iterable[Rule]) -> str:
    """docs/rules.md: every rule, grouped by family, and the pseudo-rules (kept in sync by a test)."""
    rules = list(rules)
    ids = {r.id for r in rules}
    rules = sorted(rules + [r for r in pseudo_rules() if r.id not in ids], key=lambda r: r.id)
    out = [
        "# kubelint-ml rules",
        "",
        "Generated from `rules/*.yaml` by `python -m kubelint_ml.engine.ruledocs > docs/rules.md`; do not edit by hand.",
        "",
        render_list(rules, "markdown"),
    ]
    families: dict[str, list[Rule]] = {}
    for r in rules:
        families.setdefault(r.family, []).append(r)
    order = list(FAMILY_TITLES) + sorted(set(families) - set(FAMILY_TITLES))
    for fam in order:
        if fam not in families:
            continue
        out.append(f"## {FAMILY_TITLES.get(fam, fam)}")
        out.append("")
        for r in families[fam]:
            out.append(f"### {r.id}")
            out.append("")
            out.append(
                f"**{r.title}.** Default severity: {_severity(r)}." + (" Off by default." if not r.enabled else "")
            )
            out.append("")
            out.append("**What it does and why it matters.** " + r.description.strip())
            out.append("")
            out.append("**Fix.** " + r.remediation.strip())
            out.append("")
            if _about_accelerators(r):
                head, _, body = ACCELERATOR_PODS.partition(": ")
                out.append(f"**{head}.** {body[0].upper()}{body[1:]}")
                out.append("")
            out.append(f"**Autofix.** {_fix_text(r)[len('Autofix: ') :]}")
            out.append("")
            if r.params:
                out.append(
                    "**Params** (override in `.kubelint-ml.yaml` under `overrides.<id>.params`): "
                    + ", ".join(f"`{k}` = `{v}`" for k, v in sorted(r.params.items()))
                )
                out.append("")
            out += _examples(r, "####")
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":  # pragma: no cover
    import sys

    from kubelint_ml.engine.rulefile import load_builtin_rules

    sys.stdout.write(render_docs(load_builtin_rules(validate=True)))
