"""Strict JSON for values JSON has no word for: every file fxlab writes parses with any
JSON reader (``Infinity`` and ``NaN`` are not JSON, a complex number has no JSON form).

- a non-finite float is written as the string ``"Infinity"``, ``"-Infinity"`` or ``"NaN"``
  (the spellings Python's and JavaScript's float parsers accept);
- a complex number is written as the pair ``[real, imag]``.

Where the reader knows a value is a float (an attr of kind ``float``, a float tensor),
:func:`float_from_json` turns the strings back into floats.
"""

from __future__ import annotations

import json
import math
from typing import Any

NON_FINITE = {"Infinity": math.inf, "-Infinity": -math.inf, "NaN": math.nan}

_strict_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def finite_json(value: Any) -> Any:
    """``value`` with non-finite floats as strings and complex numbers as pairs."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, complex):
        return [finite_json(value.real), finite_json(value.imag)]
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    return value


def dumps_strict(value: Any, **options: Any) -> str:
    """``json.dumps`` that never writes ``NaN``/``Infinity``: the plain (fast) encoding
    first, :func:`finite_json` only for values that need it."""
    try:
        return json.dumps(value, allow_nan=False, **options)
    except (ValueError, TypeError):
        return json.dumps(finite_json(value), allow_nan=False, **options)


def encode_strict(value: Any) -> str:
    """One-line strict JSON (``ensure_ascii=False``) with a shared encoder: for many small values."""
    try:
        return _strict_encode(value)
    except (ValueError, TypeError):
        return _strict_encode(finite_json(value))


def float_from_json(value: Any) -> Any:
    """A float written by :func:`finite_json` read back (lists element by element)."""
    if isinstance(value, str):
        return NON_FINITE.get(value, value)
    if isinstance(value, list):
        return [float_from_json(v) for v in value]
    return value
