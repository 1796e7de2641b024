"""YAML that expands far past its text: alias and merge-key bombs for the hardening tests."""

from __future__ import annotations


def billion_laughs(levels: int = 9, width: int = 9) -> bytes:
    """Each level a list of ``width`` aliases of the one before: ``width ** levels`` nodes."""
    lines = ['l0: &l0 "lol"']
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return ("\n".join(lines) + "\n").encode()


def merge_bomb(levels: int, own_keys: bool = True) -> bytes:
    """Each level merges nine aliases of the one before (with a key of its own, unless not ``own_keys``)."""
    lines = ["a0: &a0 {x1: 1, x2: 2, x3: 3, x4: 4, x5: 5, x6: 6, x7: 7, x8: 8, x9: 9}"]
    for i in range(1, levels):
        own = f", y{i}: {i}" if own_keys else ""
        lines.append(f"a{i}: &a{i} {{<<: [" + ", ".join([f"*a{i - 1}"] * 9) + f"]{own}}}")
    return ("\n".join(lines) + "\n").encode()
