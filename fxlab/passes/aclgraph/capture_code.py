"""The Python module TorchAir generates to capture and replay a graph as an ACL graph (its
fx2acl code generation), for the ``aclgraph`` stage's final graph.

The module has: the graph's ``forward`` (its FX code, one statement per line, with event
records and waits, stream switches and stream core-limit calls written as the
``torch.npu`` calls they are at capture time); the compile options and the
``AclGraphCacheInfo`` the runtime loads; the helpers that create the tagged events and
user streams; ``kernel(*args)``, which checks the input sizes and strides on its first call
and then runs the ACL graph; and ``main()``, which calls it on random inputs of the traced
shapes. It needs torch_npu and an NPU to run: fxlab saves it to read (``aclgraph_capture.py``).
"""

from __future__ import annotations

import re
from typing import Any

import sympy
import torch
import torch.fx as fx

from fxlab import npu_streams
from fxlab.passes.aclgraph.capture_info import STATIC_INPUT, CaptureInfo
from fxlab.passes.aclgraph.replace_dynamic_workspace_ops import read_outside_updates, replay_updates
from fxlab.passes.aclgraph.sym_shapes import is_sym
from fxlab.passes.torchair_options import NPUGRAPH_EX, TorchAirOptions

# The options TorchAir's normalize_config gives the runtime by default (values as strings).
_TORCHAIR_CONFIGS = {
    "disable_mempool_reuse_in_same_fx": "0",
    "enable_output_clone": "0",
    "static_capture_size_limit": "64",
    "clone_input": "1",
    "run_eagerly": "0",
    "deadlock_check": "0",
    "remove_noop_ops": "1",
    "pattern_fusion_pass": "1",
    "frozen_parameter": "0",
}
# npugraph_ex's own CompilerConfig.as_dict defaults (booleans stay booleans).
_NPUGRAPH_EX_CONFIGS: dict[str, Any] = {
    "force_eager": False,
    "reuse_graph_pool_in_same_fx": True,
    "clone_output": False,
    "capture_limit": 64,
    "clone_input": True,
    "deadlock_check": False,
    "capture_error_mode": "global",
    "force_recapture": False,
    "unsafe_skip_npugraph_capture_validation": False,
    "remove_noop_ops": True,
    "pattern_fusion_pass": True,
    "frozen_parameter": False,
}
_HEAD = """import threading
from collections import OrderedDict

import torch
from torch._dynamo.testing import rand_strided

import torch_npu
from {package}._acl_concrete_graph.acl_graph import AclGraph, AclGraphCacheInfo
from {package}._acl_concrete_graph.acl_graph_cache_utils import SerializableGraphModule
from {package}.ops._tagged_event import _npu_create_tagged_event

assert_size_stride = torch._C._dynamo.guards.assert_size_stride

from torch._dynamo.guards import _get_closure_vars
globals().update(_get_closure_vars())
globals().update({{"nan": float("nan")}})
"""


def read_inputs(gm: fx.GraphModule, info: CaptureInfo) -> None:
    """What TorchAir's converter walk records about the graph inputs and outputs."""
    read = read_outside_updates(gm)
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        value = node.meta.get("val")
        index = len(info.meta_inputs)
        info.meta_inputs.append(value)
        info.read_inputs.append(node in read)
        info.input_names.append(str(node.target))
        if isinstance(value, torch.Tensor):
            static = (
                node.meta.get(STATIC_INPUT, False)
                or hasattr(value, "_dynamo_static_input_type")
                or hasattr(value, "_torchair_is_parameter")
                or isinstance(value, torch.nn.Parameter)
            )
            if static:
                info.parameter_inputs.append(index)
            else:
                info.user_inputs.setdefault(str(node.target), index)
    _outputs_aliasing_inputs(gm, info)
    info.ops_update_rulers, info.updated_ops_param = replay_updates(gm)


