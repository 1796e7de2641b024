"""Hostile input for the hardening tests and bench/bounds.py: YAML that expands far past its
text (alias and merge-key bombs) and manifests that repeat one thing thousands of times."""

from __future__ import annotations


def billion_laughs(levels: int = 9, width: int = 9) -> bytes:
    """Each level a list of ``width`` aliases of the one before: ``width ** levels`` nodes."""
    lines = ['l0: &l0 "lol"']
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return ("\n".join(lines) + "\n").encode()


def merge_bomb(levels: int, own_keys: bool = True) -> bytes:
    """Each level merges nine aliases of the one before (with a key of its own, unless not ``own_keys``)."""
    lines = ["a0: &a0 {x1: 1, x2: 2, x3: 3, x4: 4, x5: 5, x6: 6, x7: 7, x8: 8, x9: 9}"]
    for i in range(1, levels):
        own = f", y{i}: {i}" if own_keys else ""
        lines.append(f"a{i}: &a{i} {{<<: [" + ", ".join([f"*a{i - 1}"] * 9) + f"]{own}}}")
    return ("\n".join(lines) + "\n").encode()


def pod(containers: str, extra: str = "") -> str:
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        f"  resources: {{limits: {{cpu: 1, memory: 1Gi}}}}\n{extra}  containers:\n{containers}"
    )


def fan_out_shapes(n: int) -> dict[str, str]:
    """One manifest per shape, each repeating one thing ``n`` times (containers, documents, ...)."""
    return {
        "containers": pod(
            "".join(
                f"  - name: c{i}\n    image: x\n    args: [--nproc_per_node=8]\n"
                f"    resources: {{limits: {{memory: 1Gi, nvidia.com/gpu: 1}}}}\n"
                for i in range(n)
            )
        ),
        "sidecars": pod(
            "  - name: main\n    image: x\n",
            "  initContainers:\n"
            + "".join(f"  - name: i{i}\n    image: x\n    restartPolicy: Always\n" for i in range(n)),
        ),
        "volumes": pod(
            "  - name: c\n    image: x\n    volumeMounts:\n"
            + "".join(f"    - {{name: v{i}, mountPath: /m{i}}}\n" for i in range(n)),
            "  volumes:\n"
            + "".join(f"  - {{name: v{i}, emptyDir: {{medium: {'Memory' if i % 2 else ''}}}}}\n" for i in range(n)),
        ),
        "documents": "---\n".join(pod("  - name: c\n    image: x\n") for _ in range(n)),
        "replica-roles": "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: t}\nspec:\n  pytorchReplicaSpecs:\n"
        + "".join(
            f"    R{i}:\n      replicas: 2\n      template:\n        spec:\n          containers:\n          - name: c\n"
            f"            image: x\n            resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
            for i in range(n)
        ),
        "priority-classes": "".join(
            f"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: pc{i}}}\nvalue: {i}\n"
            "globalDefault: true\n---\n"
            for i in range(n)
        )
        + "---\n".join(pod("  - name: c\n    image: x\n") for _ in range(n)),
    }
