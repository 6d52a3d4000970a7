"""The TorchAir-compatible layer: stand-ins only inside the block, announced; the seeds'
plugin files run unchanged and their converters build the right GE ops; bad plugins fail
with file and line."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

from tests.functional_graphs import functional_graph
from fxlab.compat.layer import ANNOUNCEMENTS, compat_layer
from fxlab.compat.plugins import load_plugin
from fxlab.errors import ModelLoadError
from fxlab.ir.execute import execute
from fxlab.passes.conversion_result import UNSUPPORTED_OP_TYPE, Status
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.converters.registry import CONVERTERS, ORIGIN_FXLAB, ORIGIN_TORCHAIR

DATA = Path(__file__).parents[1] / "data"
SEEDS = DATA / "seed_plugins"


def test_standins_exist_only_inside_the_block_and_are_announced() -> None:
    heard: list[str] = []
    with compat_layer(announce=heard.append) as session:
        assert session.standing_in == ("torchair", "torch_npu", "npugraph_ex")
        assert heard == []  # nothing announced before a user file imports them
        import torch_npu
        import torchair

        assert torchair.ge.attr.Int(3).value == 3
        assert torch_npu.my_inplace is torch.ops.npu.my_inplace
    # Importing the stand-in torch_npu defines torch_npu's operators (from the copy fxlab
    # ships, or a preferred one) and says which copy and how many.
    operators = [n for n in heard if n.startswith("torch_npu operators from ")]
    assert heard == [ANNOUNCEMENTS["torch_npu"], *operators, ANNOUNCEMENTS["torchair"]] and len(operators) == 1
    assert "torchair" not in sys.modules and "torch_npu" not in sys.modules
    with pytest.raises(ImportError):
        import torchair  # noqa: F401


def _model(x, y, a):
    s = torch.ops.npu.npu_add_custom(x, y)
    return torch.ops.npu.my_op(s, None, [a, y], 2.0, 3)


def test_seed_plugins_run_unchanged_and_replace_fxlab_converters() -> None:
    targets = [torch.ops.npu.my_op.default, torch.ops.npu.my_inplace.default, torch.ops.npu.npu_add_custom.default]
    with compat_layer():
        for name in ("my_op_plugin.py", "my_inplace_plugin.py", "npu_add_custom_plugin.py"):
            load_plugin(SEEDS / name)
        for target, name in zip(targets, ("my_op_plugin.py:12", "my_inplace_plugin.py:13", "npu_add_custom_plugin.py:17")):
            converter = CONVERTERS.get(target)
            assert converter.origin == ORIGIN_TORCHAIR and converter.where.endswith(name)
            assert converter.replaced.origin == ORIGIN_FXLAB
        inputs = [torch.randn(4, 8) for _ in range(3)]
        result = convert_to_ascend_ir(functional_graph(_model, *inputs), "plugins")
        (got,) = execute(result.graph, inputs)
    # The plugins' converters, called with the node's arguments, build the same wiring.
    assert result.graph.types == ["Data", "Data", "Data", "AddCustom", "MyOp", "NetOutput"]
    my_op = result.graph.ops_of_type("MyOp")[0]
    assert my_op.inputs == ["AddCustom:0", "", "arg2_1:0", "arg1_1:0"]
    assert [d.name for d in my_op.input_desc] == ["x", "y", "z0", "z1"]
    rule = my_op.attrs["_inference_rule"].value  # TorchAir's rule for a custom op, as for fxlab's converters
    assert json.loads(rule) == {"shape": {"inputs": [None] * 4, "outputs": [["4", "8"]]}, "dtype": [0]}
    assert {k: (a.kind.value, a.value) for k, a in my_op.attrs.items() if k != "_inference_rule"} == {"attr1": ("f", 2.0), "attr2": ("i", 3)}
    assert [d.name for d in result.graph.ops_of_type("AddCustom")[0].output_desc] == ["z"]
    torch.testing.assert_close(got, _model(*inputs))
    for target in targets:  # the block undid the plugin registrations
        assert CONVERTERS.get(target).origin == ORIGIN_FXLAB


def test_my_inplace_plugin_converter_returns_z_of_a_ref_op() -> None:
    from fxlab.ir import ge
    from fxlab.ir.builder import GraphBuilder, building

    with compat_layer():
        load_plugin(SEEDS / "my_inplace_plugin.py")
        builder = GraphBuilder("g")
        with building(builder):
            x, y = ge.op1("Data", (), {"index": 0}), ge.op1("Data", (), {"index": 1})
            z = CONVERTERS.get(torch.ops.npu.my_inplace.default).fn(x, y, meta_outputs=None)
    op = builder.graph.ops_of_type("MyInplace")[0]
    assert op.inputs == ["Data:0", "Data_1:0"]
    assert [d.name for d in op.output_desc] == ["x", "z"] and z.index == 1


def test_plugin_meta_replaces_fxlab_meta_while_loaded() -> None:
    from fxlab.ops.inspect_op import op_facts

    with compat_layer():
        plugin = load_plugin(SEEDS / "my_op_plugin.py")
        assert op_facts(torch.ops.npu.my_op.default).fake.endswith("my_op_plugin.py:5")
        assert plugin.defined_ops == []  # it adds a Meta function to an op that exists


def test_raising_plugin_names_file_and_line() -> None:
    with compat_layer(), pytest.raises(ModelLoadError) as info:
        load_plugin(DATA / "plugins" / "raising_plugin.py")
    assert "raising_plugin.py, line 4" in str(info.value) and "plugin setup failed on purpose" in str(info.value)


def test_two_user_converters_for_one_op_name_both_places() -> None:
    with compat_layer(), pytest.raises(ModelLoadError) as info:
        load_plugin(DATA / "plugins" / "twice_plugin.py")
    message = str(info.value)
    assert "twice_plugin.py:5" in message and "twice_plugin.py:10" in message
    assert CONVERTERS.get(torch.ops.npu.my_op.default).origin == ORIGIN_FXLAB


def test_raising_converter_is_reported_with_its_message_and_node() -> None:
    with compat_layer():
        load_plugin(DATA / "plugins" / "raising_converter_plugin.py")
        gm = functional_graph(lambda x, y: torch.ops.npu.npu_add_custom(x, y), torch.randn(2), torch.randn(2))
        result = convert_to_ascend_ir(gm, "raising")
    record = next(n for n in result.nodes if n.target == "npu.npu_add_custom.default")
    assert record.status is Status.RAISED
    assert "ValueError: unsupported layout in broken converter" in record.message and "npu_add_custom" in record.message
    assert result.graph.ops_of_type(UNSUPPORTED_OP_TYPE)


def test_torchair_scope_config_and_backend_work_in_a_model_file() -> None:
    with compat_layer():
        module = load_plugin(DATA / "plugins" / "scope_plugin.py").module
        config = module.config
        assert config.ge_config.aicore_num == "24|48" and config.mode == "max-autotune"
        assert config.as_dict() == {"mode": "max-autotune", "debug.graph_dump.type": "pbtxt", "ge_config.aicore_num": "24|48"}
        x, y = torch.randn(3), torch.randn(3)
        compiled = torch.compile(module.model, backend=module.backend)
        torch.testing.assert_close(compiled(x, y), x + y)
        result = convert_to_ascend_ir(functional_graph(module.model, x, y), "scoped")
    add = result.graph.ops_of_type("AddCustom")[0]
    assert add.attr_value("_super_kernel_scope") == "sk1" and add.attr_value("_super_kernel_options") == "stream-fusion=1"
