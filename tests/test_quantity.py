"""Quantity grammar, values and canonical forms (docs/k8s-facts.md §2, apimachinery tests)."""

from __future__ import annotations

from fractions import Fraction

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kubelint_ml.k8s.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    Quantity,
    QuantityError,
    format_bytes,
    format_cpu,
    milli_round_up,
    parse_manifest_quantity,
    parse_quantity,
    rational_lt,
)

F = Fraction
NANO = F(1, 10**9)

# (input, exact value, format, canonical) -- cases of apimachinery quantity_test.go (docs/k8s-facts.md §2)
FACT_VECTORS = [
    ("1Gi", F(1073741824), BINARY_SI, "1Gi"),
    ("1024Mi", F(1073741824), BINARY_SI, "1Gi"),
    ("0.5Gi", F(536870912), BINARY_SI, "512Mi"),
    ("1.5Gi", F(1610612736), BINARY_SI, "1536Mi"),
    ("12Mi", F(12582912), BINARY_SI, "12Mi"),
    ("100M", F(100000000), DECIMAL_SI, "100M"),
    ("1000M", F(10**9), DECIMAL_SI, "1G"),
    ("500m", F(1, 2), DECIMAL_SI, "500m"),
    ("1.5", F(3, 2), DECIMAL_SI, "1500m"),
    ("0.1", F(1, 10), DECIMAL_SI, "100m"),
    ("1e3", F(1000), DECIMAL_EXPONENT, "1e3"),
    ("1E-3", F(1, 1000), DECIMAL_EXPONENT, "1e-3"),
    ("1E", F(10**18), DECIMAL_SI, "1E"),
    ("8k", F(8000), DECIMAL_SI, "8k"),
    ("50k", F(50000), DECIMAL_SI, "50k"),
    (".001Ki", F(1024, 1000), BINARY_SI, "1024m"),
    ("100.035Ki", F(10243584, 100), BINARY_SI, "102435840m"),
    ("0.9n", NANO, DECIMAL_SI, "1n"),
    ("0.5e-9", NANO, DECIMAL_EXPONENT, "1e-9"),
    ("0.0000000001", NANO, DECIMAL_SI, "1n"),
    ("3.001n", 4 * NANO, DECIMAL_SI, "4n"),
    (".", F(0), DECIMAL_SI, "0"),
    ("1.", F(1), DECIMAL_SI, "1"),
    ("1.G", F(10**9), DECIMAL_SI, "1G"),
    ("9Ei", F(2**63 - 1), BINARY_SI, "9223372036854775807"),
    ("500m", F(1, 2), DECIMAL_SI, "500m"),  # memory: 500m is half a byte, still valid
    ("-1", F(-1), DECIMAL_SI, "-1"),
]


@pytest.mark.parametrize(("text", "value", "fmt", "canonical"), FACT_VECTORS)
def test_fact_sheet_vectors(text, value, fmt, canonical):
    q = parse_quantity(text)
    assert q.value == value
    assert q.format == fmt
    assert q.canonical() == canonical


