"""Policy evaluation cost per document per policy file, on the corpus.

    python bench/policy.py [--jobs N] [--rounds R]
    python bench/policy.py --kyverno [--count N] [--jobs N] [--rounds R]

Runs the lint of ../shared/corpus in this process with the built-in rules
only, and again with five gatekeeper-library templates (and a constraint of
each) plus the conftest policies in fixtures/policies/conftest; the
difference of the best times, divided by documents x policy files, is the
cost of the policies. Both runs' built-in findings must be equal (exit 1
otherwise). Needs ../shared beside the project.

``--kyverno``: the kyverno-policies library's Pod policies (ValidatingPolicies and validate.cel
ClusterPolicies that match Pods and are evaluated offline; N of them, all by default) against
the same number of gatekeeper-library templates (each with its first sample constraint): the
cost of each set over the built-in run, and their ratio (goal: at most 2).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CORPUS = ROOT.parent / "shared" / "corpus"
LIBRARY = ROOT.parent / "shared" / "policy-suites" / "gatekeeper-library" / "library"
TEMPLATES = (
    "general/containerlimits",
    "general/requiredlabels",
    "general/allowedrepos",
    "pod-security-policy/privileged-containers",
    "general/replicalimits",
)
GOAL_MS = 0.2


def policy_dir(tmp: Path) -> Path:
    out = tmp / "gk"
    for name in TEMPLATES:
        src = LIBRARY / name
        dst = out / name.replace("/", "-")
        dst.mkdir(parents=True)
        shutil.copy(src / "template.yaml", dst / "template.yaml")
        shutil.copy(sorted((src / "samples").iterdir())[0] / "constraint.yaml", dst / "constraint.yaml")
    return out


KYVERNO = ROOT.parent / "shared" / "policy-suites" / "kyverno-policies"


def kyverno_pod_policies(tmp: Path) -> list[Path]:
    """The library's Pod policies evaluated offline, one file each (a copy, in ``tmp``)."""
    from kubelint_ml.policy import kyverno
    from kubelint_ml.policy.load import PolicyError, _yaml_docs

    out = []
    for d in sorted(KYVERNO.glob("*/**/artifacthub-pkg.yml")):
        if not d.relative_to(KYVERNO).parts[0].endswith(("-vpol", "-cel")):
            continue
        for f in sorted(d.parent.glob("*.yaml")):
            try:
                docs = [(str(f), doc, line) for doc, line in _yaml_docs(f) if isinstance(doc, dict)]
                rules = kyverno.build(docs)
            except PolicyError:
                continue
            if rules and all(r.pods and not r.unsupported for r in rules):
                dst = tmp / "kyverno" / f"{len(out):03d}-{f.name}"
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(f, dst)
                out.append(dst)
    return out


def gatekeeper_templates(tmp: Path, count: int) -> list[Path]:
    """``count`` library templates with their first sample constraint (a directory each)."""
    out = []
    for tpl in sorted(LIBRARY.glob("*/*/template.yaml")):
        samples = sorted((tpl.parent / "samples").glob("*/constraint.yaml"))
        if not samples or len(out) >= count:
            continue
        dst = tmp / "gk-all" / f"{len(out):03d}"
        dst.mkdir(parents=True)
        shutil.copy(tpl, dst / "template.yaml")
        shutil.copy(samples[0], dst / "constraint.yaml")
        out.append(dst)
    return out