def _outputs_aliasing_inputs(gm: fx.GraphModule, info: CaptureInfo) -> None:
    inputs = {i: v for i, v in enumerate(info.meta_inputs) if isinstance(v, torch.Tensor)}
    output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    values = output.args[0] if isinstance(output.args[0], (list, tuple)) else [output.args[0]]
    for position, value in enumerate(values):
        meta = value.meta.get("val") if isinstance(value, fx.Node) else None
        if not isinstance(meta, torch.Tensor):
            continue
        for index, tensor in inputs.items():
            if torch._C._is_alias_of(tensor, meta):  # type: ignore[attr-defined]
                info.userinput_ref_with_output.setdefault(index, []).append(position)


def capture_code(gm: fx.GraphModule, info: CaptureInfo, options: TorchAirOptions) -> str:
    package = "npugraph_ex" if options.mode == NPUGRAPH_EX else "torchair"
    parts = [_HEAD.format(package=package), *_constants(gm), _forward(gm, info, package), _init(info, options)]
    if info.user_stream_labels:
        parts.append(_stream_dict())
    if info.tagged_event_names:
        parts.append(_event_dict(package))
    parts.append(_kernel(info))
    parts.append(_main(info))
    return "\n".join(parts)


def _constants(gm: fx.GraphModule) -> list[str]:
    """TorchAir embeds the pickled graph module to read its tensor constants from; the
    saved file names them and leaves the bytes out."""
    constants = {n.name: n.target for n in gm.graph.nodes if n.op == "get_attr" and "_constant" in n.name}
    if not constants:
        return []
    lines = [
        "serialized_gm = ...  # the graph module, pickled by TorchAir (left out of this file)",
        "rebuild_gm = SerializableGraphModule.rebuild_from_bytes(serialized_gm)",
        "fx_graph = rebuild_gm._artifact",
        "",
        "tensor_constants = {}",
        "with torch._C._DisableTorchDispatch():",
    ]
    lines += [f"    tensor_constants['{name}'] = getattr(fx_graph, '{target}')" for name, target in constants.items()]
    return ["\n".join(lines) + "\n"]


def _forward_body(gm: fx.GraphModule) -> list[str]:
    match = re.search(r"def forward\(self[^)]*\):", gm.code)
    if match is None:
        raise ValueError("the graph's code has no forward")
    return gm.code[match.end() :].splitlines()


def _rewrites(gm: fx.GraphModule, info: CaptureInfo) -> dict[str, list[str]]:
    """Statement prefix -> the lines TorchAir writes instead."""
    # npugraph_ex's code writes TorchAir's own events (torchair.ops.record / wait, air::)
    # as it writes its own.
    namespaces = {info.namespace, "air"}
    out: dict[str, list[str]] = {}
    for node in gm.graph.nodes:
        target = str(node.target)
        ns = target.split(".", 1)[0]
        if ns in namespaces and target == f"{ns}.record.default":
            out[f"{node.name} = torch.ops.{target}"] = [
                f"event_{node.name} = torch.npu.Event()",
                f"event_{node.name}.record(torch.npu.current_stream())",
            ]
        elif ns in namespaces and target == f"{ns}.wait.default":
            out[f"{node.name} = torch.ops.{target}"] = [f"event_{w.name}.wait(torch.npu.current_stream())" for w in node.args[0]]
        elif node.op == "call_function" and callable(node.target):
            call = _npu_call(node)
            if call is not None:
                out[f"{node.name} = {call[0]}"] = [f"{node.name} = {call[1]}"]
    return out


def _npu_call(node: fx.Node) -> tuple[str, str] | None:
    """The FX name of a stream call and how TorchAir writes it (``torch.npu.*``)."""
    known: dict[Any, tuple[str, str]] = {
        npu_streams.current_stream: ("torch_npu_npu_utils_current_stream", "torch.npu.current_stream()"),
        npu_streams.get_stream_limit: ("torch_npu_npu_npu_config_get_stream_limit", f"torch.npu.get_stream_limit(*{node.args})"),
        npu_streams.set_stream_limit: ("torch_npu_npu_npu_config_set_stream_limit", f"torch.npu.set_stream_limit(*{node.args})"),
        npu_streams.get_deterministic_level: ("torch_npu_npu__get_deterministic_level", "torch_npu.npu._get_deterministic_level()"),
        npu_streams.set_deterministic_level: (
            "torch_npu_npu_set_deterministic_level",
            f"torch_npu.npu.set_deterministic_level(*{node.args})",
        ),
    }
    return known.get(node.target)


