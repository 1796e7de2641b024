#!/usr/bin/env python3
"""Time bounds on hostile input: the hardening tests check what happens, this checks how fast.

One command (from the repository root)::

    python bench/bounds.py              # every case, best of 3; exit 1 when one is over its bound
    python bench/bounds.py --rounds 1 -k load

Each case is one piece of work from the hardening tests (tests/test_hardening_*.py,
tests/test_schema.py): an alias or merge-key bomb, deep nesting, a node flood,
symlink loops, manifests that repeat one thing 4,000 times, schema validation,
fuzzed inputs, hostile trees through the command line. The bounds are the ones
those tests asserted before timing moved here: what they catch is work that
grows faster than the input (a quadratic template, an exponential merge), not a
slow day. The best of the rounds is compared with the bound.
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import bombs  # noqa: E402  (tests/bombs.py: the hostile input the tests use too)

from kubelint_ml.input.loader import load  # noqa: E402
from kubelint_ml.input.sources import collect  # noqa: E402

GOOD = b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: good\n"
FAN_OUT = 4000  # as tests/test_hardening_engine.py
CORPUS = REPO.parent / "shared" / "corpus"


@dataclass
class Case:
    name: str
    bound: float  # seconds
    run: Callable[[], object]


def _all_rules() -> list:
    from kubelint_ml.engine.rulefile import load_builtin_rules

    rules = load_builtin_rules()
    for r in rules:
        r.enabled = True
    return rules


def _lint(data: bytes) -> None:
    from kubelint_ml.run.lint import lint_text

    lint_text(data, RULES)


def _refused(data: bytes, words: str) -> Callable[[], None]:
    def run() -> None:
        problems = load(data).problems
        assert problems and words in problems[0].message, problems

    return run


def _symlink_loops() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        (root / "a" / "b").mkdir(parents=True)
        (root / "a" / "pod.yaml").write_bytes(GOOD)
        os.symlink("..", root / "a" / "b" / "up")
        os.symlink(".", root / "a" / "self")
        os.symlink("loop2", root / "loop1")
        os.symlink("loop1", root / "loop2")
        assert [s.path for s in collect([str(root)])] == [str(root / "a" / "pod.yaml")]


def _schema_per_object() -> None:
    from kubelint_ml.k8s.schema import SchemaValidator, bundled_versions

    validator = SchemaValidator(bundled_versions()[-1])
    pod = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "t"},
        "spec": {
            "replicas": "x",
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        },
    }
    validator.validate(pod)
    start = time.perf_counter()
    for _ in range(50):
        validator.validate(pod)
    per_object = (time.perf_counter() - start) / 50
    assert per_object < 0.02, f"{per_object * 1000:.1f} ms per object (bound 20 ms)"


def _schema_alias_bomb() -> None:
    from kubelint_ml.k8s.schema import SchemaValidator, bundled_versions

    node: list = ["lol"] * 10
    for _ in range(8):
        node = [node] * 10
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "t", "labels": {"huge": node}},
        "spec": {"replicas": node},
    }
    assert SchemaValidator(bundled_versions()[-1]).validate(obj)


def _fuzzed(count: int = 300) -> None:
    """Random bytes and mutated corpus files, each linted: the slowest must stay under 10 s."""
    rng = random.Random(11)
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml", ".json")) if CORPUS.is_dir() else []
    slowest = 0.0
    for i in range(count):
        if files and i % 3:
            buf = bytearray(rng.choice(files).read_bytes())
            for _ in range(rng.randint(1, 8)):
                pos = rng.randrange(len(buf) + 1)
                buf[pos:pos] = rng.choice([b"&a ", b"*a", b"<<: ", b"[", b"{", b"- ", b"\x00", b": ", b"\n  "])
            data = bytes(buf)
        else:
            data = rng.randbytes(rng.randint(0, 4096))
        start = time.perf_counter()
        _lint(data)
        slowest = max(slowest, time.perf_counter() - start)
    assert slowest < 10.0, f"slowest input took {slowest:.1f} s (bound 10 s)"


def _cli(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    return subprocess.run(
        [sys.executable, "-m", "kubelint_ml", *args], cwd=cwd, env=env, input=stdin, capture_output=True, timeout=120
    )


def _hostile_tree() -> None:
    """The committed hostile fixtures and the generated ones the CLI hardening test adds."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "hostile"
        tree.mkdir()
        for f in (REPO / "fixtures" / "hostile").iterdir():
            (tree / f.name).write_bytes(f.read_bytes())
        (tree / "gen-alias-bomb.yaml").write_bytes(bombs.billion_laughs() + b"apiVersion: v1\nkind: Pod\n")
        (tree / "gen-merge-bomb.yaml").write_bytes(bombs.merge_bomb(14, own_keys=False))
        (tree / "gen-deep-flow.yaml").write_text("[" * 200_000 + "]" * 200_000 + "\n")
        (tree / "gen-node-flood.yaml").write_text("[" + "1," * 3_000_000 + "1]\n")
        with open(tree / "gen-oversize.yaml", "wb") as fh:
            fh.truncate(21 * 1024 * 1024)
        assert _cli("check", "hostile", "-j1", cwd=Path(tmp)).returncode == 1


