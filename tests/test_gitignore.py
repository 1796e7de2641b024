"""A directory walk skips what git ignores: .gitignore at every level, .git/info/exclude, and the
pattern language of gitignore(5), compared with git's own answer on the same trees."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.input.gitignore import Layer, decide, parse
from kubelint_ml.input.sources import collect

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")

JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
"""


def ignored(patterns: str, rel: str, is_dir: bool = False) -> bool:
    layer = Layer("/r/", parse(patterns))
    return decide((layer,), "/r/" + rel, rel.rsplit("/", 1)[-1], is_dir)


@pytest.mark.parametrize(
    ("patterns", "rel", "is_dir", "expected"),
    [
        ("build/", "build", True, True),
        ("build/", "build", False, False),  # dir-only: a file named build stays
        ("build/", "a/build", True, True),  # no slash before the end: any depth
        ("/build", "a/build", True, False),  # anchored
        ("/build", "build", False, True),
        ("a/b", "x/a/b", False, False),  # a slash in the middle anchors too
        ("*.yaml\n!keep.yaml", "x/keep.yaml", False, False),
        ("*.yaml\n!keep.yaml", "x/drop.yaml", False, True),
        ("!keep.yaml\n*.yaml", "keep.yaml", False, True),  # the last match decides
        ("**/gen", "a/b/gen", True, True),
        ("**/gen", "gen", True, True),
        ("a/**/z.yaml", "a/z.yaml", False, True),
        ("a/**/z.yaml", "a/b/c/z.yaml", False, True),
        ("a/**", "a/b/c.yaml", False, True),
        ("a/**", "a", True, False),
        ("a*b.yaml", "a/b.yaml", False, False),  # `*` never matches a slash
        ("a?b", "a/b", False, False),
        ("x/**y", "x/a/y", False, False),  # `**` not between slashes is `*`
        ("x/**y", "x/aay", False, True),
        ("[ab].yaml", "a.yaml", False, True),
        ("[!ab].yaml", "a.yaml", False, False),
        ("[!ab].yaml", "c.yaml", False, True),
        ("[a-c]x", "bx", False, True),
        ("[[:digit:]]*", "7up", False, True),
        ("a[+-0]b", "a.b", False, True),  # a range over "/" matches the rest of it
        ("a[+-0]b", "a/b", False, False),  # but never "/"
        ("a[[:punct:]]b", "a/b", False, False),
        ("a[[:punct:]]b", "a-b", False, True),
        ("[]]x", "]x", False, True),  # "]" first is literal
        ("[[:digit:]]*", "up", False, False),
        ("\\#x", "#x", False, True),
        ("#x", "#x", False, False),  # a comment
        ("\\!x", "!x", False, True),
        ("x   ", "x", False, True),  # trailing spaces dropped
        ("x\\ ", "x ", False, True),  # unless escaped
        ("x\\", "x", False, False),  # a trailing backslash never matches
        ("[ab", "[ab", False, False),  # an unclosed bracket never matches
    ],
)
def test_pattern_semantics(patterns: str, rel: str, is_dir: bool, expected: bool) -> None:
    assert ignored(patterns, rel, is_dir) is expected


def _tree(root: Path, files: list[str], ignores: dict[str, str], exclude: str = "") -> None:
    subprocess.run([GIT, "init", "-q", str(root)], check=True)
    for rel in files:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(JOB.format(name=p.stem.lower().replace("_", "-")))
    for rel, text in ignores.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    if exclude:
        (root / ".git" / "info").mkdir(parents=True, exist_ok=True)
        (root / ".git" / "info" / "exclude").write_text(exclude)


