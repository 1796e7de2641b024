"""kubelint_ml.lazyre.LazyPattern: compiled at first use, then the compiled pattern's own methods."""

from __future__ import annotations

import re

import pytest

from kubelint_ml.lazyre import LazyPattern


def test_compiled_at_first_use_then_calls_go_straight_to_the_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda p, f=0: compiled.append(p) or real(p, f))
    lazy = LazyPattern(r"(\d+)([a-z]*)", re.IGNORECASE)
    assert compiled == [] and lazy.pattern == r"(\d+)([a-z]*)"
    assert lazy.match("12AB").groups() == ("12", "AB")
    assert compiled == [r"(\d+)([a-z]*)"]
    assert isinstance(lazy.search.__self__, re.Pattern)  # a bound method of the compiled pattern
    assert lazy.search("x 7y").group(0) == "7y"
    assert compiled == [r"(\d+)([a-z]*)"]  # compiled once


def test_every_method_answers_as_re_pattern() -> None:
    text = "a1 b22 C333"
    for source, flags in ((r"[a-z](\d+)", re.IGNORECASE), (rb"\d", 0)):
        lazy, real = LazyPattern(source, flags), re.compile(source, flags)
        subject = text if isinstance(source, str) else text.encode()
        empty = subject[:0]
        assert [m.span() for m in lazy.finditer(subject)] == [m.span() for m in real.finditer(subject)]
        assert lazy.findall(subject) == real.findall(subject)
        assert lazy.split(subject, 1) == real.split(subject, 1)
        assert lazy.sub(empty, subject) == real.sub(empty, subject)
        assert lazy.subn(empty, subject, 1) == real.subn(empty, subject, 1)
        assert (lazy.fullmatch(subject) is None) == (real.fullmatch(subject) is None)
        assert lazy.search(subject, 2).span() == real.search(subject, 2).span()


def test_other_attributes_are_missing() -> None:
    with pytest.raises(AttributeError):
        LazyPattern("x").groups  # noqa: B018 - not a method the code uses