def _stdin_bomb() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        assert _cli("check", "-", cwd=Path(tmp), stdin=bombs.billion_laughs()).returncode == 1


def _config_bomb() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "good.yaml").write_bytes(GOOD)
        (Path(tmp) / "bomb.yaml").write_bytes(bombs.billion_laughs().replace(b"l9: &l9", b"disable: &l9"))
        assert _cli("check", "good.yaml", "-c", "bomb.yaml", cwd=Path(tmp)).returncode == 2


RULES: list = []


def _round_two(name: str, *args: str, files: dict[str, str], code: int) -> Callable[[], None]:
    """A case of tests/test_hardening_round2.py: the files written, the command run, its exit code checked."""

    def run() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            for file, text in files.items():
                (Path(tmp) / file).parent.mkdir(parents=True, exist_ok=True)
                (Path(tmp) / file).write_text(text)
            got = _cli(*args, cwd=Path(tmp)).returncode
            assert got == code, f"{name}: exit {got}"

    return run


def _round_two_cases() -> list[Case]:
    rule = (
        "id: grow-rule\nseverity: warning\ntitle: t\ndescription: d\nremediation: r\nscope: {unit: object}\n"
        'check:\n  cel: "object.metadata.name' + ".replace('a', 'aaaaaaaaaa')" * 8 + '.size() > 0"\n'
        "examples:\n  fail: [{manifest: 'kind: Pod', findings: [{line: 1}]}]\n  pass: [{manifest: 'kind: Pod'}]\n"
    )
    crd = (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: w.ex.com}\n"
        "spec:\n  group: ex.com\n  names: {kind: W, plural: w}\n  scope: Namespaced\n  versions:\n"
        "  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n"
        "        type: object\n        properties:\n          n: {type: string, pattern: '^(a+)+$'}\n"
        "---\napiVersion: ex.com/v1\nkind: W\nmetadata: {name: w}\nn: " + "a" * 30 + "!\n"
    )
    containers = ",".join(["{image: x}"] * 66_650)
    return [
        Case(
            "cli: CEL rule of 8 chained replace(), budget",
            15.0,
            _round_two(
                "cel",
                "check",
                "-j1",
                "--rules",
                "rules",
                "a.yaml",
                files={
                    "rules/grow.yaml": rule,
                    "a.yaml": "kind: ConfigMap\napiVersion: v1\nmetadata: {name: " + "a" * 30 + "}\n",
                },
                code=1,
            ),
        ),
        Case(
            "cli: CRD pattern ^(a+)+$ on 30 characters",
            10.0,
            _round_two("redos", "check", "-j1", "--schema", "crd.yaml", files={"crd.yaml": crd}, code=1),
        ),
        Case(
            "cli: a million nodes in 2 MB, refused",
            10.0,
            _round_two(
                "flood", "check", "-j1", "f.yaml", files={"f.yaml": "[" + ",".join(["a"] * 999_990) + "]\n"}, code=1
            ),
        ),
        Case(
            "cli: 66,650 containers (worst under the limits)",
            30.0,
            _round_two(
                "worst",
                "check",
                "-q",
                "-j1",
                "p.yaml",
                files={
                    "p.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: ["
                    + containers
                    + "]\n"
                },
                code=0,
            ),
        ),
    ]