def _git_sees(root: Path, under: str = ".") -> set[str]:
    out = subprocess.run(
        [GIT, "ls-files", "-o", "--exclude-standard", "-z", "--", under],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return {
        p
        for p in out.split("\0")
        if p.endswith((".yaml", ".yml", ".json")) and not any(part.startswith(".") for part in p.split("/"))
    }


def _we_see(root: Path, under: str = ".") -> set[str]:
    cwd = os.getcwd()
    os.chdir(root)
    try:
        return {s.path.replace(os.sep, "/") for s in collect([under])}
    finally:
        os.chdir(cwd)


FILES = [
    "a.yaml",
    "keep.yaml",
    "build/a.yaml",
    "build/keep.yaml",
    "src/build/b.yaml",
    "src/gen/x.yaml",
    "src/gen/deep/y.yml",
    "src/lib/z.json",
    "src/lib/keep.yaml",
    "docs/a b.yaml",
    "docs/[x].yaml",
    "vendor/chart/templates/t.yaml",
    "vendor/chart/values.yaml",
    "n1/n2/n3/deep.yaml",
    "n1/n2/other.yaml",
    "7x.yaml",
]

CASES = [
    ({".gitignore": "build/\n"}, ""),
    ({".gitignore": "/build\n"}, ""),
    ({".gitignore": "*.yaml\n!keep.yaml\n"}, ""),
    ({".gitignore": "src/*\n!src/lib/\n"}, ""),
    ({".gitignore": "src/\n!src/lib/keep.yaml\n"}, ""),  # a file in an ignored directory stays ignored
    ({".gitignore": "**/gen/**\n"}, ""),
    ({".gitignore": "n1/**/deep.yaml\n"}, ""),
    ({".gitignore": "*\n!*/\n!*.json\n"}, ""),
    ({".gitignore": "vendor\n", "src/.gitignore": "!build\n*.json\n"}, ""),
    ({".gitignore": "*.yaml\n", "src/.gitignore": "!*.yaml\n"}, ""),  # the deeper file wins
    ({"src/.gitignore": "/gen\n", "n1/n2/.gitignore": "n3/\n"}, ""),
    ({".gitignore": "docs/a\\ b.yaml\ndocs/\\[x\\].yaml\n"}, ""),
    ({".gitignore": "[0-9]*\n"}, ""),
    ({".gitignore": "!keep.yaml\n"}, "*.yaml\n"),  # info/exclude is the lowest
    ({}, "src/\n"),
    ({".gitignore": "# comment\n\n  \nsrc/lib/**\n"}, ""),
]


@needs_git
@pytest.mark.parametrize(("ignores", "exclude"), CASES)
def test_walk_matches_git(tmp_path: Path, ignores: dict[str, str], exclude: str) -> None:
    _tree(tmp_path, FILES, ignores, exclude)
    assert _we_see(tmp_path) == _git_sees(tmp_path)
    # A walk of a subdirectory reads the ignore files above it, up to the work tree's top (a
    # directory named on the command line is walked even when it is ignored itself).
    if subprocess.run([GIT, "check-ignore", "-q", "src"], cwd=tmp_path).returncode != 0:
        assert _we_see(tmp_path, "src") == _git_sees(tmp_path, "src")


WORDS = ["a", "b", "build", "gen", "src", "lib", "n1", "n2", "keep"]


def _random_pattern(rng: random.Random) -> str:
    parts = [rng.choice(WORDS + ["*", "**", "?uild", "[ab]*", "*.yaml", "*.json"]) for _ in range(rng.randint(1, 3))]
    pat = "/".join(parts)
    if rng.random() < 0.25:
        pat = "/" + pat
    if rng.random() < 0.25:
        pat += "/"
    if rng.random() < 0.25:
        pat = "!" + pat
    return pat


@needs_git
@pytest.mark.parametrize("seed", range(12))
def test_walk_matches_git_on_random_patterns(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    files = [
        "/".join(rng.choice(WORDS) for _ in range(rng.randint(0, 3)))
        + f"/{rng.choice(WORDS)}{i}.{rng.choice(['yaml', 'json'])}"
        for i in range(40)
    ]
    files = [f.lstrip("/") for f in files]
    dirs = sorted({f.rsplit("/", 1)[0] for f in files if "/" in f})
    ignores = {".gitignore": "\n".join(_random_pattern(rng) for _ in range(rng.randint(1, 6))) + "\n"}
    for d in rng.sample(dirs, min(2, len(dirs))):
        ignores[f"{d}/.gitignore"] = "\n".join(_random_pattern(rng) for _ in range(rng.randint(1, 3))) + "\n"
    _tree(tmp_path, files, ignores)
    assert _we_see(tmp_path) == _git_sees(tmp_path), ignores


@needs_git
def test_check_skips_ignored_and_lints_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(
        tmp_path,
        ["k8s/train.yaml", "build/train.yaml", "node_modules/x/train.yaml"],
        {".gitignore": "build/\nnode_modules/\n"},
    )
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    out = runner.invoke(main, ["check", "--format", "concise", "."]).output
    files = {line.split(":", 1)[0] for line in out.splitlines() if ":" in line}
    assert files == {"k8s/train.yaml"}
    out = runner.invoke(main, ["check", "--format", "concise", "--no-respect-gitignore", "."]).output
    files = {line.split(":", 1)[0] for line in out.splitlines() if ":" in line}
    assert files == {"k8s/train.yaml", "build/train.yaml", "node_modules/x/train.yaml"}
    # Paths named on the command line are linted, ignored or not; a named directory is walked.
    out = runner.invoke(main, ["check", "--format", "concise", "build/train.yaml", "build"]).output
    assert {line.split(":", 1)[0] for line in out.splitlines() if ":" in line} == {"build/train.yaml"}
    # The config can turn it off too.
    (tmp_path / ".kubelint-ml.yaml").write_text("respectGitignore: false\n")
    out = runner.invoke(main, ["check", "--format", "concise"]).output
    assert {line.split(":", 1)[0] for line in out.splitlines() if ":" in line} == {
        "k8s/train.yaml",
        "build/train.yaml",
        "node_modules/x/train.yaml",
    }


@needs_git
def test_worktree_info_exclude(tmp_path: Path) -> None:
    """In a linked worktree, .git is a file; info/exclude lives in the common git directory."""
    main_repo = tmp_path / "main"
    _tree(main_repo, ["k8s/a.yaml"], {})
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run([GIT, "add", "."], cwd=main_repo, check=True)
    subprocess.run([GIT, "commit", "-qm", "x"], cwd=main_repo, check=True, env=env)
    wt = tmp_path / "wt"
    subprocess.run([GIT, "worktree", "add", "-q", str(wt)], cwd=main_repo, check=True)
    (wt / "scratch").mkdir()
    (wt / "scratch" / "s.yaml").write_text(JOB.format(name="s"))
    (main_repo / ".git" / "info").mkdir(exist_ok=True)
    (main_repo / ".git" / "info" / "exclude").write_text("scratch/\n")
    assert _git_sees(wt) == set()  # untracked and not ignored: none (scratch/ is excluded)
    assert _we_see(wt) == {"k8s/a.yaml"}


def test_a_hostile_pattern_does_not_stall_the_walk(tmp_path: Path) -> None:
    """A backtracking regex engine takes seconds per name on `*a*a*a*...*b` (exponential in the
    stars); the patterns are matched in linear time, so the walk of a tree with a long name stays quick."""
    import time

    (tmp_path / ".gitignore").write_text("*a" * 14 + "*b\n!keep.yaml\n")
    (tmp_path / ("a" * 200 + ".yaml")).write_text(JOB.format(name="x"))
    (tmp_path / "keep.yaml").write_text(JOB.format(name="k"))
    started = time.process_time()
    assert {s.path for s in collect([str(tmp_path)])} == {
        str(tmp_path / ("a" * 200 + ".yaml")),
        str(tmp_path / "keep.yaml"),
    }
    assert time.process_time() - started < 2


@needs_git
def test_global_excludes_file_as_git_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """core.excludesFile (default ~/.config/git/ignore) is the lowest of the ignore files."""
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"):
        monkeypatch.delenv(name, raising=False)
    repo = tmp_path / "repo"
    (home / ".config" / "git" / "ignore").write_text("scratch/\n*.json\n")
    _tree(repo, ["k8s/a.yaml", "k8s/b.json", "scratch/s.yaml"], {"k8s/.gitignore": "!b.json\n"})
    assert _we_see(repo) == _git_sees(repo) == {"k8s/a.yaml", "k8s/b.json"}
    # Named in ~/.gitconfig instead.
    (home / ".config" / "git" / "ignore").unlink()
    (home / "my-ignore").write_text("k8s/a.yaml\n")
    (home / ".gitconfig").write_text('[user]\n\tname = t\n[core]\n\texcludesFile = "~/my-ignore"\n')
    assert _we_see(repo) == _git_sees(repo) == {"k8s/b.json", "scratch/s.yaml"}