def _forward(gm: fx.GraphModule, info: CaptureInfo, package: str) -> str:
    lines = ["def forward(*args, node_info=[], is_capturing: bool = False):"]
    indent = 1
    names = ", ".join(info.input_names) + ("," if len(info.input_names) == 1 else "")
    if info.input_names:
        lines.append("    " + f"{names} = args")
    updated = _updated_ops_code(gm, info)
    if updated:
        lines += [
            f"    from {package}._acl_concrete_graph.utils import reconstruct_args_kwargs",
            f"    from {package}._acl_concrete_graph.acl_graph import UpdatedNodeInfo",
        ]
    if info.user_stream_labels:
        lines.append("    global _GLOBAL_USER_TAG_TO_STREAM")
    rewrites = _rewrites(gm, info)
    enters, exits = dict(info.stream_enter_nodes), list(info.stream_exit_nodes)
    constants = [n.name for n in gm.graph.nodes if n.op == "get_attr" and "_constant" in n.name]
    for raw in _forward_body(gm):
        line = raw.strip()
        update = next((code for key, code in updated.items() if key in line), None)
        if update is not None:  # the call, then what the line frees after it
            lines += ["    " * indent + code if code else "" for code in [*update, line.partition(";")[2].strip()]]
            continue
        replaced = next((new for key, new in rewrites.items() if key in line), None)
        constant = next((c for c in constants if f"{c} = self" in line), None)
        enter = next((k for k in enters if f"{k} = " in line), None)
        exit_ = next((k for k in exits if f"{k} = " in line), None)
        if replaced is not None:
            lines.extend("    " * indent + r for r in replaced)
        elif constant is not None:
            lines.append("    " * indent + f"{constant} = tensor_constants['{constant}']")
        elif enter is not None:
            lines += [
                "    " * indent + line,
                "    " * indent + f"with torch.npu.stream(_GLOBAL_USER_TAG_TO_STREAM['{enters.pop(enter)}']):",
            ]
            indent += 1
        elif exit_ is not None:
            lines.append("    " * indent + line)
            exits.remove(exit_)
            indent -= 1
        else:
            lines.append("    " * indent + line if line else "")
    return "\n".join(lines) + "\n"


def _updated_ops_code(gm: fx.GraphModule, info: CaptureInfo) -> dict[str, list[str]]:
    """TorchAir's ``_codegen_fx_forward_updated_ops``: each op the replay updates runs in a
    task group of its own while the graph is captured, and is noted (``UpdatedNodeInfo``)
    for the replay to update its lengths; by statement prefix, the lines written instead."""
    params = info.updated_ops_param
    out: dict[str, list[str]] = {}
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.name not in params:
            continue
        name, call = node.name, f"torch.ops.{node.target}"
        out[f"{name} = {call}"] = [
            "",
            "if is_capturing:",
            f"    external_event_{name} = torch.npu.ExternalEvent()",
            f"    capture_stream_{name} = torch.npu.current_stream()",
            f"    external_event_{name}.wait(capture_stream_{name})",
            f"    external_event_{name}.reset(capture_stream_{name})",
            f"    torch.npu.graph_task_group_begin(capture_stream_{name})",
            "",
            f"{name} = {call}(*{node.args}, **{node.kwargs})",
            "",
            "if is_capturing:",
            f"    handle_{name} = torch.npu.graph_task_group_end(capture_stream_{name})",
            f"    node_args, node_kwargs = reconstruct_args_kwargs({node.args}, {node.kwargs})",
            "    node_info.append(UpdatedNodeInfo(",
            f'        node_name="{name}",',
            f"        updated_func={call},",
            f"        updated_param_name={params[name]},",
            f"        updated_param_index={params[f'arg_index_{name}']},",
            "        args=node_args,",
            "        kwargs=node_kwargs,",
            f"        handle=handle_{name},",
            f"        event=external_event_{name},",
            "        core=torch.npu.get_stream_limit(torch.npu.current_stream()))",
            "    )",
        ]
    return out


