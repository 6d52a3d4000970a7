"""TorchAir's own conversion on CPU: loading its sources with stand-ins, running its
converters on small functional graphs, and what it leaves behind (nothing)."""
from __future__ import annotations

from tests.conftest import torchair_session

import signal
import sys

import pytest
import torch
import torch.nn.functional as F
from torch._C import DispatchKey

from fxlab.capture.stages import functional_stage
from tests.functional_graphs import functional_graph
from fxlab.compat.bridge import open_torchair, run_torchair_conversion
from fxlab.compat.native_standins.prototypes import IrPrototype, register_prototype, unregister_prototype
from fxlab.compat.torchair_loader import _GuardRegistrations
from fxlab.compat.torchair_copies import TorchAirNotFoundError, find_torchair
from fxlab.compat.torchair_versions import TorchAirVersion
from fxlab.ir.lint import lint_ir
from fxlab.passes.conversion_result import FAILED_STATUSES, UNSUPPORTED_OP_TYPE, ConversionResult, Status
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.diff.ir_diff import diff_ir
from fxlab.ir.execute import execute

# TorchAir itself warns when its lazily imported NPU custom-op converters need torch_npu ops.
pytestmark = pytest.mark.filterwarnings("ignore:Failed to import torchair")


@pytest.fixture(scope="class")
def torchair(torchair_path):
    yield from torchair_session(torchair_path)


def convert(torchair, fn, *inputs):
    return run_torchair_conversion(functional_graph(fn, *inputs), "graph", torchair)


def ops_of(result, node: str) -> list[str]:
    return [op.type for op in result.graph.ops if op.fx_node == node]


@pytest.fixture
def custom_inplace_op():
    lib = torch.library.Library("fxlab_bridge_test", "DEF")
    lib.define("my_inplace(Tensor(a!) x, Tensor y) -> Tensor")
    lib.impl("my_inplace", lambda x, y: x.add_(y).mul(2), "CompositeExplicitAutograd")
    torch.library.register_fake("fxlab_bridge_test::my_inplace", lambda x, y: torch.empty_like(x), lib=lib)
    register_prototype(
        {
            "op": "MyInplace",
            "input_desc": [{"name": "x", "param_type": "required"}, {"name": "y", "param_type": "required"}],
            "output_desc": [{"name": "x", "param_type": "required"}, {"name": "z", "param_type": "required"}],
        }
    )
    yield torch.ops.fxlab_bridge_test.my_inplace
    unregister_prototype("MyInplace")
    lib._destroy()


