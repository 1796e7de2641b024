"""JobSet (``jobset.x-k8s.io/v1alpha2``, kubernetes-sigs/jobset ``api/jobset/v1alpha2`` at 08dfbdfd):
each ``replicatedJobs[]`` is a Job template, its pods ``replicas`` x the Job's ``parallelism``.
The finder is shared with Kubeflow Trainer's runtimes, which hold a JobSet template."""

from __future__ import annotations

from collections.abc import Iterator

from kubelint_ml.input.kinds.base import Finder, KindInfo, TemplateSpot, integer, text
from kubelint_ml.input.objects import dig


def jobset_jobs(prefix: tuple) -> Finder:
    def find(obj: dict) -> Iterator[TemplateSpot]:
        jobs = dig(obj, *prefix, "replicatedJobs")
        if not isinstance(jobs, list):
            return
        for i, rj in enumerate(jobs):
            if not isinstance(rj, dict):
                continue
            name = text(rj.get("name"), f"replicatedJobs[{i}]")
            reps = integer(rj.get("replicas"), 1) or 0
            par = integer(dig(rj, "template", "spec", "parallelism"), 1)
            yield (
                prefix + ("replicatedJobs", i, "template", "spec", "template"),
                name,
                reps * (par if par is not None else 1),
            )

    return find


KINDS: dict[tuple[str, str], KindInfo] = {
    ("jobset.x-k8s.io", "JobSet"): KindInfo(jobset_jobs(("spec",)), True),
}
