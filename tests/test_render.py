"""Helm charts and kustomizations: rendering, the warnings without the tools, and findings
mapped back to the template, base or patch file.

kustomize runs for real (``kubectl kustomize`` or ``kustomize``; skipped with the reason
when neither is on PATH). helm is not installable here, so the Helm mapping is tested on
real ``helm template`` output captured in helm's own test suite, beside the chart it was
rendered from (fixtures/render/helm).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from kubelint_ml.cli import main
from kubelint_ml.input import charts, render
from kubelint_ml.input.loader import render_path
from kubelint_ml.input.sources import collect

ROOT = Path(__file__).resolve().parent.parent
HELM_DIR = ROOT / "fixtures" / "render" / "helm"
KUSTOMIZE_DIR = ROOT / "fixtures" / "render" / "kustomize"
# Origin annotations (buildMetadata) need kustomize v4.5 or later; Debian's kubernetes-client
# package ships kubectl 1.20, whose kustomize is v2.
KUSTOMIZE_VERSION = render.kustomize_version()
needs_kustomize = pytest.mark.skipif(
    KUSTOMIZE_VERSION is None or KUSTOMIZE_VERSION < (4, 5),
    reason="needs kustomize v4.5 or later (kustomize, or kubectl 1.24+ which embeds it) on PATH; found "
    + (f"v{KUSTOMIZE_VERSION[0]}.{KUSTOMIZE_VERSION[1]}" if KUSTOMIZE_VERSION else "none"),
)
HEADER_LINES = 3  # the provenance header of fixtures/render/helm/rendered.yaml


def check(args: list[str], cwd: Path, input: bytes | None = None, env: dict | None = None):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["check", *args], input=input, env=env, catch_exceptions=False)
    finally:
        os.chdir(old)


def rows(result) -> list[tuple]:
    data = json.loads(result.stdout)
    return [
        (
            f["rule"],
            f["file"],
            f["line"],
            f["column"],
            f["path"],
            tuple((r["file"], r["line"]) for r in f.get("related", ())),
        )
        for f in data["findings"]
    ]


# ----------------------------------------------------------------------------
# Helm: `# Source:` comments


def test_piped_helm_output_maps_to_the_template_files() -> None:
    rendered = (HELM_DIR / "rendered.yaml").read_bytes()
    r = check(["-", "-f", "json"], HELM_DIR, input=rendered)
    assert r.exit_code == 0, r.output  # warnings only: a Pod without accelerators
    template = "subchart/templates/tests/test-nothing.yaml"
    pod = rendered.decode().splitlines().index("kind: Pod") + 1  # the rendered Pod's `kind:` line
    assert pod == HEADER_LINES + 105
    assert rows(r) == [
        # `spec:` is line 7 of the template; the container's list item line 9.
        ("besteffort-qos", template, 7, 1, "spec", (("<stdin>", pod + 5),)),
        ("missing-priority-class", template, 7, 1, "spec", (("<stdin>", pod + 5),)),
        ("missing-memory-limit", template, 9, 5, "spec.containers[0]", (("<stdin>", pod + 7),)),
        ("missing-memory-request", template, 9, 5, "spec.containers[0]", (("<stdin>", pod + 7),)),
    ]


def test_related_location_in_sarif() -> None:
    r = check(["-", "-f", "sarif"], HELM_DIR, input=(HELM_DIR / "rendered.yaml").read_bytes())
    result = json.loads(r.stdout)["runs"][0]["results"][0]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(
        "subchart/templates/tests/test-nothing.yaml"
    )
    [related] = result["relatedLocations"]
    assert related["id"] == 1
    assert related["physicalLocation"]["region"]["startLine"] == HEADER_LINES + 110
    assert related["message"]["text"] == f"rendered output: <stdin>:{HEADER_LINES + 110}"


def test_piped_output_of_a_chart_that_is_not_here_keeps_the_rendered_location(tmp_path: Path) -> None:
    r = check(["-", "-f", "json"], tmp_path, input=(HELM_DIR / "rendered.yaml").read_bytes())
    assert {(f[1], f[5]) for f in rows(r)} == {("<stdin>", ())}


def test_subchart_sources_follow_the_chart_name_not_the_directory() -> None:
    # helm names a subchart by its Chart.yaml name (subcharta), its directory is subchartA.
    path = render._template_file("subchart/charts/subcharta/templates/service.yaml", str(HELM_DIR / "subchart"))
    assert path == str(HELM_DIR / "subchart" / "charts" / "subchartA" / "templates" / "service.yaml")
    assert render._template_file("subchart/../../etc/passwd", str(HELM_DIR / "subchart")) is None
    assert render._template_file("other/templates/x.yaml", str(HELM_DIR / "subchart")) is None


TEMPLATE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "vllm.fullname" . }}
spec:
  replicas: {{ .Values.replicas }}
  template:
    spec:
      {{- with .Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: vllm
          image: "{{ .Values.image }}"
          command: |
            vllm serve
            resources: not a key
          resources:
            limits:
              nvidia.com/gpu: {{ .Values.gpus }}
            {{- with .Values.memory }}
              memory: {{ . }}
            {{- end }}
        {{- range .Values.sidecars }}
        - name: {{ .name }}
          image: {{ .image }}
        {{- end }}
---
apiVersion: v1
kind: Service
metadata:
  name: vllm
spec:
  ports: [{port: 8000}]
"""