# -- TorchAir's conversion, pattern by pattern (one TorchAir session for the class) -----------
class TestTorchAirConversion:
    def test_elementwise_ops_and_scalar_const(self, torchair):
        result = convert(torchair, lambda x, y: (torch.relu(x * y) + 1.5,), torch.randn(3, 4), torch.randn(3, 4))
        # TorchAir's mul casts its result to the output dtype: a fresh GE op's dtype is unknown.
        assert ops_of(result, "mul") == ["Mul", "Cast"]
        assert next(op for op in result.graph.ops if op.type == "Cast").attr_value("dst_type") == 0  # TorchAir's DT_FLOAT
        assert ops_of(result, "relu") == ["Relu"]
        assert ops_of(result, "add") == ["Const", "Add"]
        const = next(op for op in result.graph.ops if op.fx_node == "add" and op.type == "Const")
        assert const.attr_value("_readable_value") == "1.5"
        assert result.graph.types[:2] == ["Data", "Data"] and result.graph.types[-1] == "NetOutput"
        assert all(n.status is Status.CONVERTED for n in result.nodes)


    def test_linear_is_transpose_plus_matmul_with_the_view_materialised_at_its_user(self, torchair):
        result = convert(torchair, lambda x, w, b: (F.linear(x, w, b),), torch.randn(2, 8), torch.randn(4, 8), torch.randn(4))
        # TorchAir's view optimisation skips the `t` view and builds it inside addmm's conversion.
        assert ops_of(result, "t") == []
        assert ops_of(result, "addmm") == ["Const", "Transpose", "Const", "Const", "MatMulV2", "Mul", "Add"]
        matmul = result.graph.ops_of_type("MatMulV2")[0]
        assert matmul.attr_value("transpose_x1") is False and matmul.attr_value("transpose_x2") is False


    def test_softmax_layer_norm_and_slice(self, torchair):
        def model(x, g, b):
            return (F.layer_norm(x, (4,), g, b).softmax(-1)[:, 1:3],)

        result = convert(torchair, model, torch.randn(2, 4), torch.randn(4), torch.randn(4))
        assert ops_of(result, "native_layer_norm") == ["Const", "LayerNormV4"]
        assert result.graph.ops_of_type("LayerNormV4")[0].attr_value("epsilon") == pytest.approx(1e-5)
        assert ops_of(result, "_softmax") == ["SoftmaxV2"]
        assert result.graph.ops_of_type("SoftmaxV2")[0].attr_value("axes") == (-1,)
        assert ops_of(result, "slice_1") == ["Const"] * 4 + ["StridedSliceV2"]


    def test_inplace_on_input_becomes_a_reused_graph_output(self, torchair):
        def model(x, y):
            y.mul_(2)
            return (x + 1,)

        result = convert(torchair, model, torch.randn(3), torch.randn(3))
        # copy_ -> Assign, which TorchAir's pass turns into an extra output reusing input 1.
        assert not result.graph.ops_of_type("Assign")
        mul_result = [op for op in result.graph.ops if op.fx_node == "mul"][-1]
        assert ops_of(result, "mul") == ["Const", "Mul", "Cast"]
        assert result.graph.outputs[-1] == f"{mul_result.name}:0"
        assert result.ge_options["ge.exec.outputReuseInputMemIndexes"] == f"1,{len(result.graph.outputs) - 1}"
        copy_record = next(n for n in result.nodes if n.node == "copy_")
        assert copy_record.ge_ops == ["Assign"]
        # The same result type as the built-in conversion; TorchAir ran its own GE passes.
        assert isinstance(result, ConversionResult) and result.ge_passes == [] and result.assigns_to_outputs == []
        assert "copy_" in [n.name for n in result.fx_graph.graph.nodes]  # the graph its walk converted
        lint_ir(result.graph)


    def test_custom_inplace_op_through_auto_functionalized_v2(self, torchair, custom_inplace_op):
        def model(state, y):
            z = custom_inplace_op(state, y)
            return (z + state,)

        result = convert(torchair, model, torch.randn(4), torch.randn(4))
        assert ops_of(result, "auto_functionalized_v2") == ["TensorMove", "MyInplace"]
        move, op = result.graph.ops_of_type("TensorMove")[0], result.graph.ops_of_type("MyInplace")[0]
        assert move.inputs == [f"{result.graph.inputs[0]}:0"]
        assert op.inputs == [f"{move.name}:0", f"{result.graph.inputs[1]}:0"]
        add = next(o for o in result.graph.ops if o.fx_node == "add")
        assert add.inputs == [f"{op.name}:1", f"{op.name}:0"]  # z, then the ref output x
        assert result.ge_options["ge.exec.outputReuseInputMemIndexes"].startswith("0,")


    def test_raising_converter_becomes_a_placeholder_with_message_node_and_source_line(self, torchair):
        def model(x):
            return torch.cumprod(x, 0) + 1

        graphs = []

        def backend(gm, example_inputs):
            functional, compiled = functional_stage(gm, example_inputs)
            graphs.append(functional)
            return compiled

        torch._dynamo.reset()
        torch.compile(model, backend=backend)(torch.randn(4))
        result = run_torchair_conversion(graphs[0], "graph", torchair)
        record = next(n for n in result.nodes if n.node == "cumprod")
        line = model.__code__.co_firstlineno + 1
        assert record.status is Status.RAISED
        assert record.source == f"{__file__}:{line}"
        assert "NotImplementedError: torch.ops.aten.cumprod.default ge_converter is not implemented" in record.message
        assert f"at node cumprod ({__file__}:{line})" in record.message
        assert "ge_converter/aten/cumprod.py:" in record.message
        (placeholder,) = [op for op in result.graph.ops if op.name in record.ge_ops]
        assert placeholder.type == UNSUPPORTED_OP_TYPE
        assert placeholder.attr_value("_fxlab_unsupported") == "aten.cumprod.default"
        assert ops_of(result, "add") == ["Const", "Add"]  # the walk went on
        assert result.partial


    def test_scope_attrs_come_from_torchair(self, torchair):
        from fxlab import scope

        def model(x):
            with scope.super_kernel("sk1", "stream-fusion=1"), scope.limit_core_num(4, 8):
                y = x * 2
            return (y + 1,)

        result = convert(torchair, model, torch.randn(4))
        (mul,) = [op for op in result.graph.ops if op.fx_node == "mul" and op.type == "Mul"]
        assert mul.attr_value("_super_kernel_scope") == "sk1"
        assert mul.attr_value("_super_kernel_options") == "stream-fusion=1"
        assert (mul.attr_value("_op_aicore_num"), mul.attr_value("_op_vectorcore_num")) == ("4", "8")
        add = next(op for op in result.graph.ops if op.fx_node == "add" and op.type == "Add")
        assert "_super_kernel_scope" not in add.attrs


    def test_builtin_and_torchair_conversions_diff_op_by_op(self, torchair):
        def model(x, w, b):
            return (F.linear(x, w, b).softmax(-1),)

        gm = functional_graph(model, torch.randn(2, 8), torch.randn(4, 8), torch.randn(4))
        builtin = convert_to_ascend_ir(gm, "graph").graph
        theirs = run_torchair_conversion(gm, "graph", torchair).graph
        diff = diff_ir(builtin, theirs, left_label="ascend_ir", right_label="ascend_ir:torchair")
        by_node = {n.fx_node: n for n in diff.nodes}
        assert by_node["_softmax"].right_types == ["SoftmaxV2"]
        assert by_node["t"].right_types == []  # TorchAir builds the transpose at addmm
        assert "Transpose" in by_node["addmm"].right_types
        assert diff.summary()["only_right"] >= 1


    def test_inplace_on_input_agrees_with_builtin_after_output_reuse(self, torchair):
        from fxlab.passes.ge_passes import ge_graph_passes

        def model(x, y):
            y.mul_(2)
            return (x + 1,)

        gm = functional_graph(model, torch.randn(3), torch.randn(3))
        builtin = convert_to_ascend_ir(gm, "graph").graph
        ge_graph_passes(builtin)
        diff = diff_ir(builtin, run_torchair_conversion(gm, "graph", torchair).graph)
        assert diff.identical, diff.to_json()
        assert "_fxlab_ge_option:ge.exec.outputReuseInputMemIndexes" in builtin.attrs

    def test_torchairs_host_outputs_are_recorded_as_the_builtin_records_them(self, torchair):
        # TorchAir's NetOutput leaves out views of inputs (the in-place result too) and
        # takes a value returned twice once; the bridge records where its FX outputs
        # come from, and the built-in's record says the same.
        from fxlab.ir.host_outputs import fx_outputs_of
        from fxlab.passes.ge_passes import ge_graph_passes
        from fxlab.passes.pre_ge import pre_ge_graph

        def model(x, y):
            s = x - y
            y.add_(x)
            return x.t(), s, x[1:], s, y

        gm = functional_graph(model, torch.randn(3, 4), torch.randn(3, 4))
        builtin = convert_to_ascend_ir(pre_ge_graph(gm).gm, "graph").graph
        ge_graph_passes(builtin)
        theirs = run_torchair_conversion(gm, "graph", torchair).graph
        assert theirs.outputs == builtin.outputs == ["Sub:0", "Add:0"]

        def where(graph):
            return [(o.kind, o.ge_index, o.input_index, o.size, o.stride, o.offset) for o in fx_outputs_of(graph)]

        assert where(theirs) == where(builtin) == [
            ("view", None, 0, (4, 3), (1, 4), 0), ("ge", 0, None, (), (), 0), ("view", None, 0, (2, 4), (4, 1), 4),
            ("ge", 0, None, (), (), 0), ("view", None, 1, (3, 4), (4, 1), 0),
        ]

    def test_pattern_fusion_runs_as_on_an_npu_machine(self, torchair):
        # torch_npu's operators named by TorchAir's fusion patterns are defined for the
        # session, so its pattern fusion pass really matches: add_rms_norm + dynamic_quant
        # become the fused operator, converted to its GE op.
        def model(x1, x2, gamma, smooth):
            y, _, x_out = torch.ops.npu.npu_add_rms_norm.default(x1, x2, gamma)
            q, scale = torch.ops.npu.npu_dynamic_quant.default(y, smooth_scales=smooth)
            return q, x_out, scale

        half = dict(dtype=torch.float16)
        result = convert(torchair, model, torch.randn(2, 4, 8, **half), torch.randn(2, 4, 8, **half), torch.randn(8, **half), torch.randn(8, **half))
        converted = [(n.node, n.ge_ops[:1]) for n in result.nodes if n.status is Status.CONVERTED]
        assert converted == [("npu_add_rms_norm_dynamic_quant_default", ["AddRmsNormDynamicQuant"])]
        assert result.ge_options["pattern_fusion_pass"] == "1"

    def test_notes_say_what_is_stood_in_and_where_the_run_stops(self, torchair):
        result = convert(torchair, lambda x: (x + 1,), torch.randn(2))
        text = " ".join(result.notes)
        assert "stood in" in text and "GE compilation and fusion do not run" in text
        assert torchair.report.converters > 1000
        assert "torchair.core._torchair" in torchair.report.standins
        assert "stand-in NPU machine: SoC Ascend910B2" in text

    # The stand-in NPU machine: converters that ask for the SoC, the device's generator
    # or the CANN version convert as on an NPU machine.
    @pytest.mark.parametrize(
        "fn, shapes, ge_type",
        [
            (lambda x, w: F.conv2d(x, w, padding=1), [(1, 3, 8, 8), (4, 3, 3, 3)], "Conv2D"),
            (lambda x, m, v: F.batch_norm(x, m, v.abs(), None, None, False), [(2, 3, 4, 4), (3,), (3,)], "BNInfer"),
            (lambda x: F.max_pool2d(x, 2), [(1, 3, 8, 8)], "MaxPoolWithArgmaxV1"),
            (lambda x: F.avg_pool2d(x, 2), [(1, 3, 8, 8)], "AvgPoolV2"),
            (lambda x: F.group_norm(x, 2), [(2, 4, 3)], "GroupNorm"),
            (lambda x: 1 - x, [(4,)], "Sxpy"),
            (lambda x: x.std(0), [(4, 3)], "ReduceStdWithMean"),
            (lambda x: x + torch.rand(4), [(4,)], "StatelessRandomUniformV2"),
            (lambda x: torch.bernoulli(x), [(4,)], "StatelessBernoulli"),
            (lambda x: torch.ops.aten.native_dropout(x, 0.5, True)[0], [(4,)], "DropOutDoMask"),
        ],
        ids=["conv", "batch_norm", "max_pool", "avg_pool", "group_norm", "rsub", "std", "rand", "bernoulli", "dropout"],
    )
    def test_the_stand_in_npu_machine_lets_torchair_convert(self, torchair, fn, shapes, ge_type):
        result = convert(torchair, fn, *(torch.rand(s) for s in shapes))
        failed = [(n.node, n.message) for n in result.nodes if n.status in (Status.UNSUPPORTED, Status.RAISED)]
        assert failed == [] and ge_type in result.graph.types
        assert not hasattr(torch, "npu") and "torch_npu" not in sys.modules

    def test_the_rng_seed_is_the_device_generators_whatever_the_host_seed(self, torchair):
        from fxlab.compat.native_standins.torch_npu_runtime import DEVICE_DEFAULT_SEED

        seeds = []
        for host_seed in (0, 1234):
            torch.manual_seed(host_seed)
            result = convert(torchair, lambda x: x + torch.randn(4), torch.randn(4))
            (seed,) = [op for op in result.graph.ops if op.name == "initial_seed"]
            seeds.append(seed.attrs["value"].value.to_torch().item())
        assert seeds == [DEVICE_DEFAULT_SEED, DEVICE_DEFAULT_SEED]

    def test_soc_is_what_torchair_reads_from_the_device(self, torchair):
        from fxlab.compat.native_standins.torch_npu_runtime import torch_npu_present

        with torch_npu_present("Ascend950PR"):
            assert torchair.module("_utils.check_platform").is_arch35() is True
            from torch_npu.npu.utils import _is_gte_cann_version

            assert _is_gte_cann_version("8.3.RC1") and not _is_gte_cann_version("99.0.0")
        with torch_npu_present():
            assert torchair.module("_utils.check_platform").is_arch35() is False

    def test_dtype_attrs_read_with_torchairs_numbering(self, torchair):
        from fxlab.ir.model import DataType

        result = convert(torchair, lambda x: torch.argmax(x, 1), torch.randn(3, 4))
        (argmax,) = result.graph.ops_of_type("ArgMaxV2")
        assert argmax.attrs["dtype"].value is DataType.DT_INT64  # TorchAir's 9, the proto's DT_UINT32


