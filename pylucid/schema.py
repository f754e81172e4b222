"""OpSchema, AmpPolicy and the op registry.

Each op registers its schema once, at import (``schema_v1`` on its node class in
``pylucid.graph.nodes``). Ops bind their schema ahead of time, so the registry serves
introspection and tests only: nothing looks a schema up by name on a hot path.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["AmpPolicy", "OpSchema", "register", "schema", "registry"]


class AmpPolicy(enum.Enum):
    """What an op does with its input's float dtype inside :func:`pylucid.autocast`."""

    Promote = "promote"        # float32 inputs compute in the autocast dtype
    KeepInput = "keep_input"   # never cast
    ForceFP32 = "force_fp32"   # float16 / bfloat16 inputs compute in float32


@dataclass(frozen=True, slots=True)
class OpSchema:
    """The immutable description of one op version."""

    name: str
    version: int
    amp_policy: AmpPolicy
    deterministic: bool = True


_REGISTRY: dict[str, OpSchema] = {}
_VIEW = MappingProxyType(_REGISTRY)


def register(s: OpSchema) -> OpSchema:
    """Add ``s`` to the registry (at import time); a name registers once."""
    if s.name in _REGISTRY and _REGISTRY[s.name] != s:
        raise ValueError(f"op {s.name!r} is already registered as {_REGISTRY[s.name]}")
    _REGISTRY[s.name] = s
    return s


def schema(name: str) -> OpSchema:
    """The schema registered under ``name``; an unknown name raises ``KeyError``."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"no op named {name!r}; registered: {sorted(_REGISTRY)}") from None


def registry() -> MappingProxyType:
    """A read-only name -> :class:`OpSchema` view of every registered op."""
    return _VIEW
