"""GPU workloads among the files a run reported on, for the reports that count them apart
(``check --format html``): the objects whose pod templates ask for an accelerator resource
(``nvidia.com/gpu``, ``amd.com/gpu``, ...), and how many devices.

Read again from the files, with the lint's loader and its limits, only when such a report is
asked for; a file that names no accelerator resource anywhere in its text is not parsed at all.
Devices claimed through DRA are not counted here: what a claim holds is decided by other
objects (DeviceClasses, ResourceClaimTemplates; kubelint_ml/k8s/dra.py), which the lint reads.
"""

from __future__ import annotations

import os
from typing import Any

from kubelint_ml.k8s.resources import ACCELERATOR_PATTERNS


def _words() -> tuple[bytes, ...]:
    """Text every manifest asking for an accelerator resource holds: the name's fixed start."""
    return tuple(sorted({p.split("*")[0].encode() for p in ACCELERATOR_PATTERNS}))


# From this many files, with more than one job, the reading is shared by forked workers.
PARALLEL_MIN_FILES = 64


def gpu_workloads(files: list[str], jobs: int = 1) -> dict[tuple[str, str, str, str], int]:
    """(file, kind, namespace, name) -> the accelerator devices the object's pods request, replicas
    counted, for each object with a pod template that asks for an accelerator resource.

    A file that cannot be read or parsed again (stdin, a chart's template) is left out. With
    ``jobs`` > 1 and many files, forked workers share the files (:func:`kubelint_ml.run.pool.fork_map`)."""
    if jobs <= 1 or len(files) < PARALLEL_MIN_FILES or not hasattr(os, "fork"):
        return _count(files)
    from kubelint_ml.run import pool

    spans = pool.spans(len(files), jobs)

    def span(n: int) -> dict[tuple[str, str, str, str], int]:
        return _count(files[spans[n][0] : spans[n][1]])

    out: dict[tuple[str, str, str, str], int] = {}
    for part in pool.fork_map(len(spans), jobs, span, span, lambda found: found):
        out.update(part)
    return out


def _count(files: list[str]) -> dict[tuple[str, str, str, str], int]:
    from kubelint_ml.input.loader import load
    from kubelint_ml.input.objects import unpack
    from kubelint_ml.input.workloads import pod_templates
    from kubelint_ml.k8s.resources import accelerator_requests, is_accelerator_pod

    words = _words()
    out: dict[tuple[str, str, str, str], int] = {}
    for file in files:
        if file in ("-", "<stdin>"):
            continue
        try:
            with open(file, "rb") as fh:
                data = fh.read()
            if not any(w in data for w in words):
                continue
            docs: list[Any] = load(data).documents  # the lint's loader, with its limits
        except Exception:  # noqa: BLE001 - unreadable or unparsable: the lint has said so
            continue
        for doc in docs:
            try:
                objects = unpack(doc, file).objects
            except Exception:  # noqa: BLE001
                continue
            for obj in objects:
                try:
                    gpus, accel = 0, False
                    for tpl in pod_templates(obj):
                        if tpl.broken or not is_accelerator_pod(tpl.spec):
                            continue
                        accel = True
                        per_pod = sum(accelerator_requests(tpl.spec).values())  # devices a pod gets
                        gpus += per_pod * (tpl.replicas if isinstance(tpl.replicas, int) and tpl.replicas > 0 else 1)
                except Exception:  # noqa: BLE001 - a shape the lint reports
                    continue
                if accel:
                    ref = obj.ref
                    out[(file, ref.kind, ref.namespace, ref.name)] = gpus
    return out
