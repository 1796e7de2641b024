"""LibYAML's parse events, built for less.

PyYAML's LibYAML binding (``yaml._yaml``) makes every event by calling the
class its module names, with positional arguments:
``ScalarEvent(anchor, tag, implicit, value, start_mark, end_mark, style)``.
That class's ``__init__`` (``yaml/events.py``) is Python code filling a fresh
``__dict__``: about a quarter of what reading a manifest from its events costs.

The classes here are built in C: ``BaseException``'s constructor keeps its
positional arguments as the tuple ``args`` (nothing else of an exception is
used; no event is ever raised). Each subclasses PyYAML's own class of the same
name, so ``isinstance`` holds, and answers the same attribute names. The hot
readers (the loader, the fix editor's span tree) take the fields from ``args``
by the indexes below.

:func:`install` puts the classes in the binding's module, once, and checks that
the binding builds them; where it does not (a PyYAML that works differently),
the originals go back and :func:`parse` converts each event (slower, the same).
Events from PyYAML's pure-Python parser are converted too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

# The positional fields of each event, as yaml/events.py declares them and the binding passes them.
FIELDS: dict[str, tuple[str, ...]] = {
    "StreamStartEvent": ("start_mark", "end_mark", "encoding"),
    "StreamEndEvent": ("start_mark", "end_mark"),
    "DocumentStartEvent": ("start_mark", "end_mark", "explicit", "version", "tags"),
    "DocumentEndEvent": ("start_mark", "end_mark", "explicit"),
    "AliasEvent": ("anchor", "start_mark", "end_mark"),
    "ScalarEvent": ("anchor", "tag", "implicit", "value", "start_mark", "end_mark", "style"),
    "SequenceStartEvent": ("anchor", "tag", "implicit", "start_mark", "end_mark", "flow_style"),
    "MappingStartEvent": ("anchor", "tag", "implicit", "start_mark", "end_mark", "flow_style"),
    "SequenceEndEvent": ("start_mark", "end_mark"),
    "MappingEndEvent": ("start_mark", "end_mark"),
}

# Indexes into ``args``: a node's (scalar, collection start, alias) and an end's or a document's.
ANCHOR, TAG, IMPLICIT = 0, 1, 2
VALUE, SCALAR_START, SCALAR_END, STYLE = 3, 4, 5, 6
COLLECTION_START, COLLECTION_END, FLOW = 3, 4, 5
ALIAS_START, ALIAS_END = 1, 2
START, END = 0, 1  # stream, document and collection ends


def _field(index: int) -> property:
    return property(lambda self: self.args[index])


def _fast_class(name: str) -> type:
    original = getattr(yaml.events, name)
    namespace: dict[str, Any] = {
        "__slots__": (),
        "__module__": __name__,
        "__doc__": f"{name} built in C: its fields are ``args``, in yaml/events.py's order.",
        "__repr__": original.__repr__,
    }
    for i, field in enumerate(FIELDS[name]):
        namespace[field] = _field(i)
    return type(name, (BaseException, original), namespace)


_FAST: dict[str, Any] = {name: _fast_class(name) for name in FIELDS}
ScalarEvent = _FAST["ScalarEvent"]
AliasEvent = _FAST["AliasEvent"]
MappingStartEvent, MappingEndEvent = _FAST["MappingStartEvent"], _FAST["MappingEndEvent"]
SequenceStartEvent, SequenceEndEvent = _FAST["SequenceStartEvent"], _FAST["SequenceEndEvent"]
DocumentStartEvent, DocumentEndEvent = _FAST["DocumentStartEvent"], _FAST["DocumentEndEvent"]
StreamStartEvent, StreamEndEvent = _FAST["StreamStartEvent"], _FAST["StreamEndEvent"]
_OURS = frozenset(_FAST.values())
_BY_ORIGINAL = {getattr(yaml.events, name): cls for name, cls in _FAST.items()}


def fast(event: Any) -> Any:
    """``event`` as one of these classes (PyYAML's own is converted)."""
    if event.__class__ in _OURS:
        return event
    cls = _BY_ORIGINAL.get(event.__class__)
    if cls is None:  # pragma: no cover - an event class PyYAML does not have today
        raise TypeError(f"unknown YAML event {type(event).__name__}")
    return cls(*[getattr(event, f) for f in FIELDS[cls.__name__]])


def install() -> bool:
    """Have LibYAML's binding build these classes; True when it does (checked on a small parse)."""
    try:
        from yaml import _yaml  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - PyYAML without LibYAML
        return False
    saved = {name: getattr(_yaml, name, None) for name in FIELDS}
    if any(old is None for old in saved.values()):  # pragma: no cover - a binding laid out otherwise
        return False
    for name, cls in _FAST.items():
        setattr(_yaml, name, cls)
    seen = set()
    try:  # one stream with every kind of event
        parser = _yaml.CParser(b"- [a, *b]\n- {c: d}\n")
        try:
            while True:
                ev = parser.get_event()
                seen.add(ev.__class__)
                if ev.__class__ is StreamEndEvent:
                    break
        finally:
            parser.dispose()
    except Exception:  # pragma: no cover - whatever went wrong, the originals go back
        pass
    built = seen == _OURS
    if not built:  # pragma: no cover - a binding that does not build events by these names
        for name, old in saved.items():
            setattr(_yaml, name, old)
    return built


ACTIVE = install()


def parse(data: bytes, loader: Any) -> Iterator[Any]:
    """``yaml.parse(data, Loader=loader)``, every event one of these classes: with LibYAML's
    binding building them (:data:`ACTIVE`, and a LibYAML ``loader``), straight from its parser,
    without a loader object or a conversion per event."""
    if ACTIVE and getattr(loader, "__module__", "") == "yaml.cyaml":
        return _parse_c(data)
    return map(fast, yaml.parse(data, Loader=loader))


def _parse_c(data: bytes) -> Iterator[Any]:
    from yaml import _yaml  # type: ignore[attr-defined]

    parser = _yaml.CParser(data)
    get_event = parser.get_event
    try:
        while True:
            ev = get_event()
            yield ev
            if ev.__class__ is StreamEndEvent:
                return
    finally:
        parser.dispose()