# -- loading: reports, guarding, leaving nothing behind -------------------------------------
def test_registration_failures_name_overloads_this_torch_lacks(torchair):
    for issue in torchair.report.registration_failures:
        assert issue.target and "torch.ops." in issue.target
        op_path = issue.target.split("torch.ops.")[1].split(")")[0].split(",")[0]
        namespace, packet, overload = (op_path.split(".") + ["default"])[:3]
        packet_obj = getattr(getattr(torch.ops, namespace), packet, None)
        assert packet_obj is None or not hasattr(packet_obj, overload), issue.describe()


def test_guarding_keeps_good_registrations_when_one_names_a_missing_overload():
    source = (
        "import torch\nREG = []\n"
        "def register(op):\n    def deco(fn):\n        REG.append(op)\n        return fn\n    return deco\n"
        "@register(torch.ops.aten.no_such_op_in_torch.default)\ndef bad():\n    pass\n"
        "@register(torch.ops.aten.add.Tensor)\ndef good():\n    pass\n"
    )
    import ast

    failures = []
    tree = _GuardRegistrations(source).visit(ast.parse(source))
    namespace = {"__fxlab_registration_failed__": lambda *a: failures.append(a)}
    exec(compile(ast.fix_missing_locations(tree), "<converters>", "exec"), namespace)
    assert namespace["REG"] == [torch.ops.aten.add.Tensor]
    assert [(f[0], f[1]) for f in failures] == [("bad", 9)]  # the line of its `def`
    assert "no_such_op_in_torch" in str(failures[0][3])


