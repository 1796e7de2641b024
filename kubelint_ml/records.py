"""Plain value classes: what ``@dataclass`` gives, written out, so that importing them costs nothing.

``@dataclass`` writes each class's ``__init__``, ``__repr__`` and ``__eq__``
as source and compiles it when the module is imported: close to a millisecond
a class, and a plain ``check`` defines over fifty of them (half of its start).
A class written out is compiled once, into the ``.pyc``. Each class lists its
fields in ``_fields`` (``__init__``'s order) and writes its ``__init__``; this
base gives the rest as a dataclass would: ``repr`` with the fields, equality
of the same class field by field; :class:`Frozen` also hashes by its fields
(and refuses to change after ``__init__``). :func:`replace` is
``dataclasses.replace``.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

_R = TypeVar("_R", bound="Record")


class Record:
    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({inner})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = self._fields
        return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass without frozen=True


class Frozen(Record):
    """Set once, in ``__init__`` (through ``object.__setattr__``), as ``@dataclass(frozen=True)``."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    # pickle and copy: what pickle would do, through object.__setattr__
    def __getstate__(self) -> tuple:
        return tuple(getattr(self, name) for name in self._fields)

    def __setstate__(self, state: tuple) -> None:
        for name, value in zip(self._fields, state):
            object.__setattr__(self, name, value)

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(getattr(self, name) for name in self._fields))


def replace(obj: _R, **changes: Any) -> _R:
    """A copy of ``obj`` with ``changes``, made through its ``__init__`` (as ``dataclasses.replace``)."""
    for name in changes:
        if name not in obj._fields:
            raise TypeError(f"{type(obj).__qualname__} has no field {name!r}")
    values = {name: getattr(obj, name) for name in obj._fields}
    values.update(changes)
    return type(obj)(**values)
