"""The ``aten`` stage, recorded from aot_autograd's own trace instead of a second one.

aot_autograd runs the Dynamo graph under functionalization (``FunctionalTensorMode``). A
dispatch mode pushed *above* that mode sees every ATen op before functionalization
rewrites it: the in-place ``add_``, ``copy_`` and custom ``(a!)`` ops, in order, on the
tensors the user's code produced — the graph a separate ``make_fx`` trace of the Dynamo
graph records, for the price of one Python call per op instead of a whole fake-tensor
trace. Two call nodes spliced into the Dynamo graph for the duration of
``aot_module_simplified`` start and stop the recording (aot runs the graph with an
``fx.Interpreter``, which calls them like any other node); they are removed before the
graph is used again.

Nodes are created by an FX tracer while aot's interpreter holds the Dynamo node's meta,
so provenance (``stack_trace``, ``nn_module_stack``, ``from_node``) is copied exactly as
``make_fx`` copies it, and node names follow ``make_fx``'s scheme (``arg0_1``, ``add_``,
``slice_1``, ``getitem``).

The recorder only models what it can reproduce exactly: static shapes and tensors it has
seen produced (or plain constant tensors). Anything else — symbolic sizes, an unknown
tensor, an op it cannot map — aborts the recording with a reason, and the caller traces
the stage with ``make_fx`` as before (:func:`fxlab.capture.stages.aten_stage`).
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Iterator, Sequence
from typing import Any

import torch
import torch.fx as fx
from torch._subclasses.fake_tensor import FakeTensor
from torch.utils._python_dispatch import TorchDispatchMode, _pop_mode, _push_mode

from fxlab.passes.graph_copy import create_node_args_after, lazy_graph_module_class


class RecordingAborted(Exception):
    """The op stream holds something the recorder does not reproduce exactly."""


class _Recording:
    """One run of the Dynamo graph, turned into an ATen FX graph."""

    def __init__(self, inputs: Sequence[Any]) -> None:
        self.graph = fx.Graph()
        self.tracer = fx.proxy.GraphAppendingTracer(self.graph)
        # id -> (tensor, node); the tensor is kept alive so its id is never reused.
        self.producers: dict[int, tuple[torch.Tensor, fx.Node]] = {}
        self.outputs: list[tuple[fx.Node, tuple[Any, ...]]] = []
        self.constants: dict[str, torch.Tensor] = {}
        for index, value in enumerate(inputs):
            node = self.graph.placeholder(f"arg{index}_1")
            self._produced(value, node)

    # -- values ---------------------------------------------------------------------
    def _produced(self, value: Any, node: fx.Node) -> None:
        if isinstance(value, torch.Tensor):
            self.producers[id(value)] = (value, node)
            self.outputs.append((node, _tensor_signature(value)))
        elif isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            raise RecordingAborted("symbolic scalar value")

    def _argument(self, value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            entry = self.producers.get(id(value))
            if entry is not None and entry[0] is value:
                return entry[1]
            return self._constant(value)
        if isinstance(value, (list, tuple)):
            mapped = [self._argument(v) for v in value]
            return type(value)(mapped) if isinstance(value, tuple) else mapped
        if isinstance(value, dict):
            return {k: self._argument(v) for k, v in value.items()}
        if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            raise RecordingAborted("symbolic scalar argument")
        return value

    def _constant(self, value: torch.Tensor) -> fx.Node:
        """A tensor the graph did not produce: a plain constant becomes ``get_attr``
        (``_tensor_constant<k>``, as make_fx names it); anything wrapped is unknown."""
        if type(value) is not torch.Tensor:
            raise RecordingAborted(f"a {type(value).__name__} the recording did not see produced")
        name = f"_tensor_constant{len(self.constants)}"
        self.constants[name] = value
        node = self.tracer.create_node("get_attr", name, (), {})
        self._produced(value, node)
        return node

    # -- ops ------------------------------------------------------------------------
    def op(self, func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
        node_args = self._argument(args)
        node_kwargs = self._argument(kwargs)
        name = self.graph._target_to_str(func.overloadpacket.__name__)
        node = self._call_node(func, node_args, node_kwargs, name)
        node.meta["original_aten"] = func
        if isinstance(out, (list, tuple)):
            self.outputs.append((node, (type(out), [_tensor_signature(v) if isinstance(v, torch.Tensor) else None for v in out])))
            for index, item in enumerate(out):
                item_node = self._call_node(operator.getitem, (node, index), {}, None)
                item_node.meta["original_aten"] = func
                self._produced(item, item_node)
        else:
            self._produced(out, node)

    def _call_node(self, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any], name: str | None) -> fx.Node:
        # The recording holds no symbolic values: it aborts on symbolic shapes.
        return create_node_args_after(self.tracer.create_node, "call_function", target, args, kwargs, name)

    def finish(self, result: Any) -> fx.GraphModule:
        self.graph.output(self._argument(result))
        root = torch.nn.Module()
        for name, value in self.constants.items():
            setattr(root, name, value)
        return lazy_graph_module_class()(root, self.graph)


def _tensor_signature(value: torch.Tensor) -> tuple[Any, ...]:
    """What ``meta["val"]`` must show of a tensor, read while it is alive: its
    functionalized value may change later (in-place ops), its metadata here does not."""
    shape, stride = tuple(value.shape), value.stride()
    if not all(type(d) is int for d in shape) or not all(type(s) is int for s in stride):
        raise RecordingAborted("symbolic shape")
    return (shape, stride, value.dtype, value.device, value.storage_offset())


def _attach_values(outputs: list[tuple[fx.Node, tuple[Any, ...]]], fake_mode: Any) -> None:
    """``meta["val"]``: a fake tensor of the graph's fake mode with each value's shape,
    strides and dtype, made once aot is done (tensors created while aot traces would be
    functionalized and traced). Each wraps a meta tensor directly: creating it through
    the fake mode's dispatch costs ten times more and gives the same tensor."""
    with torch.utils._python_dispatch._disable_current_modes():
        for node, signature in outputs:
            if len(signature) == 2:  # a list or tuple of values
                kind, items = signature
                node.meta["val"] = kind(_fake_value(item, fake_mode) for item in items)
            else:
                node.meta["val"] = _fake_value(signature, fake_mode)


