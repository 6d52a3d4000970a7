"""fxlab.capture.request: one frozen request, checked before anything is loaded."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

from fxlab.capture.request import TraceRequest, validate_stages
from fxlab.errors import UsageError
from fxlab.stage_names import ALL_STAGES


@pytest.mark.parametrize(
    "fields, said",
    [
        ({"converter": "ge"}, "--converter 'ge': choose builtin or torchair."),
        ({"nproc": 0}, "--nproc 0: give at least 1 rank."),
        ({"mode": "eager"}, "--mode 'eager': choose max-autotune, reduce-overhead, npugraph_ex"),
        ({"stages": ("aten", "optimized")}, "unknown stage 'optimized': the stages are dynamo, aten, functional"),
        (
            {"stages": ("pre_ge", "ascend_ir"), "mode": "reduce-overhead"},
            "stage 'pre_ge', 'ascend_ir' is not part of reduce-overhead mode: its stages are dynamo, aten, functional, aclgraph. --mode max-autotune has pre_ge, ascend_ir.",
        ),
        (
            {"stages": ("aclgraph",), "mode": "max-autotune"},
            "stage 'aclgraph' is not part of max-autotune mode: its stages are dynamo, aten, functional, pre_ge, ascend_ir. --mode reduce-overhead has aclgraph.",
        ),
    ],
)
def test_a_bad_option_is_refused_when_the_request_is_made(fields, said):
    with pytest.raises(UsageError, match=said.replace("(", r"\(").replace(")", r"\)")):
        TraceRequest(Path("m.py"), **fields)


def test_a_request_is_frozen_and_holds_plain_tuples():
    # lists, as a caller of the public API may pass them
    request = TraceRequest("m.py", plugins=["a.py", Path("b.py")], stages=["dynamo", "functional"])  # type: ignore[arg-type]
    assert request.plugins == (Path("a.py"), Path("b.py")) and request.stages == ("dynamo", "functional")
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.mode = "reduce-overhead"  # type: ignore[misc]
    again = dataclasses.replace(request, mode="reduce-overhead", stages=("functional", "aclgraph"))
    assert (again.mode, again.stages, request.mode) == ("reduce-overhead", ("functional", "aclgraph"), None)
    with pytest.raises(UsageError, match="stage 'pre_ge' is not part of reduce-overhead mode"):
        dataclasses.replace(request, stages=("functional", "pre_ge"), mode="reduce-overhead")  # a changed request is checked again
    assert dataclasses.replace(request, stages=ALL_STAGES, mode="npugraph_ex").stages == ALL_STAGES


def test_the_model_is_named_by_its_file_or_its_name():
    assert TraceRequest("models/m.py").model_file == Path("models/m.py") and TraceRequest("models/m.py").model_name == "models/m.py"

    def decode(x):
        return x

    assert TraceRequest(decode, (torch.ones(1),)).model_file is None and TraceRequest(decode).model_name == "decode"
    linear = torch.nn.Linear(2, 2)
    assert TraceRequest(linear).model_name == "Linear"


def test_validate_stages_gives_the_modes_stages_in_pipeline_order():
    assert validate_stages(["ascend_ir", "dynamo"]) == ("dynamo", "ascend_ir")
    assert validate_stages(ALL_STAGES, "max-autotune") == ("dynamo", "aten", "functional", "pre_ge", "ascend_ir")
    assert validate_stages(ALL_STAGES, "reduce-overhead") == ("dynamo", "aten", "functional", "aclgraph")
    assert validate_stages(["aclgraph", "dynamo"], "npugraph_ex") == ("dynamo", "aclgraph")
