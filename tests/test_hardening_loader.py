"""The loader on hostile input: limits, tags, encodings, and never an exception.

Every test runs on both parsers a user can have: LibYAML's (PyYAML's wheels) and
PyYAML's pure-Python one (PyYAML built without LibYAML, and the loader's fallback);
the nesting tests also on a LibYAML whose own nesting ceiling cannot be lifted.
How long the bombs and floods take is measured by bench/bounds.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from bombs import billion_laughs, merge_bomb
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.input import loader
from kubelint_ml.input.loader import (
    COMPOSE_SAFE_DEPTH,
    Limits,
    LoadError,
    PosDict,
    PosList,
    load,
    load_single,
    looks_like_template,
)

GOOD = b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: good\n"


@pytest.fixture(autouse=True, params=["libyaml", "pure-python"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Which YAML parser the loader reads with.

    ``libyaml-capped``: LibYAML with PyYAML 6.0.4's own nesting ceiling (1,000 levels)
    and no way to lift it, as a PyYAML built on a LibYAML with the ceiling but without
    the setter would be: the loader must fall back to the pure-Python parser.
    """
    if request.param != "pure-python" and not yaml.__with_libyaml__:
        pytest.skip(f"PyYAML {yaml.__version__} is built without LibYAML")
    if request.param == "pure-python":
        monkeypatch.setattr(loader, "PositionLoader", loader.PurePositionLoader)
    if request.param == "libyaml":
        # LibYAML reads every file itself: its nesting ceiling, where it has one, is lifted.
        read_with = []
        real_load = loader._load

        def spy(data: bytes, limits: Limits, loader_class: type, deep: bool) -> loader.LoadResult:
            read_with.append(loader_class)
            return real_load(data, limits, loader_class, deep)

        monkeypatch.setattr(loader, "_load", spy)
        yield request.param
        assert loader.PurePositionLoader not in read_with
        return
    if request.param == "libyaml-capped":
        if loader._set_max_nest_level is None:
            pytest.skip(f"PyYAML {yaml.__version__}'s LibYAML has no nesting ceiling")
        before = loader._get_max_nest_level()
        monkeypatch.setattr(loader, "_set_max_nest_level", None)
        yaml._yaml._set_max_nest_level(1000)  # type: ignore[attr-defined]
        yield request.param
        yaml._yaml._set_max_nest_level(before)  # type: ignore[attr-defined]
        return
    yield request.param


# The nesting tests: on the two parsers, and on a LibYAML whose ceiling stays.
every_parser = pytest.mark.parametrize("parser", ["libyaml", "pure-python", "libyaml-capped"], indirect=True)
# The deepest documents take seconds with the pure-Python parser and with LibYAML capped: those
# variants are in the full suite, LibYAML's in the quick loop.
every_parser_deep = pytest.mark.parametrize(
    "parser",
    [
        "libyaml",
        pytest.param("pure-python", marks=pytest.mark.slow),
        pytest.param("libyaml-capped", marks=pytest.mark.slow),
    ],
    indirect=True,
)


DEFAULT_LIMITS = Limits()


def problems(data: bytes, limits: Limits = DEFAULT_LIMITS) -> list[tuple[int, int, str]]:
    return [(p.line, p.column, p.message) for p in load(data, limits).problems]


# ----------------------------------------------------------------------------
# Alias and merge bombs


def test_billion_laughs_is_refused_and_the_next_document_is_kept() -> None:
    result = load(billion_laughs() + b"---\n" + GOOD)
    assert [(p.line, p.document, p.message) for p in result.problems] == [
        (1, 0, "aliases expand to more than 1000000 nodes (limits.maxExpandedNodes; an alias bomb?); refusing to load")
    ]
    assert [d.data["metadata"]["name"] for d in result.documents] == ["good"]


def test_alias_expansion_limit_is_configurable() -> None:
    small = billion_laughs(levels=3, width=3)  # 1 + 3 * (1 + 3 * (1 + 3 * 1)) + ... nodes
    assert load(small).problems == []
    assert "more than 20 nodes" in problems(small, Limits(max_expanded_nodes=20))[0][2]