def test_field_lines_in_a_template() -> None:
    pos = render.template_position
    limits = ("spec", "template", "spec", "containers", 0, "resources", "limits")
    assert pos(TEMPLATE, limits + ("nvidia.com/gpu",), "Deployment") == (21, 15)
    assert pos(TEMPLATE, limits + ("memory",), "Deployment") == (23, 15)
    # A field the template does not write: its deepest written ancestor.
    assert pos(TEMPLATE, limits + ("cpu",), "Deployment") == (20, 13)
    assert pos(TEMPLATE, ("spec", "template", "spec", "nodeSelector", "pool"), "Deployment") == (10, 7)
    # Two list items under containers (the literal one and the range): which one is ambiguous,
    # so the document's first line; the block scalar's text is never read as keys.
    assert pos(TEMPLATE, ("spec", "template", "spec", "containers", 1), "Deployment") == (1, 1)
    assert pos(TEMPLATE, ("spec", "template", "spec", "containers", 0, "image"), "Deployment") == (1, 1)
    # The second document, chosen by kind.
    assert pos(TEMPLATE, ("spec", "ports"), "Service") == (35, 3)
    assert pos(TEMPLATE, ("metadata", "name"), "Service") == (33, 3)


@given(st.lists(st.one_of(st.integers(0, 50), st.text(min_size=1, max_size=12)), min_size=1, max_size=6))
def test_parse_path_reverses_render_path(path: list) -> None:
    assert render.parse_path(render_path(tuple(path))) == tuple(path)


# ----------------------------------------------------------------------------
# Charts among the inputs


