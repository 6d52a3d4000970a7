"""Random small programs of in-place and out-of-place tensor ops, for the property test
of the pipeline (``test_pipeline_property.py``).

A program is a model file's source: an ``nn.Module`` whose ``forward`` takes some of 2-4
tensors as arguments and holds the others as buffers, and runs statements drawn by
hypothesis: out-of-place ops, in-place ops (``add_``, ``mul_``, ``relu_``, ``zero_``,
``fill_``, ``masked_fill_``, ``clamp_``, ``copy_``, slice and index assignment) on
inputs, buffers, intermediates and views of any of them (slice, select, view,
transpose, unsqueeze, narrow, split, diagonal, permute).

Each statement is tried on real tensors as it is drawn and kept only if it runs eagerly,
so every program is one eager PyTorch accepts. An in-place op never reads another view
of the memory it writes (eager's result would depend on the order it walks memory in).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from hypothesis import strategies as st

SHAPES = ((4, 4), (2, 4), (4,), (3, 2, 4))


@dataclass
class Value:
    """A variable of the program: its name, a real tensor that tracks its value while
    drawing, and which memory (input or intermediate) it views."""

    name: str
    tensor: torch.Tensor
    base: str


@dataclass
class Program:
    inputs: list[tuple[str, tuple[int, ...]]]  # (name, shape), arguments then buffers
    buffers: int
    lines: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)

    def source(self, seed: int = 0) -> str:
        args = [name for name, _ in self.inputs[: len(self.inputs) - self.buffers]]
        buffers = self.inputs[len(self.inputs) - self.buffers:]
        init = [f"        self.register_buffer({name!r}, torch.randn({shape}, generator=g))" for name, shape in buffers]
        unpack = [f"        {name} = self.{name}" for name, _ in buffers]
        body = [f"        {line}" for line in self.lines]
        ret = f"        return ({', '.join(self.outputs)}{',' if len(self.outputs) == 1 else ''})"
        example = ", ".join(f"torch.randn({shape}, generator=g)" for name, shape in self.inputs[: len(args)])
        return "\n".join([
            "import torch",
            f"g = torch.Generator().manual_seed({seed})",
            "class Program(torch.nn.Module):",
            "    def __init__(self):",
            "        super().__init__()",
            *(init or ["        pass"]),
            f"    def forward(self, {', '.join(args)}):",
            *unpack,
            *body,
            ret,
            "model = Program()",
            f"example_inputs = ({example}{',' if len(args) == 1 else ''})",
            "",
        ])


# -- statements: each returns (code, result or None) given the chosen values ----------------
Maker = Callable[[Any, list[Value]], "tuple[str, Callable[[dict[str, torch.Tensor]], Any], bool] | None"]


def _views(draw: Any, v: Value) -> tuple[str, bool] | None:
    t = v.tensor
    options = []
    if t.dim() >= 1 and t.shape[0] >= 2:
        options += [f"{v.name}[1:{t.shape[0]}]", f"{v.name}.narrow(0, 0, 2)", f"{v.name}.split(2)[0]", f"{v.name}.select(0, 1)"]
    if t.dim() >= 2:
        options += [f"{v.name}.transpose(0, 1)", f"{v.name}.permute({', '.join(str(i) for i in reversed(range(t.dim())))})", f"{v.name}.diagonal()"]
    options += [f"{v.name}.unsqueeze(0)", f"{v.name}.view(-1)"]
    return draw(st.sampled_from(options)), True


_OUT_OF_PLACE = (
    "{a} + {b}", "{a} * 2.0", "torch.relu({a})", "{a}.clone()", "{a} - {b} * 0.5", "torch.where({a} > 0, {a}, {b})",
    "{a}.sum(0)", "torch.sigmoid({a})", "{a}.abs() + 1.0", "{a}.clone()", "{a}.clone()",
)
_INPLACE_SCALAR = (
    "{a}.add_(1.5)", "{a}.mul_(2.0)", "{a}.relu_()", "{a}.zero_()", "{a}.fill_(3.0)", "{a}.clamp_(-0.5, 0.5)",
    "{a}.masked_fill_({a} > 0, 0.25)",
)
_INPLACE_TENSOR = ("{a}.add_({b})", "{a}.mul_({b})", "{a}.copy_({b})")
_ASSIGN = ("{a}[0] = {b}", "{a}[1:] = 0.5", "{a}[torch.tensor([0])] = -1.0", "{a}[0] = 2.0")


@st.composite
def programs(draw: Any) -> Program:
    count = draw(st.integers(2, 4))
    shapes = [draw(st.sampled_from(SHAPES)) for _ in range(count)]
    buffers = draw(st.integers(0, min(2, count - 1)))
    program = Program([(f"x{i}", s) for i, s in enumerate(shapes)], buffers)
    values = [Value(f"x{i}", torch.randn(s), f"x{i}") for i, s in enumerate(shapes)]
    for step in range(draw(st.integers(1, 7))):
        _statement(draw, program, values, f"v{step}")
    # Every value the program made is returned: a later in-place op must not change one.
    program.outputs = [v.name for v in values if not v.name.startswith("x")]
    return program


def _statement(draw: Any, program: Program, values: list[Value], name: str) -> None:
    kind = draw(st.sampled_from(("out", "view", "inplace", "inplace", "inplace_tensor", "assign")))
    a = draw(st.sampled_from(values))
    if kind == "view":
        code, _ = _views(draw, a)
        _try(program, values, f"{name} = {code}", name, a.base)
        return
    if kind == "out":
        b = draw(st.sampled_from(values))
        _try(program, values, f"{name} = " + draw(st.sampled_from(_OUT_OF_PLACE)).format(a=a.name, b=b.name), name, name)
        return
    if kind == "inplace":
        _try(program, values, draw(st.sampled_from(_INPLACE_SCALAR)).format(a=a.name), None, None)
        return
    others = [v for v in values if v.base != a.base]
    if not others:
        return
    b = draw(st.sampled_from(others))
    table = _INPLACE_TENSOR if kind == "inplace_tensor" else _ASSIGN
    _try(program, values, draw(st.sampled_from(table)).format(a=a.name, b=b.name), None, None)


def _try(program: Program, values: list[Value], line: str, name: str | None, base: str | None) -> None:
    """Run ``line`` on the drawn values; keep it (and its new value) if eager accepts it."""
    scope = {v.name: v.tensor for v in values}
    saved = {k: t.clone() for k, t in scope.items()}
    scope["torch"] = torch
    try:
        with torch.no_grad():
            exec(line, {}, scope)  # noqa: S102 - the generator's own statements
    except (RuntimeError, IndexError, ValueError):
        for v in values:  # undo a half-done statement
            with torch.no_grad():
                if v.tensor.shape == saved[v.name].shape:
                    v.tensor.copy_(saved[v.name])
        return
    program.lines.append(line)
    if name is not None:
        result = scope[name]
        if isinstance(result, torch.Tensor):
            values.append(Value(name, result, base or name))