# (input, value, format) from apimachinery's TestQuantityParse table
UPSTREAM_VECTORS = [
    ("0", F(0), DECIMAL_SI),
    ("0n", F(0), DECIMAL_SI),
    ("0Ki", F(0), BINARY_SI),
    ("0Ti", F(0), BINARY_SI),
    ("1Ki", F(1024), BINARY_SI),
    ("7Mi", F(7 * 2**20), BINARY_SI),
    ("3Ei", F(3 * 2**60), BINARY_SI),
    ("5n", 5 * NANO, DECIMAL_SI),
    ("4u", F(4, 10**6), DECIMAL_SI),
    ("40T", F(4 * 10**13), DECIMAL_SI),
    ("2P", F(2 * 10**15), DECIMAL_SI),
    ("1E6", F(10**6), DECIMAL_EXPONENT),
    ("1e15", F(10**15), DECIMAL_EXPONENT),
    ("100.035k", F(100035), DECIMAL_SI),
    ("0.0005k", F(1, 2), DECIMAL_SI),
    ("0.5e-2", F(5, 1000), DECIMAL_EXPONENT),
    ("1.3E+6", F(1300000), DECIMAL_EXPONENT),
    ("1.7E18", F(17 * 10**17), DECIMAL_EXPONENT),
    ("6.987654321G", F(6987654321), DECIMAL_SI),
    ("1.01E", F(101 * 10**16), DECIMAL_SI),
    ("1.1E-9", 2 * NANO, DECIMAL_EXPONENT),
    ("0.00000000050", NANO, DECIMAL_SI),
    ("0.00000012345", 124 * NANO, DECIMAL_SI),
    ("0.00000012354", 124 * NANO, DECIMAL_SI),
    ("9223372036854775807Ki", F(2**63 - 1), BINARY_SI),
    ("12E", F(12 * 10**18), DECIMAL_SI),
    ("0.5Mi", F(2**19), BINARY_SI),
    ("0.025Ti", F(274877906944, 10), BINARY_SI),
    ("0.000000000001Ki", 2 * NANO, DECIMAL_SI),  # rounds up and changes format
    (".0001k", F(1, 10), DECIMAL_SI),
    ("-.", F(0), DECIMAL_SI),
    ("-1.025Ti", -F(1025, 1000) * 2**40, BINARY_SI),
]


@pytest.mark.parametrize(("text", "value", "fmt"), UPSTREAM_VECTORS)
def test_upstream_parse_vectors(text, value, fmt):
    q = parse_quantity(text)
    assert (q.value, q.format) == (value, fmt)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1e4", "10e3"),  # exponent lowered to a multiple of 3
        ("1.2e3", "1200"),
        ("0.5e0", "500e-3"),
        ("1025", "1025"),
        ("1025Ki", "1025Ki"),
        ("1536Ki", "1536Ki"),
        ("2048Ki", "2Mi"),
        ("1023", "1023"),
        ("0.5Ki", "512"),  # BinarySI below 1024 is printed in decimal
        ("+1", "1"),
        ("-1.5Gi", "-1536Mi"),
        ("-8Ei", "-9223372036854775807"),  # capped on the absolute value
        ("1000E", "1"),  # Go has no suffix for 10^21 and prints none
        ("10e-3", "10e-3"),
        ("0.000001", "1u"),
    ],
)
def test_canonical_forms(text, canonical):
    assert parse_quantity(text).canonical() == canonical


INVALID = [
    "",
    " 1",
    "1 ",
    "1 Gi",
    "1GB",
    "1Gb",
    "1K",
    "1ki",
    "1mi",
    "0.1mi",
    "1i",
    ".5i",
    "1e",
    "-3.01e-",
    "abc",
    "aoeu",
    "1.1.1",
    "1.1.M",
    "1+1.0M",
    "0.1am",
    # beyond the fact sheet
    "NaN",
    "nan",
    "inf",
    "-Inf",
    "\u0661",  # ARABIC-INDIC DIGIT ONE
    "1\u0661",
    "\uff11",  # FULLWIDTH DIGIT ONE
    "1\n",
    "1_000",
    "0x10",
    "1e3.5",
    "1Ki1",
    "1Eі",
    "e-20",  # no digits and a scale needing the exact path
    "1e9223372036854775808",  # exponent beyond int64
    "Non-Numeric",
    # refused to keep the numbers bounded (Go would keep a bare scale)
    "1e1001",
    "1" * 5000,
    "0." + "0" * 5000 + "1",
]


@pytest.mark.parametrize("text", INVALID)
def test_invalid_quantities(text):
    with pytest.raises(QuantityError):
        parse_quantity(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1GB", "unknown suffix 'GB'"),
        ("1K", "unknown suffix 'K'"),
        ("1ki", "unknown suffix 'ki'"),
        ("1 Gi", "whitespace is not allowed"),
        ("abc", "not a number"),
        ("", "empty quantity"),
        ("1e" + "1" * 5000, "exponent out of range"),  # more digits than int() takes: an error, not a crash
        ("1e-" + "9" * 20, "exponent out of range"),
    ],
)
def test_error_messages_say_why(text, message):
    with pytest.raises(QuantityError, match=message):
        parse_quantity(text)