def test_chart_without_helm_is_one_render_error_and_no_parse_errors(tmp_path: Path) -> None:
    chart = tmp_path / "charts" / "train"
    shutil.copytree(HELM_DIR / "subchart", chart)
    (tmp_path / "job.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    r = check([".", "-f", "json"], tmp_path, env={"PATH": str(tmp_path / "no-tools")})
    assert r.exit_code == 1  # a repository of charts does not pass having linted nothing
    [f] = json.loads(r.stdout)["findings"]
    assert (f["rule"], f["severity"], f["file"], f["line"]) == ("render-error", "error", "charts/train/Chart.yaml", 1)
    assert f["message"] == (
        "Helm chart charts/train not linted: helm is not on PATH; install helm, or pipe "
        "the rendered chart in: helm template charts/train | kubelint-ml check -"
    )
    assert "warning:" not in r.stderr
    r = check(["."], tmp_path, env={"PATH": str(tmp_path / "no-tools")})
    assert r.stdout.rstrip().endswith("1 error in 1 of 2 files")  # the chart's file is counted
    # A template named on the command line (as pre-commit does) is part of its chart too.
    r = check(["charts/train/templates/service.yaml", "-f", "github"], tmp_path, env={"PATH": str(tmp_path)})
    assert r.exit_code == 1
    assert r.stdout.startswith("::error file=charts/train/Chart.yaml,line=1")
    assert "Helm chart charts/train not linted" in r.stdout
    assert "parse-error" not in r.stdout


def test_helm_runs_without_a_shell_with_values_and_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in helm (the real one is not installable here) that prints its argv as a ConfigMap."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    helm = bindir / "helm"
    helm.write_text(
        f"#!{sys.executable}\nimport sys, json\n"
        "print('---\\n# Source: train/templates/cm.yaml\\napiVersion: v1\\nkind: ConfigMap\\n"
        "metadata: {name: argv}\\ndata: {argv: ' + json.dumps(json.dumps(sys.argv[1:])) + '}')\n"
    )
    helm.chmod(0o755)
    chart = tmp_path / "train"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: train\nversion: 0.1.0\n")
    (chart / "templates" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argv}\n")
    (tmp_path / "ci.yaml").write_text("a: 1\n")
    opts = charts.RenderOptions(helm_values=("ci.yaml",), helm_set=("a=$(touch pwned)",), timeout=30)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    from kubelint_ml.input.sources import collect

    plan = render.plan(collect(["."]), opts, 1 << 20)
    [source] = [s for s in plan.sources if s.real.startswith("<render:")]
    assert source.path == "train (helm template)"
    data = render._READ_ONCE[source.real].decode()
    argv = json.loads(json.loads(data.split("argv: ", 1)[1].rstrip().rstrip("}")))
    assert argv == ["template", str(chart), "--values", str(tmp_path / "ci.yaml"), "--set", "a=$(touch pwned)"]
    assert not (tmp_path / "pwned").exists()
    assert plan.warnings == []


def test_run_capped_stops_slow_and_loud_tools() -> None:
    code, out, _ = render.run_capped([sys.executable, "-c", "import time; time.sleep(30)"], None, 0.5, 100)
    assert code is None and out == b""
    code, out, _ = render.run_capped([sys.executable, "-c", "print('x' * 100000)"], None, 30, 1000)
    assert code is None and len(out) == 1001
    code, out, err = render.run_capped([sys.executable, "-c", "import sys; print('ok'); sys.exit(3)"], None, 30, 1000)
    assert (code, out) == (3, b"ok\n")


# ----------------------------------------------------------------------------
# kustomize, for real


@needs_kustomize
def test_overlay_is_built_and_findings_point_at_base_and_patch() -> None:
    r = check(["fixtures/render/kustomize", "-f", "json"], ROOT)
    assert r.exit_code == 1, r.output
    base = "fixtures/render/kustomize/base/job.yaml"
    patch = "fixtures/render/kustomize/overlays/prod/memory.yaml"
    found = [(rule, file, line, col, path) for rule, file, line, col, path, _ in rows(r)]
    assert found == [
        ("missing-priority-class", base, 9, 5, "spec.template.spec"),
        ("shm-too-small-for-workers", base, 12, 11, "spec.template.spec.containers[0]"),
        ("missing-memory-limit", base, 18, 11, "spec.template.spec.containers[1]"),
        ("missing-memory-request", base, 18, 11, "spec.template.spec.containers[1]"),
        # The value the patch writes: its line in the patch.
        ("request-exceeds-limit", patch, 13, 15, "spec.template.spec.containers[0].resources.requests.memory"),
    ]
    # The base alone would be BestEffort with no memory limit on the trainer: the overlay fixes
    # that, and the base is not linted raw beside it.
    assert all(
        rel[0][0] == "fixtures/render/kustomize/overlays/prod (kubectl kustomize)"
        or rel[0][0].endswith("(kustomize build)")
        for *_, rel in rows(r)
    )


@needs_kustomize
def test_summary_counts_the_rendered_input_once_however_many_source_files_it_maps_to() -> None:
    r = check(["fixtures/render/kustomize"], ROOT)
    assert r.output.rstrip().splitlines()[-1] == "2 errors, 3 warnings in 1 of 1 file"
    r = check(["fixtures/render/kustomize", "-f", "json"], ROOT)
    assert json.loads(r.output)["summary"]["files_with_findings"] == 1


@needs_kustomize
def test_naming_the_overlay_kustomization_is_not_silent() -> None:
    r = check(["fixtures/render/kustomize/overlays/prod/kustomization.yaml", "-f", "json"], ROOT)
    assert r.exit_code == 1
    assert len(rows(r)) == 5
    r = check(["fixtures/render/kustomize/base", "-f", "json"], ROOT)  # the base on its own is built alone
    assert ("besteffort-qos", "fixtures/render/kustomize/base/job.yaml", 9, 5) in [f[:4] for f in rows(r)]


@needs_kustomize
def test_piped_kustomize_output_with_origins_maps_too(tmp_path: Path) -> None:
    overlay = tmp_path / "k"
    shutil.copytree(KUSTOMIZE_DIR, overlay)
    kfile = overlay / "overlays" / "prod" / "kustomization.yaml"
    kfile.write_text(kfile.read_text() + "buildMetadata: [originAnnotations, transformerAnnotations]\n")
    built = subprocess.run(
        render.kustomize_command() + [str(overlay / "overlays" / "prod")], capture_output=True, timeout=120, check=True
    ).stdout
    # Origins are relative to the kustomization built: run from there, as a user would.
    r = check(["-", "-f", "json"], overlay / "overlays" / "prod", input=built)
    files = {f[1] for f in rows(r)}
    assert files == {str(overlay / "base" / "job.yaml"), "memory.yaml"}  # outside the cwd: absolute


@needs_kustomize
def test_a_kustomization_that_does_not_build_is_a_render_error(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text("resources:\n  - missing.yaml\n")
    r = check([".", "-f", "json"], tmp_path)
    assert r.exit_code == 1
    [f] = json.loads(r.stdout)["findings"]
    assert (f["rule"], f["severity"], f["file"], f["line"]) == ("render-error", "error", "app/kustomization.yaml", 1)
    assert "kustomize app failed:" in f["message"] and "app/missing.yaml" in f["message"]
    # The tool's own message, with no scratch path of ours and the user's directory as named.
    assert "kubelint-ml-kustomize" not in f["message"] and str(tmp_path) not in f["message"]
    assert "/tmp" not in f["message"] and "E1" not in f["message"]
    r = check(["."], tmp_path)
    assert r.stdout.rstrip().endswith("1 error in 1 of 1 file")


@needs_kustomize
def test_a_missing_patch_gives_the_tools_reason_not_its_log_header(tmp_path: Path) -> None:
    """kubectl logs a patch it cannot read in klog's multi-line form (`E1127 ... "command failed" err=<`,
    the reason on the lines below, then `>`): the render-error says the reason."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    (tmp_path / "app" / "kustomization.yaml").write_text(
        "resources: [cm.yaml]\npatches:\n  - path: configmap/patch.yaml\n"
    )
    r = check([".", "-f", "json"], tmp_path)
    [f] = json.loads(r.stdout)["findings"]
    assert (f["rule"], f["severity"], f["file"], f["line"]) == ("render-error", "error", "app/kustomization.yaml", 1)
    assert "kustomize app failed:" in f["message"] and "configmap/patch.yaml" in f["message"], f["message"]
    assert "no such file or directory" in f["message"] and "E1" not in f["message"] and "err=<" not in f["message"]


GPU_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: train}\nspec:\n  priorityClassName: high\n  containers:\n"
    "  - name: t\n    image: pytorch\n    resources:\n      limits: {nvidia.com/gpu: 1}\n"
)


@needs_kustomize
def test_a_base_is_built_on_its_own_when_the_overlay_that_uses_it_does_not_build(tmp_path: Path) -> None:
    """An overlay that cannot build (here a patch that is not there; in CI often a remote resource) keeps
    its render-error, and the base it uses is built on its own: its GPU pod is judged, not lost. A base
    that does not build either adds a note, not a second render-error for the same tree."""
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "pod.yaml").write_text(GPU_POD)
    (tmp_path / "base" / "kustomization.yaml").write_text("resources: [pod.yaml]\n")
    (tmp_path / "broken-base").mkdir()
    (tmp_path / "broken-base" / "kustomization.yaml").write_text("resources: [gone.yaml]\n")
    (tmp_path / "overlay").mkdir()
    (tmp_path / "overlay" / "kustomization.yaml").write_text(
        "resources: [../base, ../broken-base]\npatches:\n  - path: missing.yaml\n"
    )
    r = check([".", "-f", "json", "-v"], tmp_path)
    found = [(f["rule"], f["severity"], f["file"], f["line"]) for f in json.loads(r.stdout)["findings"]]
    assert found == [
        ("besteffort-qos", "error", "base/pod.yaml", 4),
        ("missing-memory-request", "warning", "base/pod.yaml", 9),
        ("missing-memory-limit", "error", "base/pod.yaml", 10),
        ("render-error", "error", "overlay/kustomization.yaml", 1),
    ], r.stdout
    assert "base: built on its own, as no kustomization that uses it built" in r.stderr
    assert "kubectl kustomize broken-base failed: " in r.stderr and "; not linted" in r.stderr
    # When the overlay builds, the base is linted once, as part of it.
    (tmp_path / "overlay" / "kustomization.yaml").write_text("resources: [../base]\n")
    (tmp_path / "broken-base" / "kustomization.yaml").unlink()
    r = check([".", "-f", "json", "-v"], tmp_path)
    assert [f["file"] for f in json.loads(r.stdout)["findings"]] == ["base/pod.yaml"] * 3
    assert "base: built as part of a kustomization that uses it, not on its own" in r.stderr


@needs_kustomize
def test_kustomizations_build_at_once_with_jobs_and_the_run_is_the_same(tmp_path: Path) -> None:
    """With -j2 two kustomize builds run at once (threads wait for the processes); the findings, their
    order and the notes are those of -j1."""
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pod.yaml").write_text(GPU_POD.replace("train", f"train-{name}"))
        (tmp_path / name / "kustomization.yaml").write_text("resources: [pod.yaml]\n")
    (tmp_path / "b" / "kustomization.yaml").write_text("resources: [pod.yaml, gone.yaml]\n")
    one = check([".", "-f", "json", "-v", "-j1"], tmp_path)
    two = check([".", "-f", "json", "-v", "-j2"], tmp_path)
    assert one.stdout == two.stdout and one.stderr == two.stderr
    found = [(f["rule"], f["file"]) for f in json.loads(two.stdout)["findings"]]
    assert found == [
        ("besteffort-qos", "a/pod.yaml"),
        ("missing-memory-request", "a/pod.yaml"),
        ("missing-memory-limit", "a/pod.yaml"),
        ("render-error", "b/kustomization.yaml"),
        ("besteffort-qos", "c/pod.yaml"),
        ("missing-memory-request", "c/pod.yaml"),
        ("missing-memory-limit", "c/pod.yaml"),
    ]


def test_renders_overlap_with_jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tools of a plan run at once up to ``jobs``: each build of a stand-in kustomize logs its start,
    waits, and counts the starts logged by then; built one after another, the first would count one."""
    log = tmp_path / "log"
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "kustomization.yaml").write_text("resources: []\n")
    tool = tmp_path / "kustomize"
    tool.write_text(
        f'#!/bin/sh\necho started >> {log}\nsleep 0.5\necho "# seen $(wc -l < {log})"\n'
        "echo 'apiVersion: v1'\necho 'kind: ConfigMap'\n"
    )
    tool.chmod(0o755)
    monkeypatch.setattr(render, "kustomize_command", lambda: [str(tool), "build"])
    planned = render.plan(collect([str(tmp_path / d) for d in "abc"]), render.RenderOptions(), 1 << 20, None, jobs=3)
    assert planned.failures == [] and [s.path.split(" ")[0] for s in planned.sources] == [
        str(tmp_path / d) for d in "abc"
    ]
    seen = [int(render._READ_ONCE[s.real].split()[2]) for s in planned.sources]
    assert min(seen) >= 2, seen


def test_klog_multi_line_error_is_read_whole() -> None:
    err = (
        'E1127 14:31:43.775495   15850 run.go:72] "command failed" err=<\n'
        "\ttrouble configuring builtin PatchTransformer with config: `\n\tpath: p.yaml\n"
        "\t`: failed to get the patch file from path(p.yaml): no such file or directory\n >\n"
    )
    assert render._first_error(err) == (
        "trouble configuring builtin PatchTransformer with config: ` path: p.yaml "
        "`: failed to get the patch file from path(p.yaml): no such file or directory"
    )


@needs_kustomize
def test_fix_leaves_a_kustomize_base_and_says_why(tmp_path: Path) -> None:
    """A finding mapped back to a base is not fixed there (its paths are the build's): the file is left
    as it is, JSON gives the reason instead of edits, and -v says it is rendered output (it said the
    file could not be read again)."""
    shutil.copytree(KUSTOMIZE_DIR, tmp_path / "k")
    base = tmp_path / "k" / "base" / "job.yaml"
    before = base.read_bytes()
    r = check(["k", "--fix", "--unsafe-fixes", "-v"], tmp_path)
    assert r.exit_code == 1
    assert base.read_bytes() == before
    assert "k/base/job.yaml: not fixed: the finding is in rendered output (helm template, kustomize)" in r.output
    assert "cannot be read again" not in r.output
    r = check(["k", "--unsafe-fixes", "-f", "json"], tmp_path)
    fixes = [f["fix"] for f in json.loads(r.stdout)["findings"] if f.get("fix")]
    assert fixes and all("rendered output" in x["unfixable"] and "edits" not in x for x in fixes)


SAMPLE = """apiVersion: v1
kind: Pod
metadata: {name: sample}
spec:
  containers:
    - name: c
      image: x
      resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_a_file_the_kustomization_does_not_name_is_linted_as_it_is(tmp_path: Path) -> None:
    """A kubebuilder project's config/samples: the kustomization lists some samples; the others are
    manifests of their own, which kustomize never reads. Named alone, such a file is linted, not the
    kustomization's build; beside it, with or without the tools, it is linted as it is too."""
    shutil.copytree(KUSTOMIZE_DIR, tmp_path / "k")
    (tmp_path / "k" / "base" / "sample_gpu.yaml").write_text(SAMPLE)
    alone = check(["k/base/sample_gpu.yaml", "-f", "json"], tmp_path)
    found = [(f["rule"], f["file"], f["line"], f["severity"]) for f in json.loads(alone.stdout)["findings"]]
    assert ("besteffort-qos", "k/base/sample_gpu.yaml", 4, "error") in found
    assert {f[1] for f in found} == {"k/base/sample_gpu.yaml"}  # the kustomization is not built
    for env in (None, {"PATH": str(tmp_path / "none")}):
        r = check(["k", "-f", "json"], tmp_path, env=env)
        files = {f["file"] for f in json.loads(r.stdout)["findings"]}
        assert "k/base/sample_gpu.yaml" in files, env
        assert "k/base/job.yaml" not in files or env is None  # the base's own file: only through its build
    # A file the kustomization names (a resource, a patch, a generator's file) stays part of it.
    uses = charts.kustomization_uses(str(tmp_path / "k" / "overlays" / "prod"))
    assert {os.path.basename(p) for p in uses} == {"kustomization.yaml", "memory.yaml"}


def test_kustomization_without_the_tools_is_one_render_error(tmp_path: Path) -> None:
    shutil.copytree(KUSTOMIZE_DIR, tmp_path / "k")
    r = check(["k", "-f", "json"], tmp_path, env={"PATH": str(tmp_path / "none")})
    assert r.exit_code == 1
    assert [(f["rule"], f["file"], f["message"]) for f in json.loads(r.stdout)["findings"]] == [
        (
            "render-error",
            "k/overlays/prod/kustomization.yaml",
            "kustomization k/overlays/prod not linted: neither kustomize nor kubectl is on PATH; install one, or "
            "pipe the build in: kubectl kustomize k/overlays/prod | kubelint-ml check -",
        )
    ]


# ----------------------------------------------------------------------------
# Context files, globs, --verbose


PRIORITY = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: training-high}\nvalue: 100000\n"
JOB = """apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      priorityClassName: training-high
      restartPolicy: Never
      containers:
        - name: c
          image: x
          resources:
            limits: {cpu: "1", memory: 1Gi}
"""
BAD_POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}]\n"


