"""``torchair.register_fx_node_ge_converter`` for the stand-in: a TorchAir-style converter
registers into fxlab's one converter registry with origin ``torchair``.

As in TorchAir, the converter is called with the node's arguments, plus ``meta_outputs``
only when its signature takes it. A registration for an op fxlab ships a converter for
replaces fxlab's (the seeds' plugin files do exactly that); a second user registration
for one op is an error naming both places. Registrations made while a compat session is
active are undone when it ends, so a run leaves the registry as it found it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from fxlab.passes.converters.registry import CONVERTERS, ORIGIN_TORCHAIR, Converter

# Stack of open sessions; each records the targets it registered, to undo them.
_SESSIONS: list[list[Any]] = []


def register_fx_node_ge_converter(aten_op: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: register the decorated function as the Ascend IR converter of ``aten_op``."""
    if aten_op is None:  # TorchAir accepts None (an op this torch lacks) and registers nothing
        return lambda fn: fn

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        converter = Converter(
            target=aten_op,
            fn=_adapt(fn),
            origin=ORIGIN_TORCHAIR,
            samples=_samples_for(aten_op),
            where=_where(fn),
        )
        CONVERTERS.register(converter)
        if _SESSIONS:
            _SESSIONS[-1].append(aten_op)
        return fn

    return decorate


def _adapt(fn: Callable[..., Any]) -> Callable[..., Any]:
    """fxlab's pass always passes ``meta_outputs``; TorchAir passes it only if asked for."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    takes_meta = "meta_outputs" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    if takes_meta:
        return fn

    @functools.wraps(fn)
    def without_meta(*args: Any, meta_outputs: Any = None, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return without_meta


def _samples_for(aten_op: Any) -> Any:
    """The samples of the op the converter is for, when fxlab knows some."""
    shipped = CONVERTERS.get(aten_op)
    if shipped is not None and shipped.samples is not None:
        return shipped.samples
    # registers: importing fxlab.ops defines the npu seed ops, which only an open compat layer does
    from fxlab.ops.define import CUSTOM_OPS

    record = CUSTOM_OPS.get(aten_op)
    return record.samples if record is not None else None


def _where(fn: Callable[..., Any]) -> str:
    try:
        return f"{inspect.getsourcefile(fn)}:{inspect.getsourcelines(fn)[1]}"
    except (OSError, TypeError):
        return getattr(fn, "__qualname__", repr(fn))


def open_session() -> list[Any]:
    session: list[Any] = []
    _SESSIONS.append(session)
    return session


def close_session(session: list[Any]) -> None:
    """Undo the session's registrations (restoring the fxlab converters they replaced)."""
    if session in _SESSIONS:
        _SESSIONS.remove(session)
    for target in reversed(session):
        converter = CONVERTERS.get(target)
        if converter is not None and converter.origin == ORIGIN_TORCHAIR:
            CONVERTERS.unregister(target)
    session.clear()
