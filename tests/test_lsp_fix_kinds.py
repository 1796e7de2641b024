"""The editor's fix all equals `check --fix --unsafe-fixes`, byte for byte, for the fixes of the
newest kinds and rules: the /dev/shm sized per accelerator device, a line inserted past a block's
deeper-indented comments, a container's claim naming a ``firstAvailable`` alternative, a claim no
container lists, a TrainJob's ``resourcesPerNode``, a Dynamo v1alpha1 service's own fields and a
SparkApplication's volumes and role template. Each manifest as written and with CRLF endings, tabs
in comments, a BOM, and among other documents: the fixed text is the variant of the fixed manifest
(every other byte kept), and a second fix changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubelint_ml.cli import main

pytest.importorskip("pygls", reason="pygls is not installed (the language server's dependency)")

from lsp_raw import RawClient  # noqa: E402
from test_dra_claim_use import CLAIMS as UNUSED_CLAIMS  # noqa: E402
from test_dra_claim_use import POD as UNUSED_POD  # noqa: E402
from test_fix_platform import DGD_V1ALPHA1, SPARK, TRAIN_JOB  # noqa: E402
from test_lsp_positions import FIX_ALL, apply, edits_of  # noqa: E402
from test_pod_api_fields import POD as FA_POD  # noqa: E402
from test_pod_api_fields import TEMPLATE as FA_TEMPLATE  # noqa: E402
from test_rules_emptydir import _SHM_UNBOUNDED  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

SHM_PER_DEVICE = _SHM_UNBOUNDED.format(devices='nvidia.com/gpu: "8"', sidecar="")

NESTED_COMMENTS = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      priorityClassName: training
      restartPolicy: Never
      nodeSelector:
        node.kubernetes.io/instance-type: p4d.24xlarge
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        command: ["torchrun", "--nproc-per-node=8", "train.py"]
        resources:
          requests: {cpu: "8", memory: 256Gi}
          limits:
            memory: 256Gi
            nvidia.com/gpu: 8
            # vpc.amazonaws.com/efa: 4  # not yet

            # cpu: 2
      # the pod's volumes
      volumes:
      - name: data
        emptyDir: {}
        # - name: scratch
"""

CASES = {
    "shm-per-device": SHM_PER_DEVICE,
    "nested-comments": NESTED_COMMENTS,
    "first-available": FA_TEMPLATE
    + FA_POD.format(uses="{name: gpu, request: gpu/large}", source="resourceClaimTemplateName: one-gpu"),
    "claim-unused": UNUSED_CLAIMS + UNUSED_POD.replace("CLAIMS_OF_MAIN\n", ""),
    "train-job": TRAIN_JOB,
    "dynamo-v1alpha1": DGD_V1ALPHA1,
    "spark": SPARK,
}

OTHER = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\ndata:\n  k: v\n"


def _tabs(text: str) -> str:
    """Tabs in a comment before the manifest, after ``apiVersion`` and on a line of its own in the first mapping
    (indented with spaces: a tab is not YAML indentation)."""
    head, rest = text.split("\n", 1)
    return (
        "#\tleading\tcomment\n"
        + head
        + "\t#\tafter\tapiVersion\n"
        + rest.replace("\nmetadata:", "\n  #\ttabbed\t comment\t\nmetadata:", 1)
    )


VARIANTS: dict[str, Callable[[str], str]] = {
    "lf": lambda t: t,
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "tabs": _tabs,
    "bom": lambda t: "\ufeff" + t,
    "among-documents": lambda t: OTHER.format("before") + "---\n" + t + "---\n" + OTHER.format("after"),
}


def check_fix(path: Path) -> bytes:
    """``path`` after `check --fix --unsafe-fixes`, run in its directory."""
    r = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "-q", "-j1", str(path)])
    assert r.exit_code in (0, 1), r.output
    return path.read_bytes()


def objects(data: bytes) -> list:
    return [d for d in yaml.safe_load_all(data.decode("utf-8-sig")) if d is not None]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_cli_fix_keeps_every_other_byte_in_each_variant(tmp_path: Path, case: str) -> None:
    """check --fix of the variant is the variant of the fixed manifest; a second run changes nothing."""
    text = CASES[case]
    plain = tmp_path / "plain.yaml"
    plain.write_text(text)
    fixed = check_fix(plain).decode()
    assert fixed != text, case  # the case has a fix
    for name, variant in VARIANTS.items():
        path = tmp_path / f"{name}.yaml"
        path.write_bytes(variant(text).encode())
        assert check_fix(path) == variant(fixed).encode(), (case, name)
        assert check_fix(path) == variant(fixed).encode(), (case, name)


