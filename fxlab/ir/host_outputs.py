"""Which FX graph outputs a GE graph produces, and which TorchAir makes on the host.

TorchAir's ``NetOutput`` does not carry every output of the FX graph it converts:

- an output that is a view or alias of a graph input (a ``view``, ``permute``, ``select``,
  an input returned as it is, an in-place op's result) is re-made at run time on the
  host from the input, with ``torch.as_strided`` at the output's size, stride and
  storage offset (``torch.view_as_real`` / ``view_as_complex`` when the dtype's kind
  changes). The GE ops converted for it stay in the graph, read by nothing;
- a symbolic size (``sym_size`` of a dynamic dim) is evaluated on the host from the
  symbolic graph inputs;
- a value that is no GE tensor (``None``, a size known at trace time) is returned as
  it is;
- the same GE tensor returned twice is one ``NetOutput`` input, handed out twice.

:class:`FxOutput` says, for one FX output, where its value comes from. A graph whose
outputs are not simply its ``NetOutput`` inputs in order records the list as the graph
attr ``_fxlab_fx_outputs`` (JSON), so dumps keep it; :func:`rebuild_fx_outputs` makes
the FX outputs from a run of the GE graph as TorchAir does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import sympy
import torch
from torch.utils._sympy import functions as torch_sympy_functions

from fxlab.ir.model import Attr, AttrKind, IrGraph

FX_OUTPUTS_ATTR = "_fxlab_fx_outputs"

GE, VIEW, SYM, VALUE = "ge", "view", "sym", "value"
AS_STRIDED, VIEW_AS_REAL, VIEW_AS_COMPLEX = "as_strided", "view_as_real", "view_as_complex"


@dataclass(frozen=True)
class FxOutput:
    """Where one FX graph output comes from.

    ``kind`` is ``ge`` (``NetOutput`` input ``ge_index``), ``view`` (graph input
    ``input_index``, the ``Data`` index, re-made by ``view_fn`` at ``size`` / ``stride``
    / ``offset``), ``sym`` (``expr`` evaluated with ``symbols``: symbol -> ``Data`` index
    of the symbolic input holding it) or ``value`` (``value`` itself, ``expr`` its repr).
    ``ge_value`` names the GE tensor (``op:index``) the converter made for a view or a
    size: in the graph, read by nothing, but still what the converter computes.
    """

    kind: str
    fx_node: str = ""
    ge_index: int | None = None
    input_index: int | None = None
    view_fn: str = AS_STRIDED
    size: tuple[Any, ...] = ()
    stride: tuple[Any, ...] = ()
    offset: Any = 0
    expr: str = ""
    symbols: dict[str, int] = field(default_factory=dict)
    value: Any = None
    ge_value: str = ""

    @property
    def on_host(self) -> bool:
        return self.kind != GE

    def describe(self, position: int) -> str:
        """One sentence: how TorchAir produces FX output ``position``."""
        where = f"output {position}" + (f" ({self.fx_node})" if self.fx_node else "")
        if self.kind == GE:
            return f"{where}: NetOutput input {self.ge_index}"
        if self.kind == VIEW:
            how = (
                f"torch.{self.view_fn}(input {self.input_index})"
                if self.view_fn != AS_STRIDED
                else (f"torch.as_strided(input {self.input_index}, {_dims(self.size)}, {_dims(self.stride)}, {self.offset})")
            )
            return f"{where}: a view of graph input {self.input_index}, not a GE output; re-made on the host after the run as {how}"
        if self.kind == SYM:
            return f"{where}: the symbolic size {self.expr}, not a GE output; evaluated on the host from the symbolic inputs"
        return f"{where}: the value {self.expr}, not a GE output; returned as it is"

    def to_json(self) -> dict[str, Any]:
        """The fields that differ from their defaults (a view keeps its offset)."""
        defaults = asdict(FxOutput(self.kind))
        return {k: v for k, v in asdict(self).items() if k == "kind" or v != defaults[k] or (k == "offset" and self.kind == VIEW)}

    @classmethod
    def plain(cls, fx_node: str, value: Any) -> FxOutput:
        """An output that is no GE tensor: ``value`` itself (kept in JSON dumps when JSON
        can hold it as it is, else only its repr)."""
        kept = value if value is None or isinstance(value, (bool, int, float, str)) else None
        return cls(VALUE, fx_node, expr=repr(value), value=kept)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FxOutput:
        values = dict(data)
        for key in ("size", "stride"):
            if key in values:
                values[key] = tuple(values[key])
        return cls(**values)


def dim_text(dim: Any) -> int | str:
    """A size, stride or offset as recorded: an int, or a symbolic one's expression."""
    if isinstance(dim, int):
        return dim
    node = getattr(dim, "node", None)  # a torch.SymInt: its sympy expression
    return str(node.expr) if node is not None else str(dim)


def _dims(dims: Sequence[Any]) -> str:
    return "[" + ", ".join(map(str, dims)) + "]"


def is_plain(outputs: Sequence[FxOutput]) -> bool:
    """The FX outputs are the ``NetOutput`` inputs, one each, in order."""
    return all(o.kind == GE and o.ge_index == i for i, o in enumerate(outputs))


