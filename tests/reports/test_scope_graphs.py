"""Scopes graph by graph, as TorchAir checks them: a graph break inside a scope."""

from __future__ import annotations

import pytest
import torch

from fxlab.passes.torchair_refusals import UNCLOSED_SCOPE_ERROR
from fxlab.reports.scope_report import report_for_trace
from fxlab.reports.superkernel_options import KNOWN_OPTIONS
from fxlab.socs import soc_by_name

A2 = soc_by_name("Ascend910B1")


def findings_of(report, code: str) -> list:
    """The report's findings of one code."""
    return [f for f in report.findings if f.code == code]


# A SuperKernel scope with a bad option key, around a limit_core_num block asking for more
# AI Cores than the SoC has, which closes before the .item() that breaks the graph.
BROKEN = """
import torch
import torchair


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x):
        with torchair.scope.super_kernel("gate", "stream-fusion=1:no-such-key=3"):
            with torchair.scope.limit_core_num(30, 8):
                h = torch.tanh(self.proj(x))
            h = h * h.max().item()
        return h + 1


model = Gate().eval()
example_inputs = (torch.randn(2, 8),)
"""
WHOLE = BROKEN.replace("h.max().item()", "2.0")  # the same file without the graph break


def _report(write_model, source: str, name: str):
    from tests.sessions import capture_of

    return report_for_trace(capture_of(write_model(source, name)), A2)


def _problems(report, code: str) -> list[str]:
    """The findings of ``code``, by what is wrong (after the last ': ')."""
    return sorted({f.message.rsplit(": ", 1)[1] for f in findings_of(report, code)})


def test_a_break_inside_scopes_keeps_every_option_and_core_limit_error(write_model) -> None:
    whole = _report(write_model, WHOLE, "whole.py")
    broken = _report(write_model, BROKEN, "broken.py")
    assert (
        _problems(whole, "bad-option")
        == _problems(broken, "bad-option")
        == ["unknown option 'no-such-key'; the known ones are " + ", ".join(KNOWN_OPTIONS)]
    )
    assert (
        _problems(whole, "bad-core-limit")
        == _problems(broken, "bad-core-limit")
        == ["AI Core count 30 is above the maximum of Ascend910B1 (24)"]
    )
    assert not findings_of(whole, "unbalanced-scope") and not findings_of(whole, "graph-break-in-scope")


def test_a_break_inside_scopes_is_reported_per_graph_at_the_models_lines(write_model) -> None:
    report = _report(write_model, BROKEN, "broken.py")
    path = str(write_model(BROKEN, "broken.py"))
    sk_line, limit_line = f"{path}:12", f"{path}:13"
    assert [(e.graph, e.scope, e.opened_at, e.closed) for e in report.empty_scopes] == [
        (0, "super_kernel('gate')", sk_line, False),
        (1, "limit_core_num(30, 8)", limit_line, False),
    ]
    unpaired = findings_of(report, "unbalanced-scope")
    assert [(f.graph, f.where) for f in unpaired] == [(0, sk_line), (1, limit_line), (2, limit_line)]
    assert all(UNCLOSED_SCOPE_ERROR in f.message for f in unpaired[:2])
    (broken,) = findings_of(report, "graph-break-in-scope")
    assert f"`with` block(s) at {sk_line}, {limit_line}" in broken.message and "(graph(s) 0, 1, 2)" in broken.message
    assert "eagerly from that `with` on (what comes before it compiles as usual)" in broken.message
    text = " ".join(f.message for f in report.findings)
    assert "fxlab/scope.py" not in text and "still open" not in text  # the limit block closed before the break


@pytest.mark.torchair
def test_torchairs_own_backend_refuses_a_scope_across_a_graph_break(torchair_path) -> None:
    """The report's claim, proven on TorchAir's code as a user enters it: torch.compile with
    TorchAir's backend fails on the first graph, whose scope_enter has no scope_exit."""
    from torch._dynamo.exc import BackendCompilerFailed

    from fxlab.compat.bridge import open_torchair

    with open_torchair(torchair_path) as loaded:
        import torchair

        class Gate(torch.nn.Module):
            def forward(self, x):
                with torchair.scope.super_kernel("gate", "stream-fusion=1"):
                    h = torch.tanh(x)
                    h = h * h.max().item()
                return h + 1

        backend = loaded.package.get_npu_backend(compiler_config=loaded.package.CompilerConfig())
        torch._dynamo.reset()
        with pytest.raises(BackendCompilerFailed, match=UNCLOSED_SCOPE_ERROR.replace(".", r"\.")):
            with torch.no_grad():
                torch.compile(Gate(), backend=backend)(torch.randn(2, 8))
    torch._dynamo.reset()
