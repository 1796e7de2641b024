"""--jobs: forked workers sharing a span queue with the parent; same output as one process, whatever happens to them."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

import kubelint_ml.run.lint as lint
from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.report import render
from kubelint_ml.run import facts, parallel, pool
from kubelint_ml.run.config import Config
from kubelint_ml.run.inputs import RunInputs

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork"),
    pytest.mark.usefixtures("force_parallel"),
]


def _run(paths: list[str], jobs: int, verbose: bool = False):
    return lint.run(paths, RunInputs(Config(), load_builtin_rules(), jobs=jobs, verbose=verbose))


def test_every_job_count_gives_the_sequential_output(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [str(FIXTURES)]
    seq, seq_notes = _run(paths, 1, verbose=True)
    expected = render("json", seq)
    assert seq.findings and seq.files > 50
    for jobs in (2, 3, 8):
        par, par_notes = _run(paths, jobs, verbose=True)
        assert render("json", par) == expected, jobs
        assert par_notes == seq_notes
        assert (par.files, par.documents, par.objects) == (seq.files, seq.documents, seq.objects)


def test_facts_from_a_shared_first_pass_equal_a_sequential_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first pass read by several processes finds the same PriorityClasses and KubeletConfigurations,
    stdin's included, in the same order."""
    import io
    import sys

    from kubelint_ml.input.sources import collect

    pc = (FIXTURES / "priority").rglob("*.yaml")
    stdin = b"".join(p.read_bytes() + b"\n---\n" for p in sorted(pc))
    sources = collect([str(FIXTURES), "-"], ())
    seq = facts.first_pass(sources, Config(), stdin, jobs=1)
    par = facts.first_pass(sources, Config(), stdin, jobs=3)
    assert par[2] == seq[2] > 0
    assert [(f.name, f.value, f.source) for f in par[0].priority_class_objects] == [
        (f.name, f.value, f.source) for f in seq[0].priority_class_objects
    ]
    assert len(seq[0].priority_class_objects) > 3 and any(f.source == "<stdin>" for f in seq[0].priority_class_objects)
    assert [k.source for k in par[0].kubelet_configs] == [k.source for k in seq[0].kubelet_configs]
    # the cluster's objects and DRA claims, parsed by the workers and sent back as plain values (facts read no positions)
    assert par[0].cluster.describe() == seq[0].cluster.describe() and par[0].cluster.local_queues
    assert par[0].cluster.local_queues == seq[0].cluster.local_queues
    assert (par[0].dra.templates, par[0].dra.classes.keys(), par[0].dra.files) == (
        seq[0].dra.templates,
        seq[0].dra.classes.keys(),
        seq[0].dra.files,
    )
    assert par[0].dra.templates
    positions = [(f.obj.file, f.obj.document, f.obj.kind, f.obj.group) for f in par[0].priority_class_objects if f.obj]
    assert positions == [
        (f.obj.file, f.obj.document, f.obj.kind, f.obj.group) for f in seq[0].priority_class_objects if f.obj
    ]
    assert [f.obj.data for f in par[0].priority_class_objects if f.obj] == [
        f.obj.data for f in seq[0].priority_class_objects if f.obj
    ]
    assert any(type(f.obj.data) is dict for f in par[0].priority_class_objects if f.obj)  # a worker's, plain
    assert par[1] == [stdin if s.real == "-" else None for s in sources]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    expected = render("json", _run([str(FIXTURES), "-"], 1)[0])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    assert render("json", _run([str(FIXTURES), "-"], 2)[0]) == expected