def record_fx_outputs(graph: IrGraph, outputs: Sequence[FxOutput]) -> None:
    """Keep ``outputs`` on ``graph`` (only when they are not plain: see :func:`is_plain`)."""
    if is_plain(outputs):
        graph.attrs.pop(FX_OUTPUTS_ATTR, None)
        return
    graph.attrs[FX_OUTPUTS_ATTR] = Attr(AttrKind.STR, json.dumps([o.to_json() for o in outputs]))


def fx_outputs_of(graph: IrGraph) -> list[FxOutput] | None:
    """The recorded FX outputs of ``graph``; ``None`` when they are its ``NetOutput``
    inputs in order (nothing recorded)."""
    attr = graph.attrs.get(FX_OUTPUTS_ATTR)
    if attr is None:
        return None
    return [FxOutput.from_json(item) for item in json.loads(attr.value)]


def host_output_notes(graph: IrGraph) -> list[str]:
    """One sentence per FX output that is not a ``NetOutput`` input of its own."""
    outputs = fx_outputs_of(graph) or []
    seen: set[int] = set()
    notes = []
    for position, out in enumerate(outputs):
        if out.on_host:
            notes.append(out.describe(position))
        elif out.ge_index in seen:
            notes.append(f"{out.describe(position)}, returned again (TorchAir hands out one GE output for a value returned twice)")
        seen.add(out.ge_index)  # type: ignore[arg-type]
    return notes


def rebuild_fx_outputs(graph: IrGraph, inputs: Sequence[Any], ge_outputs: Sequence[Any]) -> list[Any]:
    """The FX graph's outputs from one run of ``graph``: ``inputs`` in ``Data`` index
    order as they are after the run (TorchAir re-makes views after the GE run), and the
    run's ``NetOutput`` values. Without a record, the ``NetOutput`` values themselves."""
    outputs = fx_outputs_of(graph)
    if outputs is None:
        return list(ge_outputs)
    symbols = _symbol_values(outputs, inputs)
    return [_value_of(out, inputs, ge_outputs, symbols) for out in outputs]


def converted_values(graph: IrGraph, values: dict[str, Any]) -> dict[int, Any]:
    """For each FX output made on the host whose converter made a GE tensor, that
    tensor's value in a run of ``graph`` (``values``: every tensor of the run by
    ``op:index``, as :func:`fxlab.ir.execute.execute` fills it), by output position.
    The host makes the output TorchAir returns; this is what the converter computed,
    so a check of both loses none of the converters' coverage. A GE tensor a later
    pass removed (an ``Assign`` mapped to a graph output) is left out."""
    return {
        position: values[out.ge_value] for position, out in enumerate(fx_outputs_of(graph) or []) if out.on_host and out.ge_value in values
    }


def converter_fx_outputs(graph: IrGraph, inputs: Sequence[Any], ge_outputs: Sequence[Any], values: dict[str, Any]) -> list[Any]:
    """The FX outputs as the converters computed them: :func:`rebuild_fx_outputs`, with
    each output made on the host replaced by its GE value where it has one
    (:func:`converted_values`)."""
    outputs = fx_outputs_of(graph)
    if outputs is None:
        return list(ge_outputs)
    symbols = _symbol_values(outputs, inputs)
    return [
        values[out.ge_value] if out.on_host and out.ge_value in values else _value_of(out, inputs, ge_outputs, symbols) for out in outputs
    ]


def _symbol_values(outputs: Sequence[FxOutput], inputs: Sequence[Any]) -> dict[str, int]:
    values: dict[str, int] = {}
    for out in outputs:
        for name, index in out.symbols.items():
            x = inputs[index]
            values[name] = int(x.item()) if isinstance(x, torch.Tensor) else int(x)
    return values


def _value_of(out: FxOutput, inputs: Sequence[Any], ge_outputs: Sequence[Any], symbols: dict[str, int]) -> Any:
    if out.kind == GE:
        return ge_outputs[out.ge_index]  # type: ignore[index]
    if out.kind == VALUE:
        return out.value
    if out.kind == SYM:
        return evaluate(out.expr, symbols)
    base = inputs[out.input_index]  # type: ignore[index]
    if out.view_fn == VIEW_AS_REAL:
        return torch.view_as_real(base)
    if out.view_fn == VIEW_AS_COMPLEX:
        return torch.view_as_complex(base)
    size = [evaluate(d, symbols) for d in out.size]
    stride = [evaluate(d, symbols) for d in out.stride]
    return torch.as_strided(base, size, stride, evaluate(out.offset, symbols))


def evaluate(expr: Any, symbols: dict[str, int]) -> int:
    """An int, or a symbolic expression (as sympy prints it) at the symbols' values."""
    if isinstance(expr, int):
        return expr

    value = sympy.sympify(expr, locals=_sympy_functions()).subs({sympy.Symbol(k): v for k, v in symbols.items()})
    if not value.is_number:
        raise ValueError(f"symbolic expression {expr} has symbols no graph input holds (known: {sorted(symbols)})")
    return int(value)


def _sympy_functions() -> dict[str, Any]:
    """torch's own sympy functions, which size expressions print by name."""
    names = ("FloorDiv", "CeilDiv", "ModularIndexing", "Mod", "PythonMod", "CleanDiv", "IntTrueDiv", "Max", "Min", "TruncToInt")
    return {name: getattr(torch_sympy_functions, name) for name in names if hasattr(torch_sympy_functions, name)}