def test_session_leaves_the_process_as_it_found_it(torchair_path):
    path = torchair_path
    handler = signal.getsignal(signal.SIGINT)
    with open_torchair(path) as loaded:
        assert hasattr(torch.ops.aten.add.Tensor, "_ge_converter")
        assert "torchair" in sys.modules and loaded.report.path == path
        run_torchair_conversion(functional_graph(lambda x: (x + 1,), torch.randn(2)), "g", loaded)
        loaded.package.get_npu_backend(compiler_config=loaded.package.CompilerConfig())  # patches torch
        assert DispatchKey.AutogradPrivateUse1 in torch.ops.aten.to.other.py_kernels
    assert not any(n == "torchair" or n.startswith("torchair.") or n == "torch_npu" for n in sys.modules)
    assert not hasattr(torch.ops.aten.add.Tensor, "_ge_converter")
    assert signal.getsignal(signal.SIGINT) is handler
    from torch._higher_order_ops.auto_functionalize import NotView

    assert not hasattr(NotView, "regenerate_ge_view")
    # torch_npu's operators defined for the session, and get_npu_backend's torch patches, are gone.
    assert not hasattr(torch.ops.npu, "npu_add_rms_norm")
    assert DispatchKey.AutogradPrivateUse1 not in torch.ops.aten.to.other.py_kernels