def test_quantity_error_is_value_error():
    assert issubclass(QuantityError, ValueError)


@pytest.mark.parametrize(
    ("text", "value", "fmt"),
    [
        # Odd corners of the upstream scanner that it does accept.
        ("+", F(0), DECIMAL_SI),
        ("Ki", F(0), BINARY_SI),
        ("m", F(0), DECIMAL_SI),
        ("e-5", F(0), DECIMAL_EXPONENT),
        ("-000", F(0), DECIMAL_SI),
        ("00.5", F(1, 2), DECIMAL_SI),
        ("1e-20", NANO, DECIMAL_EXPONENT),
        ("-1e-20", -NANO, DECIMAL_EXPONENT),  # rounding is away from zero
        ("-0.9n", -NANO, DECIMAL_SI),
        ("1e4294967296", F(1), DECIMAL_EXPONENT),  # int32 wrap of the exponent
        ("1e1000", F(10**1000), DECIMAL_EXPONENT),
        ("1" * 1000 + "Ei", F(2**63 - 1), BINARY_SI),
    ],
)
def test_scanner_corners(text, value, fmt):
    q = parse_quantity(text)
    assert (q.value, q.format) == (value, fmt)


def test_is_integer():
    assert parse_quantity("2").is_integer()
    assert parse_quantity("1Ki").is_integer()
    assert parse_quantity("1000m").is_integer()
    assert not parse_quantity("500m").is_integer()
    assert not parse_quantity("1.5").is_integer()


def test_quantity_is_frozen_and_hashable():
    q = parse_quantity("1Gi")
    with pytest.raises(AttributeError):
        q.value = F(1)  # type: ignore[misc]
    assert {q, parse_quantity("1024Mi")} == {Quantity(F(2**30), BINARY_SI)}


def test_cached_results_are_stable():
    assert parse_quantity("1.5Gi") is parse_quantity("1.5Gi")
    for _ in range(2):
        with pytest.raises(QuantityError, match="unknown suffix 'GB'"):
            parse_quantity("1GB")


# --- manifest values ------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "value", "fmt"),
    [
        (" 1", F(1), DECIMAL_SI),  # JSON/YAML decoding trims
        ("1 ", F(1), DECIMAL_SI),
        ("\t2Gi\n", F(2 * 2**30), BINARY_SI),
        ("\u00a0500m", F(1, 2), DECIMAL_SI),  # Go's TrimSpace includes NBSP
        (4, F(4), DECIMAL_SI),
        (0, F(0), DECIMAL_SI),
        (0.5, F(1, 2), DECIMAL_SI),
        (0.1, F(1, 10), DECIMAL_SI),  # the decimal text, not the binary float
        (2.2, F(11, 5), DECIMAL_SI),
        (1000.0, F(1000), DECIMAL_SI),
        (1e-07, F(1, 10**7), DECIMAL_EXPONENT),
        (10**20, F(10**20), DECIMAL_SI),
    ],
)
def test_manifest_values(raw, value, fmt):
    q = parse_manifest_quantity(raw)
    assert (q.value, q.format) == (value, fmt)


@pytest.mark.parametrize(
    ("text", "value", "canonical"),
    [
        ("cpu: 0.5", F(1, 2), "500m"),
        ("cpu: 0.1", F(1, 10), "100m"),
        ("cpu: 2", F(2), "2"),
        ("memory: 1e3", F(1000), "1e3"),  # a string to PyYAML (YAML 1.1 floats need a dot)
        ("memory: 1.0e+3", F(1000), "1k"),  # a float
        ("memory: 1_000", F(1000), "1k"),  # YAML 1.1 int
        ("memory: '1Gi'", F(2**30), "1Gi"),
        ("memory: ' 1Gi '", F(2**30), "1Gi"),
        ("memory: 0x10", F(16), "16"),
    ],
)
def test_yaml_loaded_values(text, value, canonical):
    (raw,) = yaml.safe_load(text).values()
    q = parse_manifest_quantity(raw)
    assert q.value == value
    assert q.canonical() == canonical


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (True, "expected a quantity, got a boolean"),
        (False, "expected a quantity, got a boolean"),
        (None, "expected a quantity, got null"),
        ([1], "expected a quantity, got a list"),
        ({"a": 1}, "expected a quantity, got a mapping"),
        (float("nan"), "expected a quantity, got nan"),
        (float("inf"), "expected a quantity, got inf"),
        (b"1", "expected a quantity, got a bytes"),
        ("1 Gi", "whitespace is not allowed"),
        ("1GB", "unknown suffix 'GB'"),
        ("", "empty quantity"),
        ("   ", "empty quantity"),
    ],
)
def test_manifest_value_errors(raw, message):
    with pytest.raises(QuantityError, match=message):
        parse_manifest_quantity(raw)