def test_recursive_alias() -> None:
    assert problems(b"a: &a [1, *a]\n") == [(1, 1, "recursive alias (a node contains itself); refusing to load")]
    assert problems(b"&a {x: {y: *a}}\n") == [(1, 1, "recursive alias (a node contains itself); refusing to load")]


def test_shared_subtrees_are_fine() -> None:
    data = b"base: &b {cpu: 1, memory: 1Gi}\nx: *b\ny: *b\nz: [*b, *b]\n"
    doc = load(data).documents[0].data
    assert doc["z"][1] == {"cpu": 1, "memory": "1Gi"}


@every_parser
def test_aliases_cannot_nest_past_the_depth_limit() -> None:
    deep = b"[" * 150 + b"]" * 150
    data = b"a: &a " + deep + b"\nb: " + b"[" * 100 + b"*a" + b"]" * 100 + b"\n"
    assert problems(data) == [
        (1, 1, "aliases expand to nesting deeper than 200 levels (limits.maxDepth); refusing to load")
    ]


def test_merge_key_chains_do_not_blow_up() -> None:
    # PyYAML's own merge handling takes minutes and gigabytes on this.
    result = load(merge_bomb(12))
    assert result.problems == []
    top = result.documents[0].data["a11"]
    assert top == {**{f"x{i}": i for i in range(1, 10)}, **{f"y{i}": i for i in range(1, 12)}}


@pytest.mark.slow
def test_merge_key_work_is_bounded() -> None:
    result = load(merge_bomb(3000))  # exponential merging took 27 s at 8 levels
    assert [(p.message) for p in result.problems] == [
        "merge keys (<<) expand to more than 1000000 entries (limits.maxExpandedNodes); refusing to load"
    ]


def test_merge_keys_keep_yaml_semantics() -> None:
    data = (
        b"a: &a {x: 1, y: 2}\n"
        b"b: {<<: *a, y: 3}\n"
        b"c: {<<: [*a, {x: 9, z: 1}]}\n"
        b"d: {<<: [{x: 9, z: 1}, *a]}\n"
        b"e: &e {<<: *a, x: 2}\n"
        b"f: {<<: [*e, *a]}\n"
        b"g: {<<: &h {<<: {x: 1}, x: 2}}\n"  # h is flattened before it is first built
        b"i: *h\n"
    )
    doc = load(data).documents[0].data
    assert doc["b"] == {"x": 1, "y": 3}
    assert doc["c"] == {"x": 1, "y": 2, "z": 1}
    assert doc["d"] == {"x": 9, "y": 2, "z": 1}
    assert doc["f"] == {"x": 2, "y": 2}
    assert doc["g"] == doc["i"] == {"x": 2}
    assert (
        problems(b"a: {<<: {x: 1}, x: 2, x: 3}\n")[0][2] == "duplicate key: 'x' (each key may appear once in a mapping)"
    )
    assert problems(b"a: &a 1\n<<: *a\n")[0][2].startswith(
        "invalid YAML: while constructing a mapping: expected a mapping"
    )


# ----------------------------------------------------------------------------
# Depth, size, nodes, documents


@every_parser
def test_deep_flow_nesting_drops_only_that_document() -> None:
    data = GOOD + b"---\n" + b"[" * 300 + b"]" * 300 + b"\n---\n" + GOOD
    result = load(data)
    assert [(p.line, p.column, p.document, p.message) for p in result.problems] == [
        (6, 201, 1, "nesting deeper than 200 levels (limits.maxDepth); document not linted")
    ]
    assert [d.index for d in result.documents] == [0, 2]