def kyverno_main(args: argparse.Namespace) -> int:
    from kubelint_ml.cli import select_rules
    from kubelint_ml.policy.cli import load_policies
    from kubelint_ml.run.config import Config
    from kubelint_ml.run.inputs import RunInputs
    from kubelint_ml.run.lint import run

    config = Config()
    rules, severity, ids = select_rules(config, (), False)
    with tempfile.TemporaryDirectory() as tmp:
        ky = kyverno_pod_policies(Path(tmp))
        gk = gatekeeper_templates(Path(tmp), len(ky))
        n = min(len(ky), len(gk), args.count or len(ky))
        sets = {"built-in": [], "gatekeeper": [str(p) for p in gk[:n]], "kyverno": [str(p) for p in ky[:n]]}
        best = dict.fromkeys(sets, float("inf"))
        found = {}
        for _ in range(args.rounds):
            for name, paths in sets.items():
                policies = load_policies(paths) if paths else None
                t = time.perf_counter()
                result, _ = run(
                    [str(CORPUS)],
                    RunInputs(config, rules, jobs=args.jobs, severity=severity, all_rule_ids=ids, policies=policies),
                )
                best[name] = min(best[name], time.perf_counter() - t)
                found[name] = sum(1 for f in result.findings if "/" in f.rule)
                if policies is not None:
                    policies.close()
    base = best["built-in"]
    cost = {k: best[k] - base for k in ("gatekeeper", "kyverno")}
    print(f"corpus: {result.files} files, {result.documents} documents; jobs {args.jobs}; best of {args.rounds}")
    print(f"{n} policies each (of {len(ky)} Kyverno Pod policies)")
    print(f"built-in rules only: {base * 1000:.0f} ms")
    for k in cost:
        print(f"{k}: {best[k] * 1000:.0f} ms, cost {cost[k] * 1000:.0f} ms ({found[k]} policy findings)")
    ratio = cost["kyverno"] / cost["gatekeeper"] if cost["gatekeeper"] > 0 else float("inf")
    print(f"Kyverno / Gatekeeper cost: {ratio:.2f} (goal <= 2)")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--kyverno", action="store_true", help="Kyverno Pod policies against Gatekeeper templates")
    ap.add_argument("--count", type=int, default=0, help="with --kyverno: this many policies of each")
    args = ap.parse_args()
    if args.kyverno:
        if not (CORPUS.is_dir() and LIBRARY.is_dir() and KYVERNO.is_dir()):
            print("needs ../shared/corpus and ../shared/policy-suites beside the project", file=sys.stderr)
            return 2
        return kyverno_main(args)
    if not (CORPUS.is_dir() and LIBRARY.is_dir()):
        print("needs ../shared/corpus and ../shared/policy-suites beside the project", file=sys.stderr)
        return 2
    from kubelint_ml.cli import select_rules
    from kubelint_ml.policy.cli import load_policies
    from kubelint_ml.run.config import Config
    from kubelint_ml.run.inputs import RunInputs
    from kubelint_ml.run.lint import run

    config = Config()
    rules, severity, ids = select_rules(config, (), False)
    with tempfile.TemporaryDirectory() as tmp:
        gk = policy_dir(Path(tmp))
        conftest = ROOT / "fixtures" / "policies" / "conftest"
        paths = [str(gk), str(conftest)]
        files = len(TEMPLATES) + len([p for p in conftest.glob("*.rego") if not p.name.endswith("_test.rego")])

        def once(with_policies: bool) -> tuple[float, object]:
            policies = load_policies(paths) if with_policies else None
            t = time.perf_counter()
            result, _ = run(
                [str(CORPUS)],
                RunInputs(config, rules, jobs=args.jobs, severity=severity, all_rule_ids=ids, policies=policies),
            )
            elapsed = time.perf_counter() - t
            if policies is not None:
                policies.close()
            return elapsed, result

        best = {False: float("inf"), True: float("inf")}
        results = {}
        for _ in range(args.rounds):
            for flag in (False, True):
                elapsed, results[flag] = once(flag)
                best[flag] = min(best[flag], elapsed)
    base, with_pol = results[False], results[True]
    builtin = [f for f in with_pol.findings if "." not in f.rule and "/" not in f.rule]
    same = [f.to_dict() for f in builtin] == [f.to_dict() for f in base.findings]
    policy_findings = len(with_pol.findings) - len(builtin)
    docs = base.documents
    per = (best[True] - best[False]) * 1000 / (docs * files)
    print(
        f"corpus: {base.files} files, {docs} documents, {base.objects} objects; jobs {args.jobs}; best of {args.rounds}"
    )
    print(f"policy files: {files} ({len(TEMPLATES)} templates + {files - len(TEMPLATES)} Rego files)")
    print(
        f"built-in rules only: {best[False] * 1000:.1f} ms; with policies: {best[True] * 1000:.1f} ms "
        f"({policy_findings} policy findings)"
    )
    print(f"policy cost: {per:.3f} ms per document per policy file (goal <= {GOAL_MS})")
    print(f"built-in findings unchanged: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
