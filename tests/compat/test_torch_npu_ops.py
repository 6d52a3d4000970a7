"""torch_npu's operators defined from a torch_npu copy's schemas and Meta functions: the
files fxlab ships, or a copy beside a TorchAir the user points at or fetched."""
from __future__ import annotations

import importlib.machinery
import json
from pathlib import Path

import pytest
import torch

from fxlab.compat import torch_npu_ops
from fxlab.compat.torch_npu_ops import (
    META_FILE,
    SCHEMA_FILE,
    SHIPPED_DIR,
    TorchNpuCopy,
    find_torch_npu_copy,
    read_schemas,
    shipped_copy,
    torch_npu_definitions,
)
from fxlab.compat.torchair_versions import SOURCE_FILE, release_of
from tests.sessions import trace_of

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def copy() -> TorchNpuCopy:
    shipped = shipped_copy()
    assert shipped is not None, f"the torch_npu files fxlab ships are missing from {SHIPPED_DIR}"
    return shipped


# -- which copy ------------------------------------------------------------------------------
def _torch_npu_tree(folder: Path, built_for: str | None = None) -> Path:
    """A torch_npu folder holding the two files (and a TorchAir folder); with ``built_for``,
    the sidecar ``fxlab torchair fetch`` writes, naming the torch it was built for."""
    root = folder / "torch_npu"
    for member in (SCHEMA_FILE, META_FILE):
        (root / member).parent.mkdir(parents=True, exist_ok=True)
        (root / member).write_text("# stand-in\n")
    (root / "dynamo" / "torchair").mkdir(parents=True)
    if built_for is not None:
        (folder / SOURCE_FILE).write_text(json.dumps({"torch_npu": built_for, "requires_torch": f"{built_for}.*"}))
    return root