# -- versions, prototypes, fetching -----------------------------------------------------------
def test_version_compatibility_is_said_plainly():
    match = TorchAirVersion("2.13.0", "2.13.0.*").compatibility("2.13.0+cpu")
    assert "matches the installed torch 2.13.0+cpu" in match
    old = TorchAirVersion("2.9.0.post2", "2.9.0.*").compatibility("2.13.0+cpu")
    assert "older than the installed torch" in old and "torch_npu 2.13.0" in old
    unknown = TorchAirVersion().compatibility("2.13.0")
    assert "does not say" in unknown and "torch_npu 2.13.0" in unknown


def test_prototype_from_reg_op_text():
    text = "REG_OP(Foo)\n.INPUT(x, T)\n.OPTIONAL_INPUT(bias, T)\n.DYNAMIC_INPUT(xs, T)\n.OUTPUT(y, T)\n.ATTR(axes, ListInt, {})\n.REQUIRED_ATTR(eps, Float)\n"
    proto = IrPrototype.from_reg_op("Foo", text)
    assert proto.inputs == [("x", "required"), ("bias", "optional"), ("xs", "dynamic")]
    assert proto.outputs == [("y", "required")]
    assert proto.attrs == [("axes", "VT_LIST_INT"), ("eps", "VT_FLOAT")]


def _no_ops_and_views(x, w):
    y = torch.cat([x.repeat(1, 1)]).pow(1).to(torch.float32)  # no-ops TorchAir removes
    y = F.pad(y, (0, 0)) @ w.t()  # zero padding; a transposed weight rebuilt at its reader
    return (y.view(2, 3).view(3, 2).relu(),)  # views back to the base's shape: not built


def test_builtin_pre_ge_conversion_equals_torchairs_on_no_ops_and_views(torchair):
    from fxlab.passes.ge_passes import ge_graph_passes
    from fxlab.passes.pre_ge import pre_ge_graph

    gm = functional_graph(_no_ops_and_views, torch.randn(3, 4), torch.randn(2, 4))
    builtin = convert_to_ascend_ir(pre_ge_graph(gm).gm, "graph").graph
    ge_graph_passes(builtin)
    theirs = run_torchair_conversion(gm, "graph", torchair).graph
    assert diff_ir(builtin, theirs).identical
    assert builtin.types == ["Data", "Data", "Const", "Transpose", "MatMul", "Relu", "NetOutput"]
    assert len(convert_to_ascend_ir(gm, "graph").graph.ops) > len(builtin.ops)  # without TorchAir's passes


def _embedding_bag_sum(weight, indices, offsets):
    return (F.embedding_bag(indices, weight, offsets, mode="sum"),)


def test_builtin_embedding_bag_without_mode_is_torchairs_mean(torchair):
    """The functional graph drops mode=0 (sum) as the schema's default; TorchAir's converter
    reads a missing mode as 1 (mean), and the built-in graph is TorchAir's graph."""
    gm = functional_graph(_embedding_bag_sum, torch.randn(10, 4), torch.tensor([1, 2, 4, 5, 4, 3]), torch.tensor([0, 2]))
    (node,) = [n for n in gm.graph.nodes if "embedding_bag" in str(n.target)]
    assert len(node.args) == 3 and "mode" not in node.kwargs
    from fxlab.passes.ge_passes import ge_graph_passes
    from fxlab.passes.pre_ge import pre_ge_graph

    builtin = convert_to_ascend_ir(pre_ge_graph(gm).gm, "graph").graph
    ge_graph_passes(builtin)
    theirs = run_torchair_conversion(gm, "graph", torchair).graph
    assert diff_ir(builtin, theirs).identical
    assert [op.attr_value("mode") for op in (builtin.ops_of_type("EmbeddingBag")[0], theirs.ops_of_type("EmbeddingBag")[0])] == ["mean", "mean"]


def _instance_norm(x, weight, bias):
    return (F.instance_norm(x, weight=weight, bias=bias),)


def test_a_refused_reader_of_a_rebuilt_view_keeps_no_view_ops_in_either_conversion(torchair):
    """The view optimisation rebuilds a view while converting its reader: a reader TorchAir
    refuses (batch norm without running statistics) reads the view's base, in both."""
    from fxlab.passes.ge_passes import ge_graph_passes
    from fxlab.passes.pre_ge import pre_ge_graph

    gm = functional_graph(_instance_norm, torch.randn(2, 4, 3, 3), torch.randn(4), torch.randn(4))
    builtin = convert_to_ascend_ir(pre_ge_graph(gm).gm, "graph").graph
    ge_graph_passes(builtin)
    theirs = run_torchair_conversion(gm, "graph", torchair).graph
    assert diff_ir(builtin, theirs).identical
    (refused,) = builtin.ops_of_type(UNSUPPORTED_OP_TYPE)
    assert refused.inputs[0] == "arg0_1:0"