@every_parser
def test_deep_block_nesting() -> None:
    data = b"".join(b" " * i + b"a:\n" for i in range(250)) + b"---\n" + GOOD
    result = load(data)
    assert [(p.line, p.document) for p in result.problems] == [(201, 0)]
    assert [d.index for d in result.documents] == [1]
    seq = b"- " * 250 + b"x\n"
    assert problems(seq) == [(1, 401, "nesting deeper than 200 levels (limits.maxDepth); document not linted")]


@every_parser
def test_nesting_hidden_between_block_and_flow_is_found() -> None:
    # 150 block levels (short lines) then 100 flow levels on separate lines.
    block = b"".join(b" " * i + b"k:\n" for i in range(150))
    flow = b" " * 150 + b"x: " + b"[\n" * 100 + b"]" * 100 + b"\n"
    assert problems(block + flow)[0][2] == "nesting deeper than 200 levels (limits.maxDepth); document not linted"


@pytest.mark.parametrize(
    "parser",
    # PyYAML's pure-Python scanner takes seconds (quadratic in the flow levels) to reach the limit.
    [
        "libyaml",
        pytest.param("pure-python", marks=pytest.mark.slow),
        pytest.param("libyaml-capped", marks=pytest.mark.slow),
    ],
    indirect=True,
)
@pytest.mark.parametrize("opener, closer", [(b"[", b"]"), (b"{a: ", b"}"), (b"- ", b"")])
def test_nesting_that_would_crash_libyaml_refuses_the_file(opener: bytes, closer: bytes) -> None:
    # LibYAML's composer recurses in C; 100,000 levels end the process with SIGSEGV.
    data = GOOD + b"---\n" + opener * 100_000 + b"x" + closer * 100_000 + b"\n---\n" + GOOD
    result = load(data)
    assert result.documents == []
    assert [p.message for p in result.problems] == [
        f"nesting deeper than {COMPOSE_SAFE_DEPTH} levels; refusing to load the file"
    ]


SECOND = b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: second\nspec:\n  containers:\n  - name: app\n    image: busybox:1.36\n"


@every_parser_deep
@pytest.mark.parametrize(
    "deep, where",
    [
        (b"[" * 1200 + b"]" * 1200 + b"\n", (6, 201)),  # over LibYAML 0.2.6's own 1,000
        (b"{a: " * 2000 + b"x" + b"}" * 2000 + b"\n", (6, 801)),
        (b"- " * 2000 + b"x\n", (6, 401)),
        (b"".join(b" " * i + b"a:\n" for i in range(2000)) + b" " * 2000 + b"x\n", (206, 201)),
    ],
    ids=["flow-sequences", "flow-mappings", "block-sequences", "block-mappings"],
)
def test_a_deep_document_between_two_good_ones_hides_nothing(deep: bytes, where: tuple[int, int]) -> None:
    # PyYAML 6.0.4's LibYAML refuses 1,000 levels by itself: unhandled, the second good
    # document was lost behind an "exceeded maximum nesting depth" syntax error.
    result = load(GOOD + b"---\n" + deep + b"---\n" + SECOND)
    assert [(p.line, p.column, p.document, p.message) for p in result.problems] == [
        (*where, 1, "nesting deeper than 200 levels (limits.maxDepth); document not linted")
    ]
    assert [(d.index, d.data["metadata"]["name"]) for d in result.documents] == [(0, "good"), (2, "second")]
    assert result.documents[1].data["spec"]["containers"][0].lc["image"] == (
        8 + deep.count(b"\n") + 6,
        5,
        8 + deep.count(b"\n") + 6,
        12,
    )


