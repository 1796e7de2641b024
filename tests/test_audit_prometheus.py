"""`audit --prometheus`: the usage rules size the owners a dump holds, against a real Prometheus on
127.0.0.1 (tests/promserver.py), with series for the pods of a Deployment found in the dump."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests import promserver

sys.path.insert(0, str(Path(__file__).parent))
from clusterdump import container, kubectl_list, obj, owner, pod  # noqa: E402

from kubelint_ml.cli import main  # noqa: E402

pytestmark = pytest.mark.skipif(promserver.missing() is not None, reason=promserver.missing() or "")

END = 1_790_000_000
STEP = 60
GI = 1024**3
LIMITS = {"limits": {"cpu": "1", "memory": "2Gi"}, "requests": {"cpu": "1", "memory": "2Gi"}}


def _samples(seed: int, peak: float) -> list[tuple[int, float]]:
    rng = random.Random(seed)
    times = [END - k * STEP for k in range(1439, -1, -1)]
    values = [(t, float(int(rng.uniform(1.0 * GI, 1.5 * GI)))) for t in times]
    values[500] = (values[500][0], peak)
    return values


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory):
    data = promserver.Data()
    for k in range(3):
        name = f"serve-6f7d9c8b5-{k}abcd"
        data.add(
            "container_memory_working_set_bytes",
            {"namespace": "ml", "pod": name, "container": "server", "job": "kubelet"},
            _samples(k, 3 * GI if k == 1 else 1.6 * GI),
        )
    work = tmp_path_factory.mktemp("prometheus")
    server = promserver.Server(promserver.backfill(data, str(work)), str(work))
    yield server
    server.stop()


def test_usage_from_prometheus_for_the_owners_found(prometheus, tmp_path: Path, monkeypatch) -> None:
    template = {"spec": {"containers": [{"name": "server", "image": "vllm", "resources": LIMITS}]}}
    rs = obj("apps/v1", "ReplicaSet", "serve-6f7d9c8b5", "ml", {"replicas": 3, "template": template})
    rs["metadata"]["ownerReferences"] = [owner("apps/v1", "Deployment", "serve")]
    items = [obj("apps/v1", "Deployment", "serve", "ml", {"replicas": 3, "template": template}), rs]
    for k in range(3):
        items.append(
            pod(
                f"serve-6f7d9c8b5-{k}abcd",
                "ml",
                [container("server", "vllm", LIMITS, token=f"p{k}xyz")],
                owned_by=owner("apps/v1", "ReplicaSet", "serve-6f7d9c8b5"),
                labels={"pod-template-hash": "6f7d9c8b5"},
                token=f"p{k}xyz",
            )
        )
    (tmp_path / "dump.json").write_text(kubectl_list(items))
    (tmp_path / ".kubelint-ml.yaml").write_text(f"usage:\n  end: {END}\n  lookback: 1d\n  step: 1m\n")
    monkeypatch.chdir(tmp_path)  # the config is found from here
    r = CliRunner().invoke(main, ["audit", "dump.json", "-f", "json", "--prometheus", prometheus.url])
    assert r.exit_code == 1, r.output
    out = r.stdout
    findings = json.loads(out[: out.rindex("}") + 1])["findings"]
    peak = [f for f in findings if f["rule"] == "memory-limit-below-peak"]
    assert [(f["object"]["kind"], f["object"]["name"], f["data"]["pods"]) for f in peak] == [("Deployment", "serve", 3)]
    assert peak[0]["message"].startswith("container 'server': memory limit 2Gi is below the observed peak 3Gi over 1d")