def _container(name: str) -> dict:
    return {
        "name": name,
        "image": "vllm/vllm-openai:v0.8",
        "command": ["vllm", "serve", "m", "--tensor-parallel-size", "8"],
        "resources": {"limits": {"nvidia.com/gpu": "1", "memory": "64Gi", "cpu": "8"}},
        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
    }


def _pod_spec(containers: int = 1) -> dict:
    return {
        "containers": [_container(f"c{i}") for i in range(containers)],
        "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}}],
    }


def _hostile_objects() -> dict[str, dict]:
    """Objects of the newest kinds, each near the API server's 3 MiB request limit (or with counts in
    the billions), as the webhook may be sent them."""
    claims = _pod_spec(3)
    claims["resourceClaims"] = [{"name": f"g{i}", "resourceClaimTemplateName": f"t{i % 50}"} for i in range(16_000)]
    for c in claims["containers"]:
        c["resources"]["claims"] = [{"name": f"g{i}", "request": f"r{i % 7}"} for i in range(16_000)]
    dynamo = {
        f"s{i}": {
            "componentType": "worker",
            "replicas": 10**6,
            "multinode": {"nodeCount": 10**6},
            "resources": {"limits": {"gpu": "8"}},
            "extraPodSpec": {
                "mainContainer": _container("main"),
                "containers": [_container(f"x{j}") for j in range(5)],
            },
        }
        for i in range(1500)
    }
    jobs = [
        {
            "name": f"r{i}",
            "replicas": 10**9,
            "template": {
                "spec": {
                    "parallelism": 10**9,
                    "completions": 10**9,
                    "template": {"spec": dict(_pod_spec(), restartPolicy="Never")},
                }
            },
        }
        for i in range(5000)
    ]
    wide = {"spec": _pod_spec(200)}
    meta = {"name": "x", "namespace": "ml"}
    return {
        "Pod, 16,000 claims used by 3 containers": {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": claims,
        },
        "DynamoGraphDeployment, 1,500 multi-node services": {
            "apiVersion": "nvidia.com/v1alpha1",
            "kind": "DynamoGraphDeployment",
            "metadata": meta,
            "spec": {"services": dynamo},
        },
        "JobSet, 5,000 replicated jobs of 1e9 pods": {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": meta,
            "spec": {"replicatedJobs": jobs},
        },
        "LeaderWorkerSet, 1e9 groups of 1e9, 200 containers": {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": meta,
            "spec": {
                "replicas": 10**9,
                "leaderWorkerTemplate": {"size": 10**9, "leaderTemplate": wide, "workerTemplate": wide},
            },
        },
        "LLMInferenceService, parallelism 1e9, 300 containers": {
            "apiVersion": "serving.kserve.io/v1alpha2",
            "kind": "LLMInferenceService",
            "metadata": meta,
            "spec": {
                "model": {"uri": "hf://x/y"},
                "replicas": 10**9,
                "parallelism": {"tensor": 10**9, "data": 10**9, "dataLocal": 10**6, "pipeline": 10**9},
                "template": {"containers": [_container("main")] + [_container(f"c{i}") for i in range(300)]},
                "worker": {"containers": [_container("main")] + [_container(f"w{i}") for i in range(300)]},
            },
        },
        "Workload, 20,000 pod groups": {
            "apiVersion": "scheduling.k8s.io/v1alpha2",
            "kind": "Workload",
            "metadata": meta,
            "spec": {
                "podGroupTemplates": [
                    {"name": f"g{i}", "schedulingPolicy": {"gang": {"minCount": 2**31 - 1}}} for i in range(20_000)
                ]
            },
        },
        "DeviceClass, 20,000 selectors": {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu.example.com"},
            "spec": {
                "selectors": [
                    {"cel": {"expression": f"device.driver == 'gpu.nvidia.com' && device.attributes['x'].index == {i}"}}
                    for i in range(20_000)
                ]
            },
        },
    }


