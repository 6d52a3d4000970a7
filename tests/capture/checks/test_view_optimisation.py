"""The view optimisation named as the cause of an Ascend IR mismatch
(fxlab.capture.checks.view_optimisation): only when the same graph, converted again with it
off, computes the compiled run's values; with the first node whose value it changes and
the view it rebuilt for that node. (TorchAir's own conversion and backend give the same:
tests/compat/test_view_optimisation_torchair.py.)"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

import fxlab.capture.record_graph as record_graph
from tests.compat.test_view_optimisation_torchair import TRANSPOSED_THEN_FLAT
from tests.sessions import trace_of

VIEW_OPTIMISE_OFF = TRANSPOSED_THEN_FLAT.replace(
    "model = f",
    "import torchair\ncompiler_config = torchair.CompilerConfig()\ncompiler_config.experimental_config.enable_view_optimize = False\nmodel = f",
)


def test_a_mismatch_the_view_optimisation_makes_names_it_the_node_and_the_fix(write_model: Any) -> None:
    path = write_model(TRANSPOSED_THEN_FLAT)
    trace = trace_of(path)
    check = trace.ir_check
    assert check is not None and not check.ok and trace.status == "partial"
    said, *differences = check.mismatches
    assert said == (
        "graph 0: the view optimisation changes what this graph computes (TorchAir's `experimental_config.enable_view_optimize`, on "
        "by default; fxlab's converters follow it, `--converter torchair` runs TorchAir's own): converted again with it off "
        "(`experimental_config.enable_view_optimize = False`), the same graph's Ascend IR matches the compiled run (2 tensors, max "
        f"|diff| 0). It first changes slice_2 ({path}:8), which reads view_2 = aten.view(t_1, [-1]), rebuilt from its base as "
        "reshape_default = aten.reshape(clamp, [16]). Fix: set `config.experimental_config.enable_view_optimize = False` in the "
        "CompilerConfig given to torchair.get_npu_backend (shown above to give the model's values)"
    )
    assert differences == ["graph 0 output 0: max |diff| 3.38"]


def test_with_the_view_optimisation_off_the_same_model_matches(write_model: Any) -> None:
    trace = trace_of(write_model(VIEW_OPTIMISE_OFF))
    assert trace.options_set == ["experimental_config.enable_view_optimize=False (compiler_config in the model file)"]
    assert trace.ir_check is not None and trace.ir_check.ok and trace.status == "ok", trace.ir_check


def test_the_optimisation_is_not_named_when_the_graph_differs_without_it_too(write_model: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    made_again = record_graph._reconvert  # the second conversion keeps the optimisation on: nothing is shown

    def still_optimised(live: Any, name: str, options: Any, *rest: Any) -> Any:
        return made_again(live, name, replace(options, enable_view_optimize=True), *rest)

    monkeypatch.setattr(record_graph, "_reconvert", still_optimised)
    check = trace_of(write_model(TRANSPOSED_THEN_FLAT)).ir_check
    assert check is not None and check.mismatches == ["graph 0 output 0: max |diff| 3.38"]