@every_parser_deep
def test_a_deep_document_keeps_the_findings_of_the_others(tmp_path: Path) -> None:
    path = tmp_path / "pods.yaml"
    first = SECOND.replace(b"name: second", b"name: first")
    path.write_bytes(first + b"---\n" + b"[" * 1200 + b"]" * 1200 + b"\n---\n" + SECOND)
    run = CliRunner().invoke(main, ["check", "--format", "concise", str(path)])
    assert run.exit_code == 1, run.output
    assert run.output.replace(str(path), "pods.yaml").splitlines() == [
        "pods.yaml:5:1: besteffort-qos BestEffort QoS: no cpu or memory requests or limits",
        "pods.yaml:5:1: missing-priority-class no priorityClassName: pods run at the default priority",
        "pods.yaml:7:5: missing-memory-limit container 'app' has no memory limit",
        "pods.yaml:7:5: missing-memory-request container 'app' has no memory request or limit",
        "pods.yaml:10:201: parse-error nesting deeper than 200 levels (limits.maxDepth); document not linted",
        "pods.yaml:16:1: besteffort-qos BestEffort QoS: no cpu or memory requests or limits",
        "pods.yaml:16:1: missing-priority-class no priorityClassName: pods run at the default priority",
        "pods.yaml:18:5: missing-memory-limit container 'app' has no memory limit",
        "pods.yaml:18:5: missing-memory-request container 'app' has no memory request or limit",
    ]


@pytest.mark.parametrize("parser", ["libyaml"], indirect=True)
def test_libyaml_gets_its_own_nesting_ceiling_back(parser: str) -> None:
    # Lifted only while the loader reads, counted across threads: other LibYAML users keep theirs.
    if loader._get_max_nest_level is None:
        pytest.skip(f"PyYAML {yaml.__version__}'s LibYAML has no nesting ceiling to lift")
    from concurrent.futures import ThreadPoolExecutor

    before = loader._get_max_nest_level()
    data = GOOD + b"---\n" + b"[" * 1200 + b"]" * 1200 + b"\n---\n" + SECOND
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(load, [data] * 8))
    assert all([d.index for d in r.documents] == [0, 2] for r in results)
    assert loader._get_max_nest_level() == before
    with pytest.raises(yaml.YAMLError, match="exceeded maximum nesting depth"):
        yaml.load(b"[" * 1200 + b"]" * 1200, Loader=yaml.CSafeLoader)


@every_parser
def test_depth_limit_is_configurable() -> None:
    data = b"[" * 30 + b"]" * 30
    assert load(data).problems == []
    assert problems(data, Limits(max_depth=20)) == [
        (1, 21, "nesting deeper than 20 levels (limits.maxDepth); document not linted")
    ]


@pytest.mark.skipif(loader._CParser is None, reason="PyYAML without LibYAML: no event reader")
def test_the_event_reader_builds_up_to_the_depth_limit_and_leaves_deeper_input() -> None:
    """Plain input is read from its events up to the limit (no nesting pre-check first); one level
    more, and the composing loader reads it and reports the document."""
    block = b"a:\n" + b"".join(b"  " * (i + 1) + b"a:\n" for i in range(18)) + b"  " * 19 + b"a: 1\n"
    for data in (block, b"[" * 20 + b"]" * 20, b"- " * 20 + b"x\n"):
        fast = loader._load_events(data, Limits(max_depth=20))
        assert fast is not None and len(fast.documents) == 1, data
        assert loader._load_events(data, Limits(max_depth=19)) is None, data
        assert problems(data, Limits(max_depth=19))[0][2] == (
            "nesting deeper than 19 levels (limits.maxDepth); document not linted"
        )


@every_parser_deep
def test_the_highest_depth_limit_the_config_allows_is_honoured() -> None:
    limits = Limits(max_depth=1000)  # the schema's maximum
    block = b"a:\n" + b"".join(b"  " * (i + 1) + b"a:\n" for i in range(998)) + b"  " * 999 + b"a: 1\n"
    for data in (block, b"[" * 1000 + b"]" * 1000):
        result = load(data, limits)
        assert result.problems == [] and len(result.documents) == 1
    assert problems(b"[" * 1001 + b"]" * 1001, limits) == [
        (1, 1001, "nesting deeper than 1000 levels (limits.maxDepth); document not linted")
    ]


def test_file_size_limit() -> None:
    data = GOOD * 10
    assert problems(data, Limits(max_file_bytes=100)) == [
        (1, 1, f"file is {len(data)} bytes, over the 100-byte limit (limits.maxFileBytes); not linted")
    ]
    assert Limits().max_file_bytes == 20 * 1024 * 1024