def test_context_files_give_facts_and_are_never_reported_on(tmp_path: Path) -> None:
    (tmp_path / "cluster").mkdir()
    (tmp_path / "cluster" / "priority.yaml").write_text(PRIORITY + "---\n" + BAD_POD)
    (tmp_path / "job.yaml").write_text(JOB)
    # Staged: the job and another class's file; the class the job names is defined elsewhere.
    (tmp_path / "low.yaml").write_text(PRIORITY.replace("training-high", "training-low"))
    without = check(["job.yaml", "low.yaml", "-f", "json"], tmp_path)
    assert "unknown-priority-class" in {f[0] for f in rows(without)}
    with_context = check(["job.yaml", "low.yaml", "--context", "cluster/", "-f", "json"], tmp_path)
    assert with_context.exit_code == 0 and rows(with_context) == []
    (tmp_path / ".kubelint-ml.yaml").write_text("context: [cluster/priority.yaml]\n")
    assert rows(check(["job.yaml", "low.yaml", "-f", "json"], tmp_path)) == []
    r = check(["job.yaml", "--context", "nowhere/"], tmp_path)
    assert r.exit_code == 2 and "context nowhere/: no such file or directory" in r.stderr


def test_quoted_globs_are_expanded(tmp_path: Path) -> None:
    (tmp_path / "training" / "a" / "b").mkdir(parents=True)
    (tmp_path / "training" / "top.yaml").write_text(BAD_POD)
    (tmp_path / "training" / "a" / "b" / "deep.yml").write_text(BAD_POD.replace("name: p", "name: q"))
    (tmp_path / "training" / "README.md").write_text("# not yaml: [")
    one = check(["training/*.yaml", "-f", "json"], tmp_path)
    assert {f[1] for f in rows(one)} == {"training/top.yaml"}
    deep = check(["training/**/*.y*ml", "-f", "json"], tmp_path)
    assert {f[1] for f in rows(deep)} == {"training/top.yaml", "training/a/b/deep.yml"}
    everything = check(["training/**", "-f", "json"], tmp_path)
    assert json.loads(everything.stdout)["summary"]["files"] == 2  # README.md is not a manifest
    none = check(["jobs/*.yaml"], tmp_path)
    assert none.exit_code == 2 and "no YAML or JSON file matches jobs/*.yaml" in none.stderr