def _heads_of_a_projection(x, scale):
    # A rotary-style read of a half-precision projection: [b, s, h*d] -> [b, h, s, d],
    # a strided view TorchAir rebuilds at its reader as Reshape, Transpose.
    return (x.view(2, 8, 4, 16).permute(0, 2, 1, 3) * scale,)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_a_rebuilt_strided_view_types_only_its_last_op_as_torchair_does(torchair, dtype):
    """TorchAir's view optimisation gives the FX value to the chain's last op alone: the
    Reshape before the Transpose keeps a helper's unset desc (DT_FLOAT), whatever the dtype."""
    from fxlab.passes.ge_passes import ge_graph_passes
    from fxlab.passes.pre_ge import pre_ge_graph

    gm = functional_graph(_heads_of_a_projection, torch.randn(2, 8, 64, dtype=dtype), torch.randn(1, 1, 8, 16, dtype=dtype))
    builtin = convert_to_ascend_ir(pre_ge_graph(gm).gm, "graph").graph
    ge_graph_passes(builtin)
    theirs = run_torchair_conversion(gm, "graph", torchair).graph
    assert diff_ir(builtin, theirs).identical
    for graph in (builtin, theirs):
        (reshape,), (transpose,) = graph.ops_of_type("Reshape"), graph.ops_of_type("Transpose")
        assert transpose.inputs[0] == f"{reshape.name}:0"
        assert (reshape.output_desc[0].dtype.name, transpose.output_desc[0].dtype.name) == ("DT_FLOAT", "DT_BF16" if dtype is torch.bfloat16 else "DT_FLOAT16")


def _dropout_and_noise(x):
    return (F.dropout(x, 0.3, training=True) + torch.rand(4, 8),)


def test_builtin_rng_conversion_is_torchairs(torchair):
    from fxlab.compat.native_standins.torch_npu_runtime import DEVICE_DEFAULT_SEED
    from fxlab.passes.ge_passes import ge_graph_passes
    from fxlab.passes.pre_ge import pre_ge_graph

    gm = functional_graph(_dropout_and_noise, torch.randn(4, 8))
    builtin = convert_to_ascend_ir(pre_ge_graph(gm).gm, "graph").graph
    theirs = run_torchair_conversion(gm, "graph", torchair).graph
    ge_graph_passes(builtin)
    diff = diff_ir(builtin, theirs)
    # Same ops, attrs, wiring, output dtypes and order.
    assert diff.identical, diff.summary()
    for graph in (builtin, theirs):
        (seed,) = [op for op in graph.ops if op.name == "initial_seed"]
        assert seed.attrs["value"].value.to_torch().item() == DEVICE_DEFAULT_SEED
        (offsets,) = [op for op in graph.ops if op.name == "offset_list"]
        assert offsets.type == "Data" and offsets.output_desc[0].shape == (2,)  # one offset per drawing op
        assert [op.type for op in graph.ops if op.type.startswith("Stateless")] == ["StatelessBernoulli", "StatelessRandomUniformV2"]  # dropout: a bernoulli draw
        # The reference executor feeds either side's offsets input (TorchAir's by its name).
        (out,) = execute(graph, [torch.ones(4, 8)])
        assert out.shape == (4, 8) and float(out.min()) >= 0.0