@pytest.mark.slow
def test_node_limit_refuses_a_flood_of_nodes() -> None:
    # Two million one-character items: several GB and half a minute without the limit.
    data = b"[" + b"1," * 2_000_000 + b"1]\n"
    result = load(data)
    assert result.documents == []
    assert [(p.line, p.message) for p in result.problems] == [
        (1, "more than 200000 YAML nodes in one file (limits.maxNodes); not linted")
    ]
    assert problems(GOOD * 3, Limits(max_nodes=5)) != []
    assert load(GOOD, Limits(max_nodes=10)).problems == []


def test_documents_limit_keeps_the_first_ones() -> None:
    data = b"---\n".join([GOOD] * 5)
    result = load(data, Limits(max_documents=3))
    assert len(result.documents) == 3
    assert [(p.document, p.message) for p in result.problems] == [
        (3, "more than 3 documents in one file (limits.maxDocuments); the rest are not linted")
    ]


@pytest.mark.slow
def test_many_empty_documents_stop_at_the_documents_limit() -> None:
    result = load(b"---\n" * 200_000)  # one (null) node each: at the node limit
    assert [p.message for p in result.problems] == [
        "more than 100000 documents in one file (limits.maxDocuments); the rest are not linted"
    ]


# ----------------------------------------------------------------------------
# Tags: only the safe, JSON-shaped ones


@pytest.mark.parametrize(
    "text, tag",
    [
        ("!!python/object/apply:os.system ['touch {marker}']", "!!python/object/apply:os.system"),
        ("a: !!python/object/apply:subprocess.call [['touch', '{marker}']]", "!!python/object/apply:subprocess.call"),
        ("!!python/object/new:os.system ['touch {marker}']", "!!python/object/new:os.system"),
        ("a: !!python/name:os.system", "!!python/name:os.system"),
        ("a: !!python/module:os", "!!python/module:os"),
        ("a: !<tag:yaml.org,2002:python/object/apply:os.system> ['touch {marker}']", "!!python/object/apply:os.system"),
        (
            "%TAG !p! tag:yaml.org,2002:python/\n---\na: !p!object/apply:os.system ['touch {marker}']",
            "!!python/object/apply:os.system",
        ),
        ("a: !Ref something", "!Ref"),
    ],
)
def test_python_and_unknown_tags_are_parse_problems_never_executed(tmp_path: Path, text: str, tag: str) -> None:
    marker = tmp_path / "executed"
    data = (text.format(marker=marker) + "\n---\n").encode() + GOOD
    result = load(data)
    assert not marker.exists()
    assert len(result.problems) == 1
    assert result.problems[0].message.startswith(f"unsupported YAML tag {tag}: only the standard tags are read")
    assert result.problems[0].message.endswith("no tag is ever executed")
    assert [d.data["metadata"]["name"] for d in result.documents] == ["good"]


FOREIGN_FILES = {
    # mkdocs-material's emoji settings, a CloudFormation template: other tools' files with their own tags
    "mkdocs.yml": "site_name: docs\nmarkdown_extensions:\n  - pymdownx.emoji:\n"
    "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n",
    "stack.yaml": 'AWSTemplateFormatVersion: "2010-09-09"\nResources:\n  B:\n    Type: AWS::S3::Bucket\n'
    "    Properties:\n      BucketName: !Sub '${AWS::StackName}-b'\n",
}


