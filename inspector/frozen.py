"""A faster `__init__` for the frozen dataclasses the replay makes by the thousand.

`@dataclass(frozen=True)` sets every field with `object.__setattr__(self, "name", value)`,
a lookup by name per field. A config edit on a long thread makes about 5,000 request
audits and 10,000 block audits, and those lookups were a third of the edit's time. The
`__init__` written here sets each slot through its own descriptor instead: the same
signature, defaults and result, still frozen afterwards, about twice as fast.
"""

from __future__ import annotations

from dataclasses import MISSING, fields, is_dataclass
from typing import TypeVar

T = TypeVar("T", bound=type)


def fast_frozen_init(cls: T) -> T:
    """Class decorator, applied above `@dataclass(frozen=True, slots=True)`."""
    params = getattr(cls, "__dataclass_params__", None)
    if not is_dataclass(cls) or params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__}: fast_frozen_init needs @dataclass(frozen=True, slots=True)")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: fast_frozen_init does not run __post_init__")
    namespace: dict[str, object] = {"_MISSING": MISSING}
    args: list[str] = []
    body: list[str] = []
    for i, f in enumerate(fields(cls)):
        if not f.init:
            raise TypeError(f"{cls.__name__}.{f.name}: fast_frozen_init needs init=True fields")
        namespace[f"_set{i}"] = cls.__dict__[f.name].__set__  # the slot's member descriptor
        if f.default is not MISSING:
            namespace[f"_default{i}"] = f.default
            args.append(f"{f.name}=_default{i}")
            body.append(f"    _set{i}(self, {f.name})")
        elif f.default_factory is not MISSING:
            namespace[f"_factory{i}"] = f.default_factory
            args.append(f"{f.name}=_MISSING")
            body.append(f"    _set{i}(self, _factory{i}() if {f.name} is _MISSING else {f.name})")
        else:
            args.append(f.name)
            body.append(f"    _set{i}(self, {f.name})")
    source = f"def __init__(self, {', '.join(args)}):\n" + "\n".join(body or ["    pass"]) + "\n"
    exec(source, namespace)  # noqa: S102 - generated from the class's own field names, like dataclasses does
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"  # type: ignore[attr-defined]
    init.__doc__ = cls.__init__.__doc__  # type: ignore[attr-defined]
    cls.__init__ = init  # type: ignore[misc]
    return cls