@pytest.mark.slow
def test_verbose_never_changes_results(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    runs = [
        CliRunner().invoke(
            main, ["check", str(corpus), "fixtures/accelerators", "-f", "json", *extra], catch_exceptions=False
        )
        for extra in ([], ["-v"])
    ]
    assert runs[0].exit_code == runs[1].exit_code == 1
    assert runs[0].stdout == runs[1].stdout
    assert "gpu-node-unresolved" not in runs[1].stdout
    assert runs[1].stderr.count("note:") > runs[0].stderr.count("note:")


def test_paths_named_by_piped_text_are_read_only_when_they_are_regular_files(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    piped = (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
        f"    config.kubernetes.io/origin: |\n      path: {fifo}\n"
        f"    alpha.config.kubernetes.io/transformations: |\n      - configuredIn: {fifo}\n"
        "        configuredBy:\n          kind: PatchTransformer\n"
        "spec:\n  containers: [{name: c, image: x}]\n"
    ).encode()
    r = check(["-", "-f", "json"], tmp_path, input=piped)  # would block forever if the FIFO were opened
    assert {f[1] for f in rows(r)} == {"<stdin>"}


def test_go_templates_inside_rendered_strings_are_not_template_errors(tmp_path: Path) -> None:
    piped = (
        b"---\n# Source: mon/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: alerts}\n"
        b'data:\n  alert.tmpl: |\n    {{ define "slack.text" }}{{ .CommonLabels.alertname }}{{ end }}\n'
    )
    r = check(["-", "-f", "json"], tmp_path, input=piped)
    assert r.exit_code == 0 and rows(r) == []
    raw = check(["-", "-f", "json"], tmp_path, input=piped.replace(b"# Source: mon/templates/cm.yaml\n", b""))
    assert rows(raw) == []  # without helm's marks too: the directive is text in a block scalar, valid YAML


@pytest.mark.skipif(
    render.helm_binary() is None, reason="helm is not on PATH (no Debian package; PyPI ships no Linux helm binary)"
)
def test_real_helm_renders_the_chart_and_findings_map_to_its_templates() -> None:
    r = check(["fixtures/render/helm/subchart", "-f", "json"], ROOT)
    template = "fixtures/render/helm/subchart/templates/tests/test-nothing.yaml"
    assert [(f[0], f[1], f[2]) for f in rows(r)] == [
        ("besteffort-qos", template, 7),
        ("missing-priority-class", template, 7),
        ("missing-memory-limit", template, 9),
        ("missing-memory-request", template, 9),
    ]


def test_text_output_names_the_rendered_location_under_verbose() -> None:
    r = check(["-", "-v", "--no-color"], HELM_DIR, input=(HELM_DIR / "rendered.yaml").read_bytes())
    lines = r.stdout.splitlines()
    # Grouped text: the file once, then its findings; under -v each has its detail, remediation and rendered place.
    header = lines.index("subchart/templates/tests/test-nothing.yaml")
    at = next(i for i in range(header, len(lines)) if lines[i].startswith("    9:5 "))
    assert lines[at + 3] == f"        rendered output: <stdin>:{HEADER_LINES + 112}:7"
    quiet = check(["-", "--no-color"], HELM_DIR, input=(HELM_DIR / "rendered.yaml").read_bytes())
    assert "rendered output" not in quiet.stdout


@needs_kustomize
def test_a_base_that_several_overlays_build_gets_each_finding_once(tmp_path: Path) -> None:
    """llm-d's guides (llm-d/llm-d guides/pd-disaggregation/modelserver/gpu/vllm: base/, aws/,
    gke/, coreweave/ over one base whose patch-prefill.yaml sizes the prefill pod's /dev/shm
    at 20Gi over a 16Gi memory limit): each overlay renders the base's Deployment, and its
    finding maps back to the same line of the base's patch once, with every overlay's rendered
    location among its related locations, not once per overlay."""
    base = tmp_path / "base"
    base.mkdir()
    (base / "kustomization.yaml").write_text(
        "resources:\n- deploy.yaml\nnamePrefix: pd-disaggregation-nvidia-gpu-vllm-\npatches:\n- path: patch-prefill.yaml\n"
    )
    (base / "deploy.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: prefill\nspec:\n"
        "  selector:\n    matchLabels: {app: prefill}\n  template:\n    metadata:\n      labels: {app: prefill}\n"
        "    spec:\n      priorityClassName: serving\n      containers:\n      - name: modelserver\n"
        "        image: vllm/vllm-openai:v0.11.0\n"
    )
    (base / "patch-prefill.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: prefill\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: modelserver\n          resources:\n            limits:\n"
        "              memory: 16Gi\n              cpu: '8'\n              nvidia.com/gpu: '1'\n"
        "            requests:\n              memory: 16Gi\n              cpu: '8'\n              nvidia.com/gpu: '1'\n"
        "          volumeMounts:\n            - name: shm\n              mountPath: /dev/shm\n"
        "      volumes:\n        - name: shm\n          emptyDir:\n            medium: Memory\n"
        "            sizeLimit: 20Gi\n"
    )
    for cloud in ("aws", "gke"):
        (tmp_path / cloud).mkdir()
        (tmp_path / cloud / "kustomization.yaml").write_text(
            f"resources:\n- ../base\ncommonLabels:\n  cloud: {cloud}\n"
        )
    r = check([".", "-f", "json"], tmp_path)
    found = [f for f in rows(r) if f[0] == "emptydir-memory-exceeds-limit"]
    assert [f[:4] for f in found] == [("emptydir-memory-exceeds-limit", "base/patch-prefill.yaml", 26, 13)]
    assert sorted(rel[0].split(" (")[0] for rel in found[0][5]) == ["aws", "gke"]  # (kubectl kustomize)
    assert json.loads(r.output)["summary"]["by_severity"]["warning"] == 1
    # an overlay that renames the objects makes findings on other objects: each is kept
    (tmp_path / "gke" / "kustomization.yaml").write_text("resources:\n- ../base\nnamePrefix: gke-\n")
    r = check([".", "-f", "json"], tmp_path)
    assert len([f for f in rows(r) if f[0] == "emptydir-memory-exceeds-limit"]) == 2