def test_other_tools_files_with_their_own_tags_are_skipped_not_errors(tmp_path: Path) -> None:
    """A document whose root mapping has neither apiVersion nor kind is no manifest, whatever tags it
    holds: skipped as any other non-manifest (-v says why), never constructed. A tag in a manifest, or
    at the root of a document that is not a mapping, stays a parse-error."""
    marker = tmp_path / "executed"
    for name, text in FOREIGN_FILES.items():
        (tmp_path / name).write_text(text)
        [problem] = load(text.encode()).problems
        assert problem.foreign and problem.message.startswith("unsupported YAML tag"), name
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: !Ref PodName\n")
    (tmp_path / "seq.yaml").write_text(f"!!python/object/apply:os.system ['touch {marker}']\n")
    result = CliRunner().invoke(main, ["check", str(tmp_path), "-f", "json", "-v"])
    assert result.exit_code == 1 and not marker.exists()
    found = [(Path(f["file"]).name, f["rule"], f["line"]) for f in json.loads(result.stdout)["findings"]]
    assert found == [("pod.yaml", "parse-error", 4), ("seq.yaml", "parse-error", 1)]
    assert "mkdocs.yml:4: skipped: not a Kubernetes manifest (unsupported YAML tag !!python/name:" in result.stderr
    assert "stack.yaml:6: skipped: not a Kubernetes manifest (unsupported YAML tag !Sub:" in result.stderr
    alone = CliRunner().invoke(main, ["check", str(tmp_path / "mkdocs.yml"), str(tmp_path / "stack.yaml")])
    assert alone.exit_code == 0, alone.output


def test_standard_tags_give_json_shaped_values() -> None:
    data = (
        b"bin: !!binary aGVsbG8=\n"
        b"set: !!set {a, b}\n"
        b"omap: !!omap [x: 1, y: 2]\n"
        b"pairs: !!pairs [x: 1, x: 2]\n"
        b"ts: 2024-01-02T03:04:05Z\n"
        b"date: 2024-01-02\n"
        b"str: !!str 12\n"
        b"int: !!int '0x1F'\n"
        b"float: !!float 1\n"
    )
    doc = load(data).documents[0].data
    assert doc == {
        "bin": "aGVsbG8=",
        "set": {"a": None, "b": None},
        "omap": [{"x": 1}, {"y": 2}],
        "pairs": [{"x": 1}, {"x": 2}],
        "ts": "2024-01-02T03:04:05Z",
        "date": "2024-01-02",
        "str": "12",
        "int": 31,
        "float": 1.0,
    }
    assert type(doc["set"]) is PosDict and type(doc["omap"]) is PosList


@pytest.mark.parametrize(
    "text, message",
    [
        ("a: !!int abc", "invalid YAML: int value 'abc': not a valid int"),
        ("a: !!float abc", "invalid YAML: float value 'abc': not a valid float"),
        ("a: !!bool maybe", "invalid YAML: bool value 'maybe': not a valid bool"),
        ("a: !!map [1, 2]", "invalid YAML: tag !!map needs a mapping, found a sequence"),
        ("a: !!seq {x: 1}", "invalid YAML: tag !!seq needs a sequence, found a mapping"),
        ("a: !!set [1]", "invalid YAML: tag !!set needs a mapping, found a sequence"),
        ("a: !!str [1]", "invalid YAML: expected a scalar node, but found sequence"),
        ("a: " + "7" * 5000, "invalid YAML: int value '" + "7" * 37 + "...': more digits than Python allows (4300)"),
    ],
)
def test_bad_scalars_and_mismatched_tags(text: str, message: str) -> None:
    result = load(b"x: 1\n---\n" + text.encode() + b"\n---\n" + GOOD)
    assert [(p.line, p.column, p.document, p.message) for p in result.problems] == [(3, 4, 1, message)]
    assert [d.index for d in result.documents] == [0, 2]


def test_big_but_allowed_integers() -> None:
    assert load(b"a: " + b"9" * 4000).documents[0].data["a"] == int("9" * 4000)


def test_duplicate_keys() -> None:
    data = b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\n"
    assert problems(data) == [(5, 3, "duplicate key: 'name' (each key may appear once in a mapping)")]


# ----------------------------------------------------------------------------
# Encodings and binary data


def test_binary_file() -> None:
    data = bytes(range(256)) * 4
    assert problems(data) == [(1, 1, "binary file (contains NUL bytes); not a manifest")]