@pytest.fixture
def no_copies(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Neither a path in the environment nor a fetched copy."""
    monkeypatch.delenv(torch_npu_ops.TORCHAIR_PATH_ENV_VAR, raising=False)
    monkeypatch.setattr(torch_npu_ops, "cached_torchair", lambda: None)
    return monkeypatch


def test_without_any_copy_the_shipped_files_define_the_operators(no_copies: pytest.MonkeyPatch) -> None:
    found = find_torch_npu_copy()
    assert found == shipped_copy() and found.origin == "the files fxlab ships (torch_npu 2.13.0)"
    assert (found.schema_file.parent, found.meta_file.name) == (SHIPPED_DIR, "_meta_registrations.py.txt")


def test_an_explicit_copy_then_the_environments_then_a_fetched_one_for_this_torch(no_copies: pytest.MonkeyPatch, tmp_path: Path) -> None:
    explicit = _torch_npu_tree(tmp_path / "explicit")
    from_env = _torch_npu_tree(tmp_path / "env")
    this_torch = ".".join(map(str, release_of(torch.__version__)))
    fetched = _torch_npu_tree(tmp_path / "fetched", built_for=this_torch)
    no_copies.setattr(torch_npu_ops, "cached_torchair", lambda: fetched / "dynamo" / "torchair")
    assert find_torch_npu_copy().origin == f"the torch_npu copy in {fetched}"
    no_copies.setenv(torch_npu_ops.TORCHAIR_PATH_ENV_VAR, str(from_env / "dynamo" / "torchair"))
    assert find_torch_npu_copy() == TorchNpuCopy.in_package(from_env)
    assert find_torch_npu_copy(explicit / "dynamo" / "torchair") == TorchNpuCopy.in_package(explicit)
    # A folder without the two files (a TorchAir source checkout) is passed over.
    assert find_torch_npu_copy(tmp_path / "elsewhere" / "torchair") == TorchNpuCopy.in_package(from_env)


def test_a_fetched_copy_built_for_another_torch_gives_way_to_the_shipped_files(no_copies: pytest.MonkeyPatch, tmp_path: Path) -> None:
    other = _torch_npu_tree(tmp_path / "fetched", built_for="2.6.0")
    unknown = _torch_npu_tree(tmp_path / "unknown")
    for torchair in (other, unknown):
        no_copies.setattr(torch_npu_ops, "cached_torchair", lambda folder=torchair: folder / "dynamo" / "torchair")
        assert find_torch_npu_copy() == shipped_copy()


def test_the_note_says_which_copy_defined_the_operators(copy: TorchNpuCopy) -> None:
    with torch_npu_definitions(copy) as defined:
        assert defined.note.startswith(f"torch_npu operators from the files fxlab ships (torch_npu 2.13.0): {len(defined.defined)} defined")
    with torch_npu_definitions(TorchNpuCopy(Path("missing.yaml"), Path("missing.py"), "nowhere")) as defined:
        assert defined.defined == [] and defined.note.startswith("torch_npu operators: none defined: nowhere lacks missing.yaml and missing.py")
    with torch_npu_definitions(None) as defined:
        assert defined.copy is not None  # the shipped files, found by default


def test_a_nested_block_says_the_operators_were_defined_before_not_zero(copy: TorchNpuCopy) -> None:
    with torch_npu_definitions(copy) as outer, torch_npu_definitions(copy) as inner:
        assert inner.defined == [] and inner.already_defined == len(outer.defined) > 0
        assert inner.note == f"torch_npu operators from {copy.origin}: all {len(outer.defined)} defined before, kept"


# -- the shipped files -----------------------------------------------------------------------
def test_the_shipped_files_carry_their_origin_and_torch_npus_licence(copy: TorchNpuCopy) -> None:
    source = json.loads((SHIPPED_DIR / "source.json").read_text())
    assert (source["torch_npu"], source["requires_torch"]) == ("2.13.0", "2.13.0.*")
    for path in (copy.schema_file, copy.meta_file):
        head = path.read_text().splitlines()[:5]
        assert head[0] == "# Made by scripts/extract_torch_npu_operators.py from torch_npu 2.13.0"
        assert source["sha256"] in head[1] and "licence notice is in LICENSE beside this file" in head[3]
        assert head[4].endswith("python scripts/extract_torch_npu_operators.py --version 2.13.0")
    licence = (SHIPPED_DIR / "LICENSE").read_text()
    assert "Copyright (c) 2020, Huawei Technologies Co., Ltd" in licence and "Redistributions of source code must retain" in licence
    assert (REPO / "scripts" / "extract_torch_npu_operators.py").is_file()


def test_the_shipped_files_are_package_data() -> None:
    from fnmatch import fnmatch

    tomllib = pytest.importorskip("tomllib")
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["fxlab"]
    package = REPO / "fxlab"
    shipped = sorted(str(p.relative_to(package)) for p in SHIPPED_DIR.iterdir())
    names = ("LICENSE", "_meta_registrations.py.txt", "npu_native_functions_by_codegen.yaml", "public_names.json", "source.json")
    assert shipped == ["compat/torch_npu_files/" + n for n in names]
    assert all(any(fnmatch(name, pattern) for pattern in patterns) for name in shipped)


@pytest.mark.torchair
def test_the_shipped_files_define_what_the_fetched_copy_defines(torchair_path: Path | None) -> None:
    from scripts.extract_torch_npu_operators import own_sections

    shipped = shipped_copy()
    fetched = find_torch_npu_copy(Path(torchair_path)) if torchair_path else shipped
    if fetched == shipped:
        pytest.skip("the TorchAir found has no torch_npu operator files beside it")
    # The files: the yaml's own sections and the whole Meta file, after the header.
    assert shipped.schema_file.read_text().split("\n\n", 1)[1] == own_sections(fetched.schema_file.read_text())
    assert shipped.meta_file.read_text().split("\n\n", 1)[1] == fetched.meta_file.read_text()
    # What they define.
    assert read_schemas(shipped.schema_file) == read_schemas(fetched.schema_file)
    results = []
    for copy in (shipped, fetched):
        with torch_npu_definitions(copy) as defined:
            schemas = {q: str(_overload(q)._schema) for q in defined.defined}
            results.append((defined.defined, defined.with_meta, defined.failures, schemas))
    assert results[0] == results[1] and len(results[0][0]) > 400


def _overload(qualified: str) -> torch._ops.OpOverload:
    name, _, overload = qualified.partition(".")
    return getattr(getattr(torch.ops.npu, name), overload or "default")


def test_reads_only_torch_npus_own_operators(tmp_path: Path):
    yaml = tmp_path / "f.yaml"
    yaml.write_text(
        "custom:\n- func: npu_a(Tensor x) -> Tensor\n  impl_ns: op_api\n"
        "supported:\n- func: add.Tensor(Tensor self, Tensor other) -> Tensor\n"
        "symint:\n- func: npu_a(Tensor x, SymInt n=0) -> Tensor\n"
    )
    assert read_schemas(yaml) == {"npu_a": "npu_a(Tensor x, SymInt n=0) -> Tensor"}


def test_defines_schemas_and_meta_functions_then_removes_them(copy: TorchNpuCopy):
    with torch_npu_definitions(copy) as defined:
        assert len(defined.defined) > 300 and not defined.failures
        assert {"npu_rms_norm", "npu_fusion_attention", "npu_grouped_matmul"} <= defined.with_meta
        x = torch.empty(2, 5, 8, device="meta")
        y, rstd = torch.ops.npu.npu_rms_norm(x, torch.empty(8, device="meta"))
        assert y.shape == (2, 5, 8) and rstd.shape == (2, 5, 1) and rstd.dtype == torch.float32
        out = torch.ops.npu.npu_fused_infer_attention_score(
            torch.empty(1, 2, 32, device="meta"), torch.empty(1, 6, 16, device="meta"), torch.empty(1, 6, 16, device="meta"),
            num_heads=4, num_key_value_heads=2,
        )
        assert out[0].shape == (1, 2, 32)
        # ATen's Meta kernels are untouched by the file's aten registrations.
        assert torch.ops.aten.matmul(torch.empty(2, 3, device="meta"), torch.empty(3, 4, device="meta")).shape == (2, 4)
    with pytest.raises((AttributeError, RuntimeError)):
        torch.ops.npu.npu_fusion_attention.default


def test_the_meta_file_is_compiled_once_and_its_bytecode_cached_beside_it(copy: TorchNpuCopy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # A copy of the shipped files in a folder of the test's own, so the cache is the test's.
    for source in (copy.schema_file, copy.meta_file):
        (tmp_path / source.name).write_bytes(source.read_bytes())
    own = TorchNpuCopy(tmp_path / copy.schema_file.name, tmp_path / copy.meta_file.name, "a copy in a test folder")
    monkeypatch.setattr("sys.dont_write_bytecode", False)
    compiled: list[str] = []
    real_compile = importlib.machinery.SourceFileLoader.source_to_code

    def counted(self, data, path, *args, **kwargs):  # type: ignore[no-untyped-def]
        compiled.append(str(path))
        return real_compile(self, data, path, *args, **kwargs)

    monkeypatch.setattr(importlib.machinery.SourceFileLoader, "source_to_code", counted)
    for _ in range(2):
        with torch_npu_definitions(own) as defined:
            assert "npu_rms_norm" in defined.with_meta and not defined.failures
            y, _rstd = torch.ops.npu.npu_rms_norm(torch.empty(2, 8, device="meta"), torch.empty(8, device="meta"))
            assert y.shape == (2, 8)
    assert compiled == [str(own.meta_file)]  # the second block ran the cached bytecode
    assert (tmp_path / "__pycache__").is_dir() and list((tmp_path / "__pycache__").iterdir())


def test_cpu_kernels_run_eagerly(copy: TorchNpuCopy):
    with torch_npu_definitions(copy):
        x = torch.randn(4, 8)
        torch.testing.assert_close(torch.ops.npu.npu_swiglu(x), torch.nn.functional.silu(x[:, :4]) * x[:, 4:])
        x, cos, sin = torch.randn(1, 1, 2, 4), torch.randn(1, 1, 2, 4), torch.randn(1, 1, 2, 4)
        rotated = torch.cat([-x[..., 2:], x[..., :2]], dim=-1)
        torch.testing.assert_close(torch.ops.npu.npu_rotary_mul(x, cos, sin), x * cos + rotated * sin)  # a family's kernel
        with pytest.raises(NotImplementedError, match="Could not run"):
            torch.ops.npu.npu_iou(torch.rand(2, 4), torch.rand(3, 4))


def test_in_place_operators_functionalize_to_their_functional_form(copy: TorchNpuCopy):
    def write(key: torch.Tensor, value: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        torch.ops.npu.npu_scatter_pa_kv_cache(key, value, k_cache, v_cache, slots, cache_mode="Norm")
        return k_cache * 2

    graphs = []

    def keep(gm: torch.fx.GraphModule, inputs: object) -> torch.fx.GraphModule:
        graphs.append(gm)
        return gm

    with torch_npu_definitions(copy):
        from functorch.compile import aot_function

        args = (torch.randn(2, 1, 4), torch.randn(2, 1, 4), torch.zeros(3, 2, 1, 4), torch.zeros(3, 2, 1, 4), torch.tensor([1, 4], dtype=torch.int32))
        aot_function(write, fw_compiler=keep)(*[a.clone() for a in args])
        targets = [str(n.target) for n in graphs[0].graph.nodes if n.op == "call_function"]
        assert targets[0] == "npu.npu_scatter_pa_kv_cache_functional.default" and "npu.npu_scatter_pa_kv_cache.default" not in targets
        expected = args[2].clone()
        expected[0, 1, 0], expected[2, 0, 0] = args[0][0, 0], args[0][1, 0]
        torch.testing.assert_close(write(*args), expected * 2)  # eagerly too: the functional form, copied back


def test_in_place_operators_functionalize_to_their_functional_twin(copy: TorchNpuCopy):
    def write(cache: torch.Tensor, idx: torch.Tensor, upd: torch.Tensor) -> torch.Tensor:
        torch.ops.npu.npu_scatter_nd_update_(cache, idx, upd)
        return cache * 2

    graphs = []

    def keep(gm: torch.fx.GraphModule, inputs: object) -> torch.fx.GraphModule:
        graphs.append(gm)
        return gm

    with torch_npu_definitions(copy):
        from functorch.compile import aot_function

        args = (torch.zeros(2, 4, 3), torch.tensor([[[0, 1]], [[1, 3]]]), torch.randn(2, 1, 3))
        aot_function(write, fw_compiler=keep)(*[a.clone() for a in args])
        targets = [str(n.target) for n in graphs[0].graph.nodes if n.op == "call_function"]
        # The write-back is functionalized like any copy_: a functional copy read by later ops.
        assert targets == ["npu.npu_scatter_nd_update.default", "aten.copy.default", "aten.mul.Tensor"]
        expected = args[0].clone()
        expected[0, 1], expected[1, 3] = args[2][0, 0], args[2][1, 0]
        torch.testing.assert_close(write(*args), expected * 2)


IOU_MODEL = """
import torch
import torch_npu


class M(torch.nn.Module):
    def forward(self, boxes, gt):
        return torch_npu.npu_iou(boxes, gt) * 2


def get_model_and_inputs():
    return M(), (torch.rand(3, 4) * 10, torch.rand(2, 4) * 10)
"""


def test_an_operator_without_cpu_kernel_is_named_and_every_stage_recorded(copy: TorchNpuCopy, write_model):
    trace = trace_of(write_model(IOU_MODEL))
    assert trace.check.verdict == "not run: npu.npu_iou has no CPU kernel"
    assert set(trace.graphs[0].stages) == {"dynamo", "aten", "functional", "pre_ge"}
    assert "npu.npu_iou.default" in trace.graphs[0].stages["functional"].targets()
    # No converter, fxlab's or TorchAir's: no GE op is made up from the operator's name.
    assert [op.type for op in trace.graphs[0].ir.ops if op.fx_node == "npu_iou"] == ["FxlabUnsupported"]
    (failed,) = trace.graphs[0].conversion.not_converted
    assert failed["reason"].startswith("TorchAir has no converter for npu.npu_iou.default")
    assert trace.status == "partial"


ROTARY_MUL_MODEL = """
import torch
import torch_npu


class M(torch.nn.Module):
    def forward(self, x, c, s):
        return torch_npu.npu_rotary_mul(x, c, s) * 2


def get_model_and_inputs():
    return M(), (torch.randn(1, 2, 3, 8), torch.randn(1, 2, 1, 8), torch.randn(1, 2, 1, 8))
"""


def test_an_operator_torchair_converts_and_fxlab_does_not_is_never_given_a_made_up_ge_op(
    copy: TorchNpuCopy, write_model, monkeypatch: pytest.MonkeyPatch
):
    from fxlab.ir.kernels.npu_reference import CPU_KERNELS
    from fxlab.passes.converters.npu import NPU_CONVERTERS

    monkeypatch.delitem(NPU_CONVERTERS, "npu_rotary_mul.default")  # as if fxlab had no converter of it
    monkeypatch.delitem(CPU_KERNELS, "npu_rotary_mul")
    trace = trace_of(write_model(ROTARY_MUL_MODEL))
    assert trace.check.verdict == "not run: npu.npu_rotary_mul has no CPU kernel"
    assert [op.type for op in trace.graphs[0].ir.ops if op.fx_node == "npu_rotary_mul"] == ["FxlabUnsupported"]
    (failed,) = trace.graphs[0].conversion.not_converted
    assert failed["reason"].startswith("not converted by the built-in conversion; TorchAir converts it (ge_converter/custom/")
    assert trace.status == "partial"


def test_an_incomplete_copy_is_named_with_the_file_it_lacks(tmp_path: Path, no_copies: pytest.MonkeyPatch):
    root = tmp_path / "torch_npu"
    (root / "csrc" / "aten").mkdir(parents=True)
    (root / "csrc" / "aten" / "npu_native_functions_by_codegen.yaml").write_text("custom:\n")
    incomplete = TorchNpuCopy.in_package(root)
    assert not incomplete.complete and incomplete.missing == [str(root / META_FILE)]
    assert find_torch_npu_copy(root / "dynamo" / "torchair") == incomplete
    with torch_npu_definitions(incomplete) as defined:
        assert defined.defined == []
        assert defined.note == (
            f"torch_npu operators: none defined: the torch_npu copy in {root} lacks {root / META_FILE}; "
            "point --torchair-path / FXLAB_TORCHAIR_PATH at a complete copy or run `fxlab torchair fetch` again"
        )


def test_the_stand_ins_carry_torch_npus_own_dtypes():
    from fxlab.compat.native_standins.torch_npu_runtime import torch_npu_present
    from fxlab.ir.npu_dtypes import TORCH_NPU_DTYPES

    assert TORCH_NPU_DTYPES["float4_e2m1fn_x2"] == 296 and TORCH_NPU_DTYPES["hifloat8"] == 290
    assert TORCH_NPU_DTYPES["float8_e8m0fnu"] == 293 and TORCH_NPU_DTYPES["int4"] == 285
    import sys

    with torch_npu_present():
        module = sys.modules["torch_npu"]
        assert all(getattr(module, name) == value for name, value in TORCH_NPU_DTYPES.items())


def test_an_error_inside_a_cpu_reference_kernel_is_fxlabs_fault_naming_the_kernel(copy: TorchNpuCopy, monkeypatch: pytest.MonkeyPatch):
    from fxlab.ir.kernels import npu_norm_reference
    from fxlab.ir.kernels.registry import KernelFault

    def broken(x, gamma, epsilon):
        raise RuntimeError("The size of tensor a (8) must match the size of tensor b (0) at non-singleton dimension 1")

    monkeypatch.setattr(npu_norm_reference, "normalised", broken)
    with torch_npu_definitions(copy):
        with pytest.raises(KernelFault) as raised:
            torch.ops.npu.npu_rms_norm(torch.randn(2, 8), torch.ones(8))
    fault = raised.value
    assert fault.op == "npu.npu_rms_norm"
    line = npu_norm_reference.rms_norm.__code__.co_firstlineno + 3  # the line of rms_norm that calls normalised
    assert fault.detail == (
        "RuntimeError: The size of tensor a (8) must match the size of tensor b (0) at non-singleton dimension 1 "
        f"(at fxlab/ir/kernels/npu_norm_reference.py:{line})"
    )
    assert fault.reason().endswith("this is fxlab's fault, not the model's (torch_npu's own kernel computes the call on an NPU): please report it")