def _size_first(shape_only: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    zeros = shape_only.new_zeros(3)  # reads only the size: a Data nothing reads
    y.mul_(2)
    return x + 1, zeros


def test_both_drop_an_unread_input_alike_and_both_run_on_the_callers_inputs(torchair):
    from fxlab.ir.graph_inputs import INPUT_INDICES_ATTR
    from fxlab.passes.ge_passes import ge_graph_passes
    from fxlab.passes.output_reuse import OPTION_ATTR_PREFIX, REUSE_INPUT_OPTION, execute_fx_outputs
    from fxlab.passes.pre_ge import pre_ge_graph

    inputs = (torch.randn(4), torch.randn(3), torch.randn(3))
    gm = functional_graph(_size_first, *inputs)
    builtin = convert_to_ascend_ir(pre_ge_graph(gm).gm, "graph").graph
    ge_graph_passes(builtin)
    theirs = run_torchair_conversion(gm, "graph", torchair).graph
    assert diff_ir(builtin, theirs).identical
    assert [op.attr_value("index") for op in theirs.ops if op.type == "Data"] == [0, 1]
    assert builtin.attrs[INPUT_INDICES_ATTR].value == theirs.attrs[INPUT_INDICES_ATTR].value == (1, 2)
    assert theirs.attrs[OPTION_ATTR_PREFIX + REUSE_INPUT_OPTION].value == "1,2"
    eager = [t.clone() for t in inputs]
    expected = _size_first(*eager)
    for graph in (builtin, theirs):
        ran = [t.clone() for t in inputs]
        outputs = execute_fx_outputs(graph, ran)
        for got, want in zip(outputs, expected):
            torch.testing.assert_close(got, want)
        for got, want in zip(ran, eager):
            torch.testing.assert_close(got, want)


def _cache_write(cache: torch.Tensor, idx: torch.Tensor, upd: torch.Tensor) -> tuple[torch.Tensor]:
    torch.ops.npu.npu_scatter_nd_update_(cache, idx, upd)
    return (cache * 2,)


def test_both_let_an_in_place_ref_op_write_the_graph_input_without_copies(torchair):
    # The TorchAir session defines torch_npu's operators.
    from fxlab.passes.ge_passes import ge_graph_passes
    from fxlab.passes.pre_ge import pre_ge_graph

    gm = functional_graph(_cache_write, torch.zeros(2, 4, 3), torch.tensor([[[0, 1]], [[1, 3]]]), torch.randn(2, 1, 3))
    builtin = convert_to_ascend_ir(pre_ge_graph(gm).gm, "graph").graph
    ge_graph_passes(builtin)
    theirs = run_torchair_conversion(gm, "graph", torchair).graph
    assert diff_ir(builtin, theirs).identical
    assert builtin.types == ["Data", "Data", "Data", "ScatterNdUpdate", "Const", "Mul", "Cast", "NetOutput"]
    assert builtin.op_by_name()["ScatterNdUpdate"].inputs[0] == "arg0_1:0"


def _grow_cache(key: torch.Tensor, scale: torch.Tensor) -> tuple[torch.Tensor, ...]:
    # transformers' DynamicCache starts from `torch.tensor([], device=key.device)` and
    # concatenates: a tensor constant on the device on an NPU machine.
    keys = torch.cat([torch.tensor([], device=key.device), key], dim=-2)
    return keys * torch.tensor([1.0, 2.0, 3.0, 4.0], device=key.device) + scale, keys.new_empty(0, 4)


def test_both_convert_tensor_constants_and_empty_outputs_alike(torchair):
    from fxlab.passes.ge_passes import ge_graph_passes
    from fxlab.passes.pre_ge import pre_ge_graph

    inputs = (torch.randn(1, 2, 3, 4), torch.randn(4))
    graphs = []

    def backend(gm, example_inputs):  # through Dynamo: its constants are get_attr nodes
        functional, compiled = functional_stage(gm, example_inputs)
        graphs.append(functional)
        return compiled

    torch._dynamo.reset()
    torch.compile(_grow_cache, backend=backend)(*inputs)
    (gm,) = graphs
    builtin = convert_to_ascend_ir(pre_ge_graph(gm).gm, "graph").graph
    ge_graph_passes(builtin)
    theirs = run_torchair_conversion(gm, "graph", torchair).graph  # its fake run mixed host and device tensors before
    diff = diff_ir(builtin, theirs)
    assert diff.identical, diff.summary()
    # Empty outputs are Consts of an empty tensor (no Identity for the empty constant's
    # copy, no op for new_empty); the non-empty constant is a Const read by an Identity.
    consts = [op for op in builtin.ops if op.type == "Const" and op.attr_value("_readable_value", "").startswith("tensor(")]
    assert [op.attr_value("_readable_value") for op in consts] == ["tensor([])", "tensor([1., 2., 3., 4.])", "tensor([], size=(0, 4))"]
    assert builtin.types.count("Identity") == 1
    expected = _grow_cache(*inputs)
    for got, want in zip(execute(builtin, list(inputs)), expected):
        torch.testing.assert_close(got, want)


def _rows_of_noise(x):
    return x + torch.rand(x.shape[0], 4) * 0, torch.randn(x.shape, dtype=x.dtype) * 0


def test_both_read_a_symbolic_size_from_its_tensor_and_draw_with_it(torchair):
    """TorchAir's optimize_sym_input (its default GE graph mode) and a random draw whose
    size is symbolic: a Pack of the size read from the input's shape."""
    from fxlab.diff.ir_diff import DEFAULT_IGNORED_ATTRS
    from fxlab.passes.ge_passes import ge_graph_passes
    from fxlab.passes.pre_ge import pre_ge_graph

    graphs = []

    def backend(gm, example_inputs):
        functional, compiled = functional_stage(gm, example_inputs)
        graphs.append(functional)
        return compiled

    x = torch.randn(6, 4)
    torch._dynamo.mark_dynamic(x, 0)
    torch._dynamo.reset()
    torch.compile(_rows_of_noise, backend=backend)(x)
    (gm,) = graphs
    builtin = convert_to_ascend_ir(pre_ge_graph(gm).gm, "graph").graph
    ge_graph_passes(builtin)
    theirs = run_torchair_conversion(gm, "graph", torchair).graph
    # As on an NPU machine: the tensor input on the device, the size symbol fed from the host.
    diff = diff_ir(builtin, theirs, ignore_attrs=DEFAULT_IGNORED_ATTRS)
    assert diff.identical, diff.summary()
    data = {op.name: op.attr_value("_host_tensor") for op in theirs.ops if op.type == "Data" and op.name != "offset_list"}
    assert list(data.values()) == [None]  # the Sym input's Data is read by nothing and dropped
    assert [op.type for op in builtin.ops if op.type in ("Data", "Shape", "Gather", "Pack")] == ["Data", "Shape", "Gather", "Pack", "Data", "Pack"]


def test_inputs_with_symbolic_sizes_go_to_the_device_with_their_symbols():
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

    from fxlab.compat.bridge import DEVICE, device_inputs

    mode = FakeTensorMode(shape_env=ShapeEnv())
    x = mode.from_tensor(torch.randn(4, 3), symbolic_context=StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DUCK] * 2))
    size = x.shape[0]
    inputs, fake_mode, note = device_inputs([size, x])
    assert inputs[0] is size and fake_mode is mode and note == "graph inputs placed on the device, as on an NPU machine"
    assert inputs[1].device == DEVICE and str(inputs[1].shape) == str(x.shape) and inputs[1].stride() == x.stride()