def _review(obj: dict) -> Callable[[], None]:
    """One admission review of ``obj`` (JSON, as the API server sends it) under Kubernetes 1.36."""
    import json

    body = json.dumps(obj)
    assert len(body) < 3 * 1024 * 1024, f"{len(body)} bytes: over the API server's limit"

    def run() -> None:
        from kubelint_ml.admission.review import load_policy, review

        if not POLICY:
            with tempfile.TemporaryDirectory() as tmp:
                (Path(tmp) / "c.yaml").write_text("profile: {kubernetesVersion: '1.36'}\n")
                POLICY.append(load_policy(str(Path(tmp) / "c.yaml")))
        review(POLICY[0], {"uid": "u", "operation": "CREATE", "namespace": "ml", "object": json.loads(body)})

    return run


POLICY: list = []


def cases() -> list[Case]:
    out = [
        Case("load: billion laughs, refused", 0.5, _refused(bombs.billion_laughs() + b"---\n" + GOOD, "aliases")),
        Case("load: merge-key chain, 12 levels", 1.0, lambda: load(bombs.merge_bomb(12))),
        Case("load: merge-key bomb, 3000 levels, refused", 5.0, _refused(bombs.merge_bomb(3000), "merge keys")),
        Case("load: 300 levels of flow nesting", 1.0, _refused(GOOD + b"---\n" + b"[" * 300 + b"]" * 300, "nesting")),
        Case(
            "load: 250 levels of block nesting",
            1.0,
            _refused(b"".join(b" " * i + b"a:\n" for i in range(250)), "nesting"),
        ),
        Case("load: two million items, refused", 5.0, _refused(b"[" + b"1," * 2_000_000 + b"1]\n", "nodes")),
        Case("load: 200,000 empty documents", 5.0, _refused(b"---\n" * 200_000, "documents")),
        Case("walk: symlink loops", 1.0, _symlink_loops),
        Case("schema: one Deployment, cached validator (x50)", 5.0, _schema_per_object),
        Case("schema: alias-bomb instance", 1.0, _schema_alias_bomb),
    ]
    for opener, closer in ((b"[", b"]"), (b"{a: ", b"}"), (b"- ", b"")):
        data = opener * 100_000 + b"x" + closer * 100_000
        out.append(
            Case(f"load: 100,000 levels of {opener.decode().strip()!r}, refused", 2.0, _refused(data, "nesting"))
        )
    for shape, text in sorted(bombs.fan_out_shapes(FAN_OUT).items()):
        out.append(Case(f"lint: {FAN_OUT} {shape}", 15.0, functools.partial(_lint, text.encode())))
    out += [
        Case("lint: 300 fuzzed inputs (slowest under 10 s)", 120.0, _fuzzed),
        Case("cli: hostile tree, text, -j1", 30.0, _hostile_tree),
        Case("cli: billion laughs on stdin", 10.0, _stdin_bomb),
        Case("cli: config file with an alias bomb", 10.0, _config_bomb),
    ]
    # the webhook's time limit is 5 s: a review of the worst object stays inside it (the pod of 16,000
    # claims took 8 s when a container's claim names were looked up in a list)
    out += [Case(f"review: {name}", 5.0, _review(obj)) for name, obj in _hostile_objects().items()]
    return out + _round_two_cases()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="runs per case; the best is compared [3]")
    ap.add_argument("-k", dest="match", default="", help="only the cases whose name contains this")
    args = ap.parse_args()
    RULES[:] = _all_rules()
    over = 0
    print(f"{'case':<52} {'best s':>8} {'bound s':>8}")
    for case in cases():
        if args.match not in case.name:
            continue
        best = float("inf")
        failure = ""
        for _ in range(max(1, args.rounds)):
            start = time.perf_counter()
            try:
                case.run()
            except AssertionError as e:
                failure = str(e) or "assertion failed"
            best = min(best, time.perf_counter() - start)
        verdict = "ok" if best <= case.bound and not failure else "OVER" if not failure else f"FAILED: {failure}"
        over += verdict != "ok"
        print(f"{case.name:<52} {best:8.3f} {case.bound:8.1f}  {verdict}", flush=True)
    print(f"{over} case(s) over their bound" if over else "every case within its bound")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