def test_non_utf8_file_points_at_the_byte() -> None:
    data = b"kind: Pod\nmetadata:\n  name: caf\xe9\n"
    assert problems(data) == [(3, 1, "file is not valid UTF-8 (byte 0xe9 at offset 31)")]


def test_utf16_is_reported_and_a_utf8_bom_is_decoded() -> None:
    # The API server reads UTF-8 only: UTF-16, with or without a byte order mark, is a problem.
    tail = "; the API server reads manifests as UTF-8 only: save it as UTF-8; not linted"
    assert problems("\ufeffkind: Pod\n".encode("utf-16-le")) == [
        (1, 1, "file is UTF-16LE (with a byte order mark)" + tail)
    ]
    assert problems("\ufeffkind: Pod\n".encode("utf-16-be")) == [
        (1, 1, "file is UTF-16BE (with a byte order mark)" + tail)
    ]
    assert problems("kind: Pod\n".encode("utf-16-le")) == [
        (1, 1, "file is UTF-16LE (without a byte order mark)" + tail)
    ]
    assert problems("kind: Pod\n".encode("utf-16-be")) == [
        (1, 1, "file is UTF-16BE (without a byte order mark)" + tail)
    ]
    assert load(b"\xef\xbb\xbfkind: Pod\n").documents[0].data == {"kind": "Pod"}


def test_control_characters_are_kept_as_data_not_interpreted() -> None:
    doc = load(b'name: "\\e[31mred\\0\\x07"\n').documents[0].data
    assert doc["name"] == "\x1b[31mred\x00\x07"
    assert (
        problems(b"name: \x1b[31mred\n")[0][2]
        == "invalid YAML: unacceptable character #x001b: control characters are not allowed"
    )


def test_empty_and_comment_only_files() -> None:
    for data in (b"", b"\n\n", b"# just a comment\n", b"---\n", b"---\n...\n"):
        result = load(data)
        assert result.problems == []
        assert all(d.data is None for d in result.documents)


def test_errors_at_end_of_input_stay_inside_the_file(parser: str) -> None:
    # A syntax error is told in its parser's words (the limits and tag problems are the loader's own).
    if parser == "libyaml":
        assert problems(b"[") == [(1, 1, "invalid YAML: while parsing a flow node: did not find expected node content")]
    else:
        assert problems(b"[") == [
            (1, 2, "invalid YAML: while parsing a flow node: expected the node content, but found '<stream end>'")
        ]
    assert problems(b"a: 1\rb: [")[0][0] == 2


def test_syntax_error_keeps_the_documents_before_and_after_it() -> None:
    # The reading starts again at the next document marker; the problem is where the open
    # flow sequence started.
    result = load(GOOD + b"---\na: [1\n---\n" + GOOD)
    assert [(d.index, d.line, d.data["metadata"]["name"]) for d in result.documents] == [(0, 1, "good"), (2, 8, "good")]
    assert [(p.line, p.column, p.document) for p in result.problems] == [(6, 4, 1)]
    assert result.documents[1].data["metadata"].lc["name"][:2] == (11, 3)


def test_every_document_after_each_syntax_error_is_read() -> None:
    text = b"a: 1\nb\n# note\nc: 2\n---\nx: 1\n--- {bad\n---\r\ny: 2\n---\nz: 'open\n"
    result = load(text)
    assert [(d.index, d.line, dict(d.data)) for d in result.documents] == [(1, 6, {"x": 1}), (3, 9, {"y": 2})]
    # a key without its ':' is reported where it starts, not past the comment below it
    assert [(p.line, p.column, p.document) for p in result.problems] == [(2, 1, 0), (7, 5, 2), (11, 4, 4)]
    assert "could not find expected ':'" in result.problems[0].message


