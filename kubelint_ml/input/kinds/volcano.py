"""Volcano (``batch.volcano.sh/v1alpha1`` Job, ``flow.volcano.sh/v1alpha1`` JobTemplate;
volcano-sh/apis ``pkg/apis/batch/v1alpha1``, as volcano-sh/volcano ed72c7c8 uses it): each ``tasks[]`` template, ``replicas`` pods."""

from __future__ import annotations

from collections.abc import Iterator

from kubelint_ml.input.kinds.base import Finder, KindInfo, TemplateSpot, integer, text
from kubelint_ml.input.objects import dig


def _volcano_tasks(prefix: tuple) -> Finder:
    def find(obj: dict) -> Iterator[TemplateSpot]:
        tasks = dig(obj, *prefix, "tasks")
        if not isinstance(tasks, list):
            return
        for i, t in enumerate(tasks):
            if not isinstance(t, dict):
                continue
            name = text(t.get("name"), f"tasks[{i}]")
            yield prefix + ("tasks", i, "template"), name, integer(t.get("replicas"), 1)

    return find


KINDS: dict[tuple[str, str], KindInfo] = {
    ("batch.volcano.sh", "Job"): KindInfo(_volcano_tasks(("spec",)), True),
    ("flow.volcano.sh", "JobTemplate"): KindInfo(_volcano_tasks(("spec",)), True),
}