def _configs(options: TorchAirOptions) -> list[str]:
    if options.mode == NPUGRAPH_EX:
        values: dict[str, Any] = {
            **_NPUGRAPH_EX_CONFIGS,
            "remove_noop_ops": options.remove_noop_ops,
            "pattern_fusion_pass": options.pattern_fusion_pass,
        }
        return [f'compile_configs["{k}"] = {v}' if isinstance(v, bool) else f'compile_configs["{k}"] = "{v}"' for k, v in values.items()]
    strings = {
        **_TORCHAIR_CONFIGS,
        "remove_noop_ops": str(int(options.remove_noop_ops)),
        "pattern_fusion_pass": str(int(options.pattern_fusion_pass)),
    }
    return [f'compile_configs["{k}"] = "{v}"' for k, v in strings.items()]


def _init(info: CaptureInfo, options: TorchAirOptions) -> str:
    user_inputs = "OrderedDict(" + repr(list(info.user_inputs.items())) + ")" if info.user_inputs else "OrderedDict()"
    labels = "{" + ", ".join(repr(x) for x in info.user_stream_labels) + "}" if info.user_stream_labels else "set()"
    cache_info = [
        "pool=None",
        "stream=torch.npu.Stream()",
        'capture_error_mode="global"',
        "num_warmup_iters=0",
        f'fx_graph_name="{info.graph_name}"',
        f"user_inputs_mapping={user_inputs}",
        f"unupdated_sym_input_index={_unupdated_symbols(info)}",
        f"updated_ops_param={info.updated_ops_param}",
        f"ops_update_rulers={info.ops_update_rulers}",
        f"mutated_user_inputs={info.mutated_user_inputs}",
        f"tagged_event_names={info.tagged_event_names}",
        f"parameter_user_inputs={info.parameter_inputs}",
        f"user_stream_label={labels}",
        f"user_stream_info={info.user_stream_info}",
        f"userinput_ref_with_output={info.userinput_ref_with_output}",
    ]
    return "\n".join(
        ["", "compile_configs = {}", *_configs(options), "", "acl_graph = AclGraph(fx_forward=forward, config=compile_configs)", ""]
        + ["aclgraph_cache_info = AclGraphCacheInfo("]
        + [f"    {item}," for item in cache_info[:-1]]
        + [f"    {cache_info[-1]}", ")", "acl_graph.load(aclgraph_cache_info)", ""]
    )


def _unupdated_symbols(info: CaptureInfo) -> list[tuple[int, bool]]:
    """The symbols a replay cannot update, which key the captured graphs, as TorchAir's
    ``get_unupdated_sym_input_index`` lists them: for each input the graph reads other than
    as a length the replay updates (:func:`read_outside_updates`), a symbolic input is
    ``(its index, True)``; a tensor's symbolic size is the input that passes that symbol
    (the last one, when several do), ``(index, True)``, else ``(the tensor's index,
    False)``. An input nothing reads (Dynamo passes a size twice, or a size it fixed) is
    not listed."""
    by_symbol = {v.node.expr: i for i, v in enumerate(info.meta_inputs) if is_sym(v)}
    found: set[tuple[int, bool]] = set()
    for index, (value, read) in enumerate(zip(info.meta_inputs, info.read_inputs)):
        if not read:
            continue
        if is_sym(value):
            found.add((index, True))
        elif isinstance(value, torch.Tensor):
            for size in value.size():
                if isinstance(size, torch.SymInt):
                    source = by_symbol.get(size.node.expr)
                    found.add((source, True) if source is not None else (index, False))
    return sorted(found)


