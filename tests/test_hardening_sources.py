"""Walking untrusted trees: symlinks, loops, special files, unreadable directories."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from kubelint_ml.input import sources
from kubelint_ml.input.sources import Source, SourceError, collect, read

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n"


def paths(found: list[Source]) -> list[str]:
    return [s.path for s in found]


@pytest.fixture()
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "pod.yaml").write_text(POD)
    (root / "a" / "b" / "job.yml").write_text(POD)
    (root / "top.json").write_text("{}")
    (root / "notes.txt").write_text("not yaml")
    return root


def test_plain_walk_is_sorted_and_filtered(tree: Path) -> None:
    assert paths(collect(["root"])) == ["root/a/b/job.yml", "root/a/pod.yaml", "root/top.json"]


def test_symlink_loops_end_the_walk(tree: Path) -> None:
    os.symlink("..", tree / "a" / "b" / "up")
    os.symlink(".", tree / "a" / "self")
    os.symlink("loop2", tree / "loop1")
    os.symlink("loop1", tree / "loop2")
    found = collect(["root"])
    assert paths(found) == ["root/a/b/job.yml", "root/a/pod.yaml", "root/top.json"]


def test_symlinks_out_of_the_root_are_not_followed(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text(POD)
    os.symlink(outside, tree / "out-dir")
    os.symlink(outside / "secret.yaml", tree / "out-file.yaml")
    os.symlink("/etc/passwd", tree / "passwd.yaml")
    os.symlink("/", tree / "slash")
    assert paths(collect(["root"])) == ["root/a/b/job.yml", "root/a/pod.yaml", "root/top.json"]
    # Named on the command line, a symlink is the user's choice.
    assert paths(collect(["root/out-file.yaml"])) == ["root/out-file.yaml"]


def test_a_file_reached_twice_is_listed_once_under_the_same_name_in_any_order(tree: Path) -> None:
    os.symlink("a/pod.yaml", tree / "z-link.yaml")
    os.symlink("a", tree / "0-alias")
    one = collect(["root/a", "root"])
    two = collect(["root", "root/a"])
    three = collect(["root/z-link.yaml", "root/a/pod.yaml"])
    assert one == two
    assert paths(one) == ["root/0-alias/b/job.yml", "root/0-alias/pod.yaml", "root/top.json"]
    assert paths(three) == ["root/a/pod.yaml"]


def test_hidden_files_and_directories_are_skipped(tree: Path) -> None:
    (tree / ".git").mkdir()
    (tree / ".git" / "config.yaml").write_text(POD)
    (tree / ".hidden.yaml").write_text(POD)
    assert paths(collect(["root"])) == ["root/a/b/job.yml", "root/a/pod.yaml", "root/top.json"]


def test_special_files_in_a_tree_are_skipped_without_blocking(tree: Path) -> None:
    os.mkfifo(tree / "pipe.yaml")  # reading it would block forever
    os.symlink("pipe.yaml", tree / "pipe-link.yaml")
    os.symlink("missing.yaml", tree / "dangling.yaml")
    found = collect(["root"])
    assert paths([s for s in found if not s.skipped]) == ["root/a/b/job.yml", "root/a/pod.yaml", "root/top.json"]
    # A broken symlink is listed only to be noted under -v; it reads as empty.
    assert [(s.path, s.skipped) for s in found if s.skipped] == [
        ("root/dangling.yaml", "broken symbolic link (its target does not exist)")
    ]


def test_missing_path_is_an_error(tree: Path) -> None:
    with pytest.raises(SourceError, match="no such file or directory: nope"):
        collect(["nope"])
    os.symlink("self-loop", tree / "self-loop")
    with pytest.raises(SourceError):
        collect(["root/self-loop"])


def test_unreadable_directory_is_reported_not_skipped(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_scandir = os.scandir

    def scandir(path):  # as for a directory without read permission
        if str(path).endswith("b"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(sources.os, "scandir", scandir)
    found = collect(["root"])
    assert [(s.path, s.error) for s in found] == [
        ("root/a/b", "cannot list directory: Permission denied"),
        ("root/a/pod.yaml", ""),
        ("root/top.json", ""),
    ]
    with pytest.raises(OSError, match="cannot list directory: Permission denied"):
        read(found[0], 100)


def test_a_named_pipe_given_explicitly_is_read_once_and_remembered(tmp_path: Path) -> None:
    fifo = tmp_path / "process-substitution"
    os.mkfifo(fifo)

    def writer() -> None:
        with open(fifo, "wb") as fh:
            fh.write(POD.encode())

    t = threading.Thread(target=writer)
    t.start()
    source = Source("<(helm template)", str(fifo))
    first = read(source, 1000)
    t.join(5)
    assert first == POD.encode()
    assert read(source, 1000) == first  # a second open would block: the bytes are kept


def test_reads_are_capped(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * 5000)
    assert len(read(Source("big.yaml", str(big)), 100)) == 101
    assert len(read(Source("zero", "/dev/zero"), 100)) == 101


def test_a_regular_file_is_read_whole_up_to_the_cap(tmp_path: Path) -> None:
    exact = tmp_path / "exact.yaml"
    exact.write_bytes(b"a: 1\n" * 20)  # 100 bytes: at the cap, so whole
    assert read(Source("exact.yaml", str(exact)), 100) == b"a: 1\n" * 20
    empty = tmp_path / "empty.yaml"
    empty.write_bytes(b"")
    assert read(Source("empty.yaml", str(empty)), 100) == b""
    with pytest.raises(IsADirectoryError):
        read(Source("dir.yaml", str(tmp_path)), 100)


@pytest.mark.parametrize("size", [0, 100, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, 200_000])
def test_a_file_the_walk_found_is_read_whole_without_fstat(tmp_path: Path, size: int) -> None:
    """The walk knows its files are regular: one read up to 64 KiB, more only when it fills."""
    data = bytes(i % 251 for i in range(size))
    (tmp_path / "f.yaml").write_bytes(data)
    [found] = collect([str(tmp_path)])
    assert found.identity  # what tells read() the file is regular
    assert read(found, 10**6) == data
    assert read(found, 1000) == data[:1001]  # capped at the limit plus one byte, as any other read
    assert read(found, size) == data


def test_unreadable_directory_is_a_parse_error_in_the_run(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from kubelint_ml.cli import main

    real_scandir = os.scandir

    def scandir(path):
        if str(path).endswith("b"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(sources.os, "scandir", scandir)
    r = CliRunner().invoke(main, ["check", "root", "-j1", "-q", "--format", "concise"])
    assert r.exit_code == 1
    assert r.output.splitlines()[0] == (
        "root/a/b:1:1: parse-error cannot read file: cannot list directory: Permission denied"
    )
    assert any(ln.startswith("root/a/pod.yaml:") for ln in r.output.splitlines())