def test_fix_all_in_the_editor_equals_check_fix(tmp_path: Path) -> None:
    """One server, a workspace folder per case and variant (so that no file's claims reach another's):
    fix all of each buffer gives the bytes check --fix --unsafe-fixes writes, and fix all of the fixed
    buffer offers nothing."""
    folders: dict[tuple[str, str], Path] = {}
    for case, text in CASES.items():
        for name, variant in VARIANTS.items():
            folder = tmp_path / f"{case}-{name}"
            folder.mkdir()
            (folder / "m.yaml").write_bytes(variant(text).encode())
            folders[case, name] = folder
    want = {key: check_fix(folder / "m.yaml") for key, folder in folders.items()}
    client = RawClient(cwd=tmp_path)
    try:
        client.initialize_folders(tmp_path, list(folders.values()), {"unsafeFixes": True})
        for key, folder in folders.items():
            path = folder / "m.yaml"
            text = CASES[key[0]]
            data = VARIANTS[key[1]](text).encode()
            path.write_bytes(data)
            uri = path.as_uri()
            buffer = data.decode()
            client.open(uri, buffer)
            client.diagnostics(uri, 1, timeout=60)
            (action,) = fix_all(client, uri)
            after = apply(buffer, edits_of(action, uri, 1), "utf-16")
            assert after.encode() == want[key], key
            client.change(uri, 2, [{"text": after}])
            client.diagnostics(uri, 2, timeout=60)
            assert fix_all(client, uri) == [], key
    finally:
        assert client.stop() == 0
        client.kill()


def fix_all(client: RawClient, uri: str) -> list[dict]:
    return client.call(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": [], "only": [FIX_ALL]},
        },
        timeout=60,
    )["result"]


def _fixtures_with_fixes(tmp: Path) -> list[Path]:
    """The repo's sample manifests (fixtures/, fixtures/controllers/) that check --fix --unsafe-fixes changes."""
    found = []
    for path in sorted((ROOT / "fixtures").rglob("*.y*ml")):
        if "hostile" in path.parts:
            continue
        data = path.read_bytes()
        copy = tmp / "probe.yaml"
        copy.write_bytes(data)
        if check_fix(copy) != data:
            found.append(path)
    return found


@pytest.mark.slow
def test_fix_all_of_the_samples_with_fixes_equals_check_fix(tmp_path: Path) -> None:
    """Every sample that has a fix, alone in its workspace folder, as written and in each variant: fix all
    gives check --fix --unsafe-fixes's bytes, the variant of the fixed sample, and nothing after it."""
    samples = _fixtures_with_fixes(tmp_path)
    assert len(samples) >= 30, samples
    folders: dict[tuple[str, str], Path] = {}
    fixed: dict[Path, str] = {}
    for i, sample in enumerate(samples):
        text = sample.read_text()
        (tmp_path / "probe.yaml").write_text(text)
        fixed[sample] = check_fix(tmp_path / "probe.yaml").decode()
        for name, variant in VARIANTS.items():
            folder = tmp_path / f"{i}-{name}"
            folder.mkdir()
            (folder / "m.yaml").write_bytes(variant(text).encode())
            folders[str(sample.relative_to(ROOT)), name] = folder
    client = RawClient(cwd=tmp_path)
    try:
        client.initialize_folders(tmp_path, list(folders.values()), {"unsafeFixes": True})
        for (sample, name), folder in folders.items():
            path = folder / "m.yaml"
            buffer = path.read_bytes().decode()
            want = VARIANTS[name](fixed[ROOT / sample])
            assert check_fix(path) == want.encode(), (sample, name)  # every other byte kept
            path.write_bytes(buffer.encode())
            uri = path.as_uri()
            client.open(uri, buffer)
            client.diagnostics(uri, 1, timeout=60)
            (action,) = fix_all(client, uri)
            after = apply(buffer, edits_of(action, uri, 1), "utf-16")
            assert after == want, (sample, name)
            client.change(uri, 2, [{"text": after}])
            client.diagnostics(uri, 2, timeout=60)
            assert fix_all(client, uri) == [], (sample, name)
            client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    finally:
        assert client.stop() == 0
        client.kill()