def _stream_dict() -> str:
    return """_GLOBAL_USER_TAG_TO_STREAM = {}
_GLOBAL_USER_TAGGED_STREAM_LOCK = threading.Lock()

def _update_user_stream_label_dict():
    if aclgraph_cache_info.user_stream_label:
        torch.npu.Stream() # init stream pool
    with _GLOBAL_USER_TAGGED_STREAM_LOCK:
        for i, tag in enumerate(aclgraph_cache_info.user_stream_label):
            if tag in aclgraph_cache_info.user_stream_info:
                stream_info = aclgraph_cache_info.user_stream_info[tag]
                stream = torch.npu.Stream(stream_id=stream_info["stream_id"],
                                          device_index=stream_info["device_index"],
                                          device_type=stream_info["device_type"])
            else:
                stream = torch.npu.Stream()
            _GLOBAL_USER_TAG_TO_STREAM[tag] = stream
"""


def _event_dict(package: str) -> str:
    return f"""def _update_tagged_event_dict():
    from {package}._acl_concrete_graph.graph_pass import _GLOBAL_SCOPE_TAG_TO_EVENT, _GLOBAL_EVENT_LOCK
    with _GLOBAL_EVENT_LOCK:
        for i, tag in enumerate(aclgraph_cache_info.tagged_event_names):
            tagged_event = torch.npu.Event()
            _GLOBAL_SCOPE_TAG_TO_EVENT[tag] = tagged_event
"""


def _sym_inputs(info: CaptureInfo) -> dict[Any, int]:
    """TorchAir's ``_all_sym_input_idx``: each symbolic input's expression and the last
    input that holds it, in the order the expressions first appear."""
    found: dict[Any, int] = {}
    for index, meta in enumerate(info.meta_inputs):
        if is_sym(meta):
            found[meta.node.expr] = index
    return found


def _tensor_inputs(info: CaptureInfo) -> list[tuple[int, torch.Tensor]]:
    return [(index, meta) for index, meta in enumerate(info.meta_inputs) if not is_sym(meta) and isinstance(meta, torch.Tensor)]


def _kernel(info: CaptureInfo) -> str:
    first_run = ["        _is_first_run = False", ""]
    if info.tagged_event_names:
        first_run += ["        _update_tagged_event_dict()", ""]
    if info.user_stream_labels:
        first_run += ["        _update_user_stream_label_dict()", ""]
    symbols = _sym_inputs(info)
    if symbols and info.input_names:  # the sizes the assertions name, read from the arguments
        names = ", ".join(info.input_names) + ("," if len(info.input_names) == 1 else "")
        first_run.append(f"        {names} = args")
        first_run += [f"        {expr} = {info.input_names[i]}" for expr, i in symbols.items() if isinstance(expr, sympy.Symbol)]
    for index, meta in _tensor_inputs(info):
        if meta.numel() != 0:
            first_run.append(f"        assert_size_stride(args[{index}], {tuple(meta.shape)}, {meta.stride()})")
    body = ["", "_is_first_run = True", "def kernel(*args, **kwargs):", "", "    global _is_first_run", "    if _is_first_run:"]
    return "\n".join(body + first_run + ["    return acl_graph(*args, **kwargs)", ""])


def _main(info: CaptureInfo) -> str:
    """Example inputs as TorchAir writes them: each symbol given 2 + its input's index,
    then every tensor input."""
    lines = ["def main():"]
    for expr, index in _sym_inputs(info).items():
        if isinstance(expr, sympy.Symbol):
            lines += [f"    {info.input_names[index]} = {2 + index}", f"    {expr} = {info.input_names[index]}"]
        else:
            lines.append(f"    {info.input_names[index]} = {expr}")
    for index, meta in _tensor_inputs(info):
        lines.append(
            f"    {info.input_names[index]} = rand_strided({tuple(meta.shape)},{meta.stride()},device ='npu:0',dtype ={meta.dtype})"
        )
    lines.append(f"    return kernel({', '.join(info.input_names)})")
    return "\n".join(lines) + "\n"
