"""The stage names: one list, in pipeline order, that the pipeline and the views use."""
from __future__ import annotations

import pytest

from fxlab import stage_names
from fxlab.capture import ALL_STAGES, validate_stages
from fxlab.errors import UsageError
from fxlab.viz.trace_views import STAGE_TITLES


def test_the_stages_in_pipeline_order() -> None:
    assert stage_names.FX_STAGES == ("dynamo", "aten", "functional", "reinplaced", "pre_ge")
    assert stage_names.ALL_STAGES == (*stage_names.FX_STAGES, "ascend_ir")
    assert ALL_STAGES is stage_names.ALL_STAGES


def test_the_pipeline_takes_stages_in_any_order_and_knows_no_other() -> None:
    assert validate_stages([stage_names.ASCEND_IR, stage_names.DYNAMO]) == ("dynamo", "ascend_ir")
    with pytest.raises(UsageError, match="unknown stage 'optimized': the stages are dynamo, aten, functional"):
        validate_stages(["optimized"])


def test_every_fx_stage_has_a_title() -> None:
    assert set(STAGE_TITLES) == set(stage_names.FX_STAGES)