def _fake_value(signature: tuple[Any, ...] | None, fake_mode: Any) -> Any:
    if signature is None:
        return None
    shape, stride, dtype, device, _offset = signature
    meta = torch.empty_strided(shape, stride, dtype=dtype, device="meta")
    return FakeTensor(fake_mode, meta, device)


class _PreFunctionalMode(TorchDispatchMode):
    """Sees each op before the functionalization mode below it, and records it."""

    def __init__(self, recording: _Recording) -> None:
        super().__init__()
        self.recording = recording
        self.aborted: str | None = None

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if self.aborted is None:
            try:
                self.recording.op(func, args, kwargs, out)
            except RecordingAborted as exc:
                self.aborted = str(exc)
            except Exception as exc:  # noqa: BLE001 - recording must never break aot's trace
                self.aborted = f"{type(exc).__name__}: {exc}"
        return out


def _higher_order_ops(gm: fx.GraphModule) -> list[str]:
    """The higher-order operators (``torch.cond``, ``torch.utils.checkpoint`` ...) the Dynamo graph calls."""
    found = {node.target.name() for node in gm.graph.nodes if isinstance(node.target, torch._ops.HigherOrderOperator)}
    return sorted(found)


class AtenRecorder:
    """Records the ``aten`` stage of ``gm`` while aot_autograd traces it.

    Use :meth:`installed` around ``aot_module_simplified(gm, ...)``; afterwards
    :attr:`graph_module` is the stage, or ``None`` with :attr:`reason` saying why.
    Only the first complete run of the graph is recorded (aot runs it more than once:
    the op stream is the same each time).
    """

    def __init__(self, gm: fx.GraphModule, fake_mode: Any) -> None:
        self.gm = gm
        self.fake_mode = fake_mode
        self.graph_module: fx.GraphModule | None = None
        self.reason: str | None = (
            "aot_autograd did not run the graph where the recorder listens" if fake_mode is not None else "no fake mode"
        )
        self._mode: _PreFunctionalMode | None = None
        self._values: list[tuple[fx.Node, tuple[Any, ...]]] = []

    @contextlib.contextmanager
    def installed(self) -> Iterator[AtenRecorder]:
        higher_order = _higher_order_ops(self.gm)
        if higher_order:  # each dispatches to a mode only by a rule of its own, which this mode has not
            self.reason = f"a higher-order operator ({', '.join(higher_order)})"
            self.fake_mode = None
        if self.fake_mode is None:
            yield self
            return
        graph = self.gm.graph
        nodes = list(graph.nodes)
        placeholders = [n for n in nodes if n.op == "placeholder"]
        output = nodes[-1]
        with graph.inserting_after(placeholders[-1] if placeholders else None):
            start = graph.call_function(self._start, tuple(placeholders))
        with graph.inserting_before(output):
            stop = graph.call_function(self._stop, (output.args[0],))
        try:
            yield self
        finally:
            self._abandon()
            graph.erase_node(stop)
            graph.erase_node(start)
        if self.graph_module is not None:
            _attach_values(self._values, self.fake_mode)

    def _start(self, *inputs: Any) -> None:
        if self.graph_module is not None or self._mode is not None or self.fake_mode is None:
            return
        try:
            recording = _Recording(inputs)
        except RecordingAborted as exc:
            self.reason = str(exc)
            return
        self._mode = _PreFunctionalMode(recording)
        _push_mode(self._mode)

    def _stop(self, result: Any) -> None:
        mode = self._mode
        if mode is None:
            return
        self._pop()
        if mode.aborted is not None:
            self.reason = mode.aborted
            self.fake_mode = None  # do not try again on aot's next run
            return
        try:
            self.graph_module = mode.recording.finish(result)
            self._values = mode.recording.outputs
            self.reason = None
        except RecordingAborted as exc:
            self.reason = str(exc)
            self.fake_mode = None

    def _pop(self) -> None:
        popped = _pop_mode()
        if popped is not self._mode:  # never leave another mode off the stack
            _push_mode(popped)
            raise RuntimeError("the ATen recorder's dispatch mode is not on top of the mode stack")
        self._mode = None

    def _abandon(self) -> None:
        """aot raised between start and stop: take the mode off the stack."""
        if self._mode is not None:
            with contextlib.suppress(Exception):
                self._pop()
            self.reason = "aot_autograd did not finish"