def test_a_git_conflict_marker_is_named_and_the_next_document_read() -> None:
    text = (
        b"apiVersion: v1\nkind: ConfigMap\n<<<<<<< HEAD\ndata:\n  # ours\n  a: '1'\n=======\n"
        b"data:\n  a: '2'\n>>>>>>> theirs\n---\n" + GOOD
    )
    result = load(text)
    assert [(p.line, p.column, p.document) for p in result.problems] == [(3, 1, 0)]
    assert result.problems[0].message == "invalid YAML: git merge conflict marker (<<<<<<<): resolve the conflict"
    assert [(d.index, d.line) for d in result.documents] == [(1, 12)]


def test_resynchronising_keeps_the_documents_limit() -> None:
    text = b"a\nb: 1\n---\nx: 1\n---\ny: 2\n---\nz: 3\n"
    result = load(text, Limits(max_documents=3))
    assert [d.index for d in result.documents] == [1, 2]
    assert [p.document for p in result.problems] == [0, 3]
    assert "limits.maxDocuments" in result.problems[1].message


def test_a_marker_on_the_broken_line_itself_is_not_read_again() -> None:
    result = load(b"--- {a: [\n--- {b: 1\n--- {c: 1}\n")
    assert [(d.index, d.line, dict(d.data)) for d in result.documents] == [(2, 3, {"c": 1})]
    assert [p.document for p in result.problems] == [0, 1]


def test_the_document_after_a_syntax_error_is_linted(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_bytes(
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n<<<<<<< HEAD\ndata: {a: '1'}\n=======\n"
        b"data: {a: '2'}\n>>>>>>> b\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n"
        b"  containers:\n  - name: c\n    image: cuda\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n"
    )
    r = CliRunner().invoke(main, ["check", str(tmp_path / "m.yaml"), "-f", "json"])
    found = sorted((f["rule"], f["line"]) for f in json.loads(r.output)["findings"])
    assert ("parse-error", 5) in found
    assert {("besteffort-qos", 15), ("missing-memory-limit", 20)} <= set(found)


def test_helm_templates_are_recognised() -> None:
    assert looks_like_template(b"kind: Pod\nmetadata:\n  name: {{ .Values.name }}\n") == 3
    assert looks_like_template(b"{{- if .Values.x }}\nkind: Pod\n") == 1
    assert looks_like_template(b"kind: ConfigMap\ndata:\n  t: 'a {{ b }}'\n") == 0


def test_load_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubelint_ml.input import loader

    def broken(self, node):  # a bug anywhere in construction
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(loader.PositionLoader, "construct_document", broken)

    class BrokenEvents:  # a bug in building from events: the file goes to the composing loader
        def __init__(self, data: bytes) -> None:
            pass

        def get_event(self) -> None:
            raise ZeroDivisionError("events")

        def dispose(self) -> None:
            pass

    monkeypatch.setattr(loader, "_CParser", BrokenEvents)
    assert problems(GOOD) == [(1, 1, "could not load the file (ZeroDivisionError: boom)")]


# ----------------------------------------------------------------------------
# Config and rule files share the loader's safety


def test_load_single() -> None:
    assert load_single(b"") is None
    assert load_single(b"a: 1\n") == {"a": 1}
    with pytest.raises(LoadError) as e:
        load_single(b"a: 1\n---\nb: 2\n")
    assert (e.value.line, e.value.message) == (3, "expected one YAML document, found several")
    with pytest.raises(LoadError) as e:
        load_single(billion_laughs())
    assert e.value.message.startswith("aliases expand to more than 1000000 nodes")
    with pytest.raises(LoadError) as e:
        load_single(b"a: !!python/object/apply:os.system ['true']\n")
    assert e.value.message.startswith("unsupported YAML tag !!python/object/apply:os.system")


def test_reading_leaves_nothing_for_the_collector() -> None:
    """A file's parser and values are freed when the file is done, by reference counting: a
    cycle (a recursive closure holding the parser) would keep every file's buffers until the
    collector ran, which a run over thousands of files postpones (peak memory doubled once)."""
    import gc

    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            load(GOOD + b"---\n" + GOOD)
        assert gc.collect() == 0
    finally:
        gc.enable()
