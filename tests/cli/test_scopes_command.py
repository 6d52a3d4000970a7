"""``fxlab scopes``: the report of the example model, and every bad command-line input."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fxlab.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "superkernel_scopes.py"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    captured = capsys.readouterr()
    return info.value.code, captured.out, captured.err


def test_example_report_as_json(capsys) -> None:
    code, out, _ = run(capsys, "scopes", str(EXAMPLE), "--soc", "Ascend910B1", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["global_limit"] == {"aicore": 20, "vectorcore": 40, "origin": "compiler_config.ge_config.aicore_num in the model file"}
    mlp, norm = report["super_kernels"]
    assert (mlp["name"], mlp["options"]["values"]) == ("mlp", {"stream-fusion": "1", "feed-sync-all": "1"})
    kinds = [item["kind"] for item in mlp["timeline"]]
    assert kinds[0] == "segment" and kinds[-1] == "segment" and "break" in kinds
    assert {item["op"]["fx_node"] for item in mlp["timeline"] if item["kind"] == "break"} == {"mul"}
    assert norm["name"] == "norm" and [item["kind"] for item in norm["timeline"]] == ["segment"]
    (swish,) = report["core_limits"]
    assert (swish["op"]["type"], swish["aicore"], swish["vectorcore"], swish["winner"]) == ("Swish", "8", "16", "op-level")
    assert [f["code"] for f in report["findings"]] == ["scope-split"]


def test_aicore_num_option_overrides_the_model_and_is_checked(capsys) -> None:
    code, out, _ = run(capsys, "scopes", str(EXAMPLE), "--soc", "Ascend910B4", "--aicore-num", "24|48", "--json")
    report = json.loads(out)
    assert code == 1  # 24|48 is above Ascend910B4's 20|40
    assert report["global_limit"]["origin"] == "--aicore-num"
    assert [f["message"] for f in report["findings"] if f["code"] == "bad-core-limit"] == [
        "global aicore_num (--aicore-num): AI Core count 24 is above the maximum of Ascend910B4 (20)",
        "global aicore_num (--aicore-num): Vector Core count 48 is above the maximum of Ascend910B4 (40)",
    ]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--soc", "Ascend999"], "Unknown SoC 'Ascend999'. fxlab knows Ascend910B1"),
        (["--aicore-num", "24"], "is not an aicore_num value"),
        (["--aicore-num", "a|b"], "is not an aicore_num value"),
        (["--soc", "Ascend910B1", "--soc-ini", "x.ini"], "not both"),
    ],
)
def test_bad_command_line_input_exits_2_before_capturing(capsys, argv: list[str], message: str) -> None:
    code, _, err = run(capsys, "scopes", str(EXAMPLE), *argv)
    assert code == 2 and message in " ".join(err.split())


def test_platform_ini_without_core_counts_exits_2(capsys, tmp_path) -> None:
    ini = tmp_path / "Partial.ini"
    ini.write_text("[SoCInfo]\nai_core_cnt=24\n")
    code, _, err = run(capsys, "scopes", str(EXAMPLE), "--soc-ini", str(ini))
    assert code == 2 and "vector_core_cnt" in err


def test_bad_core_limit_in_the_model_is_reported_with_exit_1(capsys, tmp_path) -> None:
    model = tmp_path / "bad_limit.py"
    model.write_text(
        "import torch\nimport torchair\n\n"
        "def model(x):\n"
        "    with torchair.scope.limit_core_num(0, 64):\n"
        "        return x + x\n\n"
        "example_inputs = (torch.randn(3),)\n"
    )
    code, out, _ = run(capsys, "scopes", str(model), "--soc", "Ascend910B1")
    text = " ".join(out.split())
    assert code == 1
    assert "AI Core count 0 is not allowed" in text and "Vector Core count 64 is above the maximum of Ascend910B1 (48)" in text


def test_on_the_aclgraph_path_the_report_shows_streams_events_and_stream_limits() -> None:
    import json

    from tests.cli.cli_runner import run_cli
    from tests.conftest import EXAMPLES

    code, out, err = run_cli("scopes", str(EXAMPLES / "multi_stream.py"), "--mode", "reduce-overhead")
    assert code == 0, err
    assert "a limit_core_num scope is a stream core limit" in out
    assert "graph 0: streams: default (4 op(s), core limit 16|32 / no limit), side (2 op(s), core limit 16|32)" in out
    assert "[stream-cores] mm on the default stream (limit 16|32) and mm_1 on the side stream (limit 16|32) may run at once" in out
    code, out, _ = run_cli("scopes", str(EXAMPLES / "multi_stream.py"), "--mode", "reduce-overhead", "--soc", "Ascend910B4", "--json")
    (graph,) = json.loads(out)["graphs"]
    assert "more cores than Ascend910B4 has (16 + 16 AI cores > 20; 32 + 32 vector cores > 40)" in graph["warnings"][0]


def test_on_the_aclgraph_path_a_core_limit_its_passes_cannot_read_is_an_error(tmp_path) -> None:
    from tests.cli.cli_runner import run_cli

    model = tmp_path / "half_core.py"
    model.write_text(
        "import torch\nimport torchair\n\n"
        "def model(x):\n"
        "    with torchair.scope.limit_core_num(1.5, '8'):\n"
        "        h = x * 2\n"
        "    return h + 1\n\n"
        "example_inputs = (torch.randn(3),)\n"
    )
    code, out, err = run_cli("scopes", str(model), "--mode", "reduce-overhead", width=200)
    assert code == 1 and "graph 0: not known, TorchAir's aclgraph passes stopped on it" in out and "no core limit" not in out
    assert "error: graph 0: aclgraph stage: the pass replace_core_limit_nodes failed: ValueError: invalid literal for int() with base 10: '1.5'" in err


def test_on_the_aclgraph_path_a_graph_break_inside_a_scope_is_said_at_the_with_line(tmp_path) -> None:
    from tests.cli.cli_runner import run_cli

    model = tmp_path / "break_in_stream.py"
    model.write_text(
        "import torch\nimport torchair\n\n"
        "def model(x):\n"
        "    y = x * 2\n"
        "    with torchair.scope.npu_stream_switch('s1', 3):\n"
        "        z = y.sin()\n"
        "        torch._dynamo.graph_break()\n"
        "        z = z + 1\n"
        "    return z.cos()\n\n"
        "example_inputs = (torch.randn(3),)\n"
    )
    code, out, err = run_cli("scopes", str(model), "--mode", "reduce-overhead", width=400)
    said = " ".join(err.split())  # as one paragraph, however the error console wraps it
    assert code == 1
    assert f"error: [graph-break-in-scope] Dynamo did not trace the `with` block(s) at {model}:6" in said
    assert "(graph(s) 0, 1), which TorchAir refuses. Move the graph break" in said
    code, out, _ = run_cli("scopes", str(model), "--mode", "reduce-overhead", "--json")
    assert code == 1 and any(e.startswith("[graph-break-in-scope]") for e in json.loads(out)["errors"])