def test_a_sequential_run_parses_each_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The files the first pass parses for facts are linted from that parse: nothing is parsed twice, and
    the output (JSON's fix edits too, whose events are read again) is the one a second parse gives."""
    from collections import Counter

    from kubelint_ml.run import runner

    def run_json() -> str:
        inputs = RunInputs(Config(), load_builtin_rules(), jobs=1, resolve_fixes=True)
        return render("json", lint.run([str(FIXTURES)], inputs)[0])

    with monkeypatch.context() as m:
        m.setattr(facts, "MAX_PARSED_BYTES", 0)  # parsed again in the second pass
        expected = run_json()
    parses: Counter = Counter()
    for module in (facts, runner):
        real = module.load

        def counted(data: bytes, *args, _real=real, **kwargs):
            parses[data] += 1
            return _real(data, *args, **kwargs)

        monkeypatch.setattr(module, "load", counted)
    assert run_json() == expected
    assert '"edits"' in expected
    files = Counter(p.read_bytes() for p in FIXTURES.rglob("*") if p.is_file())
    assert len(parses) > 50 and all(n <= max(1, files[data]) for data, n in parses.items())


def test_a_worker_that_dies_loses_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed mid-run (the OOM killer, say): the parent lints the parts it did not return."""
    paths = [str(FIXTURES)]
    expected = render("json", _run(paths, 1)[0])

    import select

    died_r, died_w = os.pipe()

    def die(*args):  # what a forked worker runs for each span it takes: say so, and go
        os.write(died_w, b"x")
        os._exit(9)

    monkeypatch.setattr(parallel, "_work", die)
    own = parallel._lint_span
    calls = []

    def parent_span(*args):  # the parent's own spans (the first before forking): wait until the worker took one
        calls.append(args)
        if len(calls) == 2:
            assert select.select([died_r], [], [], 60)[0], "the worker never took a span"
        return own(*args)

    monkeypatch.setattr(parallel, "_lint_span", parent_span)
    try:
        result, notes = _run(paths, 2)
    finally:
        os.close(died_r)
        os.close(died_w)
    assert render("json", result) == expected
    assert any(n.startswith("a worker process exited early; 1 of ") for n in notes), notes


def test_span_queue_stays_within_a_pipe_buffer_and_covers_every_file() -> None:
    for count, jobs in [(1, 2), (47, 2), (3840, 2), (19_200, 2), (1_000_000, 8), (5, 64)]:
        spans = pool.spans(count, jobs)
        assert len(spans) <= pool.MAX_SPANS
        assert spans[0][0] == 0 and spans[-1][1] == count
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    # A few files first (the parent's warm-up), then about 32 per process of at most 64 files,
    # then quarter-size ones so that the processes end together.
    spans = pool.spans(3840, 2)
    sizes = [b - a for a, b in spans]
    assert sizes[0] == 4 and max(sizes) == 60 and sizes[-1] == 15 and sum(s == 15 for s in sizes) == 16
    assert max(b - a for a, b in pool.spans(19_200, 2)) == 64


def test_results_are_taken_out_of_the_pipe_only_when_whole() -> None:
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    inbox = pool.Inbox(0, read_end)
    first = pickle.dumps((3, ([], ["note"], 1, 2)))
    second = pickle.dumps((4, ([], [], 5, 6)))
    data = len(first).to_bytes(8, "little") + first + len(second).to_bytes(8, "little") + second
    try:
        os.write(write_end, data[:5])
        assert inbox.read(block=False) == []
        os.write(write_end, data[5 : len(first) + 12])
        assert inbox.read(block=False) == [(3, ([], ["note"], 1, 2))]
        os.write(write_end, data[len(first) + 12 :])
        os.close(write_end)
        assert inbox.read(block=True) == [(4, ([], [], 5, 6))]
        assert not inbox.open and not inbox.buffer
    finally:
        os.close(read_end)


def test_a_fork_that_fails_leaves_the_work_to_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    """No process left to fork (EAGAIN): the run goes on with the workers there are, the parent at least."""
    paths = [str(FIXTURES)]
    expected = render("json", _run(paths, 1)[0])

    tried = []

    def no_fork():
        tried.append(1)
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    assert render("json", _run(paths, 4)[0]) == expected
    assert tried  # the run did try to fork


@pytest.mark.parametrize(
    "extra",
    [
        ["--schema"],
        ["--rules", str(ROOT / "tests" / "data" / "parallel-cel-rules")],
        ["-v", "--show-suppressed", "--format", "sarif"],
    ],
)
def test_schema_cel_and_other_outputs_are_the_same_with_workers(extra, monkeypatch: pytest.MonkeyPatch) -> None:
    """Schema validators, CEL programs and verbose notes live in forked workers too: same output."""
    from click.testing import CliRunner

    from kubelint_ml.cli import main
    from kubelint_ml.engine import cel

    if "--rules" in extra and not cel.available():
        pytest.skip("cel-expr-python not installed")
    args = ["check", str(FIXTURES), *extra]
    if "--format" not in extra:
        args += ["--format", "json"]
    runner = CliRunner()
    seq = runner.invoke(main, args + ["-j1"], catch_exceptions=False)
    par = runner.invoke(main, args + ["-j3"], catch_exceptions=False)
    assert seq.exit_code == par.exit_code == 1
    assert par.stdout == seq.stdout and len(seq.stdout) > 10_000
    assert par.stderr == seq.stderr


def test_sorted_spans_skip_the_final_sort_only_when_their_files_follow_each_other() -> None:
    from kubelint_ml.findings import Finding

    def part(*files: str) -> parallel.FileResult:
        return parallel.FileResult([Finding("r", "error", "m", "", f, 1, 1) for f in files])

    def joined(*parts: parallel.FileResult) -> parallel.Concatenation:
        out = parallel.Concatenation()
        for p in parts:
            out.add(p)
        return out

    together = joined(part("a", "a", "b"), part(), part("c"), part("d", "e"))
    assert together.sorted and [f.file for f in together.total.findings] == ["a", "a", "b", "c", "d", "e"]
    assert not joined(part("a", "b"), part("b", "c")).sorted  # one file in two spans
    # Profile kubelet configs are linted after the tree, whatever their names.
    assert not joined(part("tree/pod.yaml"), part("/etc/kubelet/config.yaml")).sorted


def test_output_stays_sorted_when_a_profile_file_comes_after_the_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The profile's kubelet config is linted after the tree; its absolute path sorts before it.
    kubelet = tmp_path / "kubelet.yaml"
    kubelet.write_text((FIXTURES / "kubelet" / "kubelet-cgroup-v1.yaml").read_text() + "\n---\n- not a mapping\n")
    profile = tmp_path / "profile.yaml"
    profile.write_text(f"profile:\n  kubeletConfig: {kubelet}\n")
    from kubelint_ml.run.config import load_config

    config = load_config(str(profile))
    tree = str(FIXTURES / "scenario")
    seq, _ = lint.run([tree], RunInputs(config, load_builtin_rules(), jobs=1))
    par, _ = lint.run([tree], RunInputs(config, load_builtin_rules(), jobs=3))
    assert render("json", par) == render("json", seq)
    files = [f.file for f in par.findings]
    assert files[0] == str(kubelet) and len(set(files)) > 3
    keys = [f.sort_key() for f in par.findings]
    assert keys == sorted(keys)


def test_a_pipe_named_on_the_command_line_is_read_once_by_a_shared_first_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """`kubelint-ml check -j4 big-tree/ <(helm template ...)`: the process substitution's bytes reach the lint."""
    pod = (FIXTURES / "examples" / "pytorchjob-gpu.yaml").read_bytes()
    r, w = os.pipe()
    os.write(w, pod)
    os.close(w)
    try:
        result, _ = lint.run([str(FIXTURES), f"/dev/fd/{r}"], RunInputs(Config(), load_builtin_rules(), jobs=3))
    finally:
        os.close(r)
    piped = [(f.rule, f.line) for f in result.findings if f.file == f"/dev/fd/{r}"]
    expected = [(f.rule, f.line) for f in lint.lint_text(pod, load_builtin_rules())]
    assert piped == expected and len(expected) > 3