def test_torchairs_packed_sizes_input_runs_on_the_callers_inputs_as_the_builtins_does(torchair):
    """TorchAir's optimize_sym_pack feeds a list of host sizes as one new input; the bridge
    records which inputs it packs, so both graphs run on the caller's inputs."""
    from fxlab.diff.ir_diff import DEFAULT_IGNORED_ATTRS
    from fxlab.ir.execute import execute
    from fxlab.ir.graph_inputs import SYM_PACK_ATTR
    from fxlab.passes.ge_passes import ge_graph_passes
    from fxlab.passes.pre_ge import pre_ge_graph
    from tests.passes.dynamic_functional import dynamic_functional, graph_inputs
    from tests.passes.test_optimize_sym_pack import zeros_of_sizes

    x = torch.randn(3, 2)
    gm = dynamic_functional(zeros_of_sizes, x, 5, 7)
    builtin = convert_to_ascend_ir(pre_ge_graph(gm).gm, "graph").graph
    ge_graph_passes(builtin)
    theirs = run_torchair_conversion(gm, "graph", torchair).graph
    assert diff_ir(builtin, theirs, ignore_attrs=DEFAULT_IGNORED_ATTRS).identical
    (their_pack,) = [op.attr_value(SYM_PACK_ATTR) for op in theirs.ops if op.attr_value(SYM_PACK_ATTR) is not None]
    (our_pack,) = [op.attr_value(SYM_PACK_ATTR) for op in builtin.ops if op.attr_value(SYM_PACK_ATTR) is not None]
    assert their_pack == our_pack
    inputs = graph_inputs(gm, x, 5, 7)
    for graph in (builtin, theirs):
        torch.testing.assert_close(execute(graph, inputs)[0], zeros_of_sizes(x, 5, 7))


def test_rebuilt_views_take_their_symbolic_sizes_as_torchairs_map_holds_them(torchair):
    """The graph's first rebuilt view keeps the values it found for itself (TorchAir's map
    of them is replaced as that rebuild ends); a later view's reader takes its own."""
    from fxlab.diff.ir_diff import DEFAULT_IGNORED_ATTRS
    from fxlab.passes.ge_passes import ge_graph_passes
    from fxlab.passes.pre_ge import pre_ge_graph
    from tests.passes.test_optimize_views import two_chains_graph

    gm = two_chains_graph()
    builtin = convert_to_ascend_ir(pre_ge_graph(gm).gm, "graph").graph
    ge_graph_passes(builtin)
    theirs = run_torchair_conversion(gm, "graph", torchair).graph
    assert diff_ir(builtin, theirs, ignore_attrs=DEFAULT_IGNORED_ATTRS).identical
    (pack,) = [op for op in theirs.ops if op.type == "Pack" and op.fx_node == "mm_1"]
    assert pack.inputs[0] == f"{theirs.ops_of_type('Mul')[1].name}:0"


# -- an op whose output size depends on the data ------------------------------------------------
def _repeat_rows(x, counts):
    return torch.repeat_interleave(x * 2, counts, dim=0) + 1


def test_data_dependent_sizes_are_walked_in_the_compiles_fake_mode_as_on_an_npu_machine(torchair):
    """TorchAir's own backend fails at the repeat_interleave node, in its walk's test of
    an empty output; the bridge meets the same failure on the same node (not a fake-mode
    error of its own) and records it, so both conversions end partial."""
    from tests.compat.torchair_compile import torchair_compile_error
    from tests.passes.dynamic_functional import captured_functional

    inputs = (torch.randn(3, 4), torch.tensor([1, 2, 3]))
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        error = torchair_compile_error(torchair, _repeat_rows, *inputs)
        gm = captured_functional(_repeat_rows, *inputs)
    assert type(error).__name__ == "GuardOnDataDependentSymNode" and "While executing %repeat_interleave" in str(error)
    result = run_torchair_conversion(gm, "graph", torchair)
    (record,) = [r for r in result.nodes if r.node == "repeat_interleave"]
    assert record.status is Status.RAISED
    assert "GuardOnDataDependentSymNode: Could not guard on data-dependent expression" in record.message
    assert "[in TorchAir's _ge_concrete_graph/utils.py:254]" in record.message
    assert result.partial and convert_to_ascend_ir(gm, "graph").partial


def _nan_to_zero(x):
    return (torch.nan_to_num(x, nan=0.0),)


def test_nan_to_num_without_its_infinities_fails_in_torchairs_converter_as_the_builtin_says(torchair):
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 2.0])
    result = run_torchair_conversion(functional_graph(_nan_to_zero, x), "graph", torchair)
    (failed,) = [n for n in result.nodes if n.status in FAILED_STATUSES and "nan_to_num" in str(n.target)]
    assert "TypeError: must be real number, not NoneType" in failed.message
    builtin = convert_to_ascend_ir(functional_graph(_nan_to_zero, x), "graph")
    (refused,) = [n for n in builtin.nodes if n.status in FAILED_STATUSES and "nan_to_num" in str(n.target)]
    assert "TorchAir's converter sets GE's float attrs from them and fails on None" in refused.message