@pytest.mark.parametrize("text", ["cpu: .inf", "cpu: .nan", "cpu: true", "cpu: ~", "cpu: [1]"])
def test_yaml_non_quantities(text):
    (raw,) = yaml.safe_load(text).values()
    with pytest.raises(QuantityError):
        parse_manifest_quantity(raw)


def test_parse_quantity_does_not_trim():
    with pytest.raises(QuantityError):
        parse_quantity(" 1")
    assert parse_manifest_quantity(" 1").value == 1


# --- helpers --------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "rounded"),
    [
        (F(1, 10**4), F(1, 1000)),
        (F(1, 2), F(1, 2)),
        (F(-1, 10**4), F(-1, 1000)),
        (F(0), F(0)),
        (F(1001, 10**6), F(2, 1000)),
    ],
)
def test_milli_round_up(value, rounded):
    assert milli_round_up(value) == rounded


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (F(512 * 2**20), "512Mi"),
        (F(3 * 2**29), "1.5Gi"),
        (F(12 * 2**20), "12Mi"),
        (F(2**30), "1Gi"),
        (F(8 * 2**40), "8Ti"),
        (F(1, 2), "500m bytes"),
        (F(512), "512 bytes"),
        (F(0), "0"),
        (F(10**9), "1G"),
        (F(100 * 10**6), "100M"),
        (F(10243584, 100), "~100.04Ki"),
        (F(-(2**30)), "-1Gi"),
    ],
)
def test_format_bytes(value, text):
    assert format_bytes(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(F(1, 2), "500m"), (F(2), "2"), (F(3, 2), "1500m"), (F(1, 4000), "250u"), (F(0), "0"), (F(96), "96")],
)
def test_format_cpu(value, text):
    assert format_cpu(value) == text


# --- properties -----------------------------------------------------------

_SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "e3", "E-6", "e+2"]


@given(
    sign=st.sampled_from(["", "-", "+"]),
    whole=st.text("0123456789", max_size=12),
    frac=st.one_of(st.none(), st.text("0123456789", max_size=12)),
    suffix=st.sampled_from(_SUFFIXES),
)
def test_canonical_round_trips(sign, whole, frac, suffix):
    text = sign + whole + ("" if frac is None else "." + frac) + suffix
    try:
        q = parse_quantity(text)
    except QuantityError:
        return
    if q.format == DECIMAL_SI and abs(q.value) >= 10**21:
        return  # Go prints no suffix above 10^18 * 999 (see test_canonical_forms)
    again = parse_quantity(q.canonical())
    assert again.value == q.value
    # nano precision, never more
    assert (q.value * 10**9).denominator == 1


@given(st.text(max_size=20))
def test_arbitrary_text_only_raises_quantity_error(text):
    try:
        q = parse_quantity(text)
    except QuantityError:
        return
    assert isinstance(q.value, Fraction)


def test_exponent_with_leading_zeros_reads_as_go_does():
    assert parse_quantity("1e" + "0" * 30 + "3").value == 1000


fractions_ = st.fractions(max_denominator=10**12) | st.integers(-(10**30), 10**30)


@given(fractions_, fractions_)
def test_rational_lt_compares_as_fraction_does(a, b):
    assert rational_lt(a, b) == (Fraction(a) < Fraction(b))
    assert rational_lt(b, a) == (Fraction(b) < Fraction(a))
