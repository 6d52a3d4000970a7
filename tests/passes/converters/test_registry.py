"""The converter registry's bookkeeping."""
from __future__ import annotations

import inspect

import fxlab.passes.converters  # noqa: F401 - registers fxlab's converters
from fxlab.passes.converters.registry import CONVERTERS


def test_every_converter_says_where_it_is_defined_as_inspect_does():
    converters = list(CONVERTERS)
    assert len(converters) > 100
    for converter in converters:
        fn = converter.fn
        assert converter.where == f"{inspect.getsourcefile(fn)}:{inspect.getsourcelines(fn)[1]}"
