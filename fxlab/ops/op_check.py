"""``fxlab ops check``: a checklist for one custom op, each failure with its fix.

The checks (see issue 3): ``torch.library.opcheck`` on the samples; the fake/Meta
function against the CPU kernel (shape, dtype, stride); the seeds' in-place rules on the
schema and on what the kernel really does; the Ascend C prototype against the schema;
TorchAir's auto-converter verdict; and the converter run on fake inputs. Results are
data (:class:`CheckReport`); the CLI renders them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
import functools
from typing import Any
from collections.abc import Callable

import torch
from torch._subclasses.fake_tensor import FakeTensorMode, UnsupportedOperatorException
from torch.utils import _pytree as pytree

from fxlab.ir.execute import ExecutionError, execute
from fxlab.ir.host_outputs import fx_outputs_of, rebuild_fx_outputs
from fxlab.ir.kernels.inplace import ops_run_by_their_torch_op
from fxlab.ops.fake_convert import convert_sample
from fxlab.ops.inspect_op import OpFacts, auto_verdict, op_facts, registered_samples, resolve_op, samples_from_schema
from fxlab.ops.prototype import Prototype, camel_case, load_prototype, load_prototypes
from fxlab.passes.converters.registry import Sample

PASS, FAIL, WARN, SKIP = "pass", "fail", "warn", "skip"


@dataclass
class CheckItem:
    name: str
    status: str
    detail: str
    fix: str = ""

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "fix": self.fix}


@dataclass
class CheckReport:
    op: str
    schema: str
    samples_source: str  # "registered" or "derived from the schema"
    items: list[CheckItem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(item.status != FAIL for item in self.items)

    @property
    def verdict(self) -> str:
        """The last line: what failed, else that all passed, and which warned."""
        failed = sum(item.status == FAIL for item in self.items)
        if failed:
            return f"{failed} check(s) failed"
        warned = [item.name for item in self.items if item.status == WARN]
        return f"all checks passed, with {len(warned)} warning(s): {', '.join(warned)}" if warned else "all checks passed"

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "schema": self.schema,
            "samples": self.samples_source,
            "ok": self.ok,
            "verdict": self.verdict,
            "checks": [item.to_json() for item in self.items],
        }


def check_op(name: str, prototype: str | Path | None = None) -> CheckReport:
    """Run every check on the op ``name``; ``prototype`` overrides the registered one."""
    overload = resolve_op(name)
    facts = op_facts(overload)
    samples = registered_samples(overload)
    source = "registered"
    if not samples:
        samples, source = samples_from_schema(overload), "derived from the schema"
    proto = load_prototype(prototype, _prototype_type(prototype, facts)) if prototype is not None else facts.prototype
    report = CheckReport(facts.qualname, facts.schema, source)
    for check in (_opcheck, _fake_vs_kernel):
        report.items.append(_guarded(check.__name__, functools.partial(check, overload, samples)))
    report.items.extend(_inplace_rules(overload, samples))
    report.items.extend(_prototype_checks(overload, facts, proto))
    auto = _auto_converter(overload, facts, proto)
    report.items.append(auto)
    if facts.converter == "auto" and auto.status == FAIL:  # the prototype given here rules the auto converter out
        report.items.append(CheckItem("converter", FAIL, NO_CONVERTER, REGISTER_CONVERTER))
    else:
        report.items.append(_guarded("converter", lambda: _converter_runs(overload, facts, samples)))
    return report


NO_CONVERTER = "no converter is registered and the auto converter does not apply"
REGISTER_CONVERTER = "Register one with @torchair.register_fx_node_ge_converter(torch.ops.<ns>.<op>.default)."


def _prototype_type(path: str | Path, facts: OpFacts) -> str | None:
    protos = load_prototypes(path)
    if len(protos) == 1:
        return None
    wanted = camel_case(facts.qualname.split("::")[1])
    return wanted if any(p.op_type == wanted for p in protos) else None


def _guarded(name: str, check: Callable[[], CheckItem]) -> CheckItem:
    label = name.strip("_").replace("_", " ")
    try:
        return check()
    except UnsupportedOperatorException as exc:  # the one cause users meet first: say it plainly
        op = exc.func.name() if hasattr(exc.func, "name") else str(exc.func)
        return CheckItem(
            label,
            FAIL,
            f"{op} has no fake (Meta) function, so it cannot run on fake tensors: under torch.compile Dynamo breaks the graph "
            "around it and runs it eagerly, and it is in no GE graph",
            f'Register one: @torch.library.register_fake("{op}") on a function returning empty tensors of the outputs\' shapes '
            "and dtypes (or define_op(..., fake=...)).",
        )
    except Exception as exc:  # noqa: BLE001 - a check that breaks is a failed check, reported
        return CheckItem(
            label,
            FAIL,
            f"the check itself raised {type(exc).__name__}: {exc}",
            "Run the op by hand on the sample inputs to see the error.",
        )


def _clone(value: Any) -> Any:
    return pytree.tree_map(lambda x: x.clone() if isinstance(x, torch.Tensor) else x, value)


# -- opcheck ----------------------------------------------------------------------------
def _opcheck(overload: Any, samples: list[Sample]) -> CheckItem:
    failures = []
    for i, sample in enumerate(samples):
        args, kwargs = _clone((sample.args, sample.kwargs))
        results = torch.library.opcheck(overload, args, kwargs, raise_exception=False)
        failures += [f"sample {i} {test}: {str(result).splitlines()[0]}" for test, result in results.items() if result != "SUCCESS"]
    if failures:
        return CheckItem(
            "opcheck",
            FAIL,
            "; ".join(failures),
            "torch.library.opcheck found the schema, fake function or AOT dispatch inconsistent with the kernel: "
            "fix what the first failure names (see torch.library.opcheck's documentation).",
        )
    return CheckItem(
        "opcheck",
        PASS,
        f"torch.library.opcheck passed on {len(samples)} sample(s) (schema, fake tensor, autograd registration, AOT dispatch)",
    )


# -- fake vs CPU kernel -----------------------------------------------------------------
def _fake_vs_kernel(overload: Any, samples: list[Sample]) -> CheckItem:
    diffs = []
    for i, sample in enumerate(samples):
        args, kwargs = _clone((sample.args, sample.kwargs))
        real = _flat(overload(*args, **kwargs))
        mode = FakeTensorMode()
        fake_args, fake_kwargs = pytree.tree_map(
            lambda x, mode=mode: mode.from_tensor(x) if isinstance(x, torch.Tensor) else x, _clone((sample.args, sample.kwargs))
        )
        with mode:
            fake = _flat(overload(*fake_args, **fake_kwargs))
        if len(real) != len(fake):
            diffs.append(f"sample {i}: fake returns {len(fake)} outputs, the kernel {len(real)}")
            continue
        for j, (r, f) in enumerate(zip(real, fake)):
            for what, rv, fv in (
                ("shape", tuple(r.shape), tuple(f.shape)),
                ("dtype", r.dtype, f.dtype),
                ("stride", r.stride(), f.stride()),
            ):
                if rv != fv:
                    diffs.append(f"sample {i} output {j}: fake {what} {fv}, CPU kernel {what} {rv}")
    if diffs:
        return CheckItem(
            "fake vs kernel",
            FAIL,
            "; ".join(diffs),
            "Make the Meta/fake function return tensors with the kernel's shape, dtype and strides "
            "(e.g. torch.empty_like(<the input the output follows>)).",
        )
    return CheckItem("fake vs kernel", PASS, f"fake outputs match the CPU kernel's shape, dtype and stride on {len(samples)} sample(s)")


def _flat(value: Any) -> list[torch.Tensor]:
    return [v for v in pytree.tree_leaves(value) if isinstance(v, torch.Tensor)]


# -- in-place rules ---------------------------------------------------------------------
def _is_tensor_type(arg: Any) -> bool:
    return "Tensor" in str(arg.type)


def _inplace_rules(overload: Any, samples: list[Sample]) -> list[CheckItem]:
    schema = overload._schema
    items = [_tensors_first(schema), _no_mutated_return(schema)]
    items.append(_guarded("mutations declared", lambda: _mutations_declared(overload, samples)))
    return items


def _tensors_first(schema: Any) -> CheckItem:
    positional = [a for a in schema.arguments if not a.kwarg_only]
    first_scalar = next((a for a in positional if not _is_tensor_type(a)), None)
    late = [
        a.name
        for a in positional
        if first_scalar is not None and _is_tensor_type(a) and positional.index(a) > positional.index(first_scalar)
    ]
    if late and first_scalar is not None:
        return CheckItem(
            "tensors before scalars",
            FAIL,
            f"tensor argument(s) {', '.join(late)} come after scalar {first_scalar.name}",
            "Put every Tensor argument before the scalar ones in the schema (and in the Ascend C prototype).",
        )
    return CheckItem("tensors before scalars", PASS, "every tensor argument comes before the scalars")


def _no_mutated_return(schema: Any) -> CheckItem:
    aliased = [
        f"return {i} ({r.type}({r.alias_info.before_set and sorted(r.alias_info.before_set)[0]}{'!' if r.alias_info.is_write else ''}))"
        for i, r in enumerate(schema.returns)
        if r.alias_info is not None
    ]
    if aliased:
        return CheckItem(
            "no mutated input returned",
            FAIL,
            f"the schema returns an alias of an input: {', '.join(aliased)}",
            "Return only new tensors (-> Tensor, not -> Tensor(a!)); callers see the mutation through the input itself. "
            "PyTorch's automatic functionalization requires it.",
        )
    return CheckItem("no mutated input returned", PASS, "no return aliases an input")


def _mutations_declared(overload: Any, samples: list[Sample]) -> CheckItem:
    declared = {a.name for a in overload._schema.arguments if a.alias_info is not None and a.alias_info.is_write}
    names = [a.name for a in overload._schema.arguments]
    undeclared: set[str] = set()
    returned: set[str] = set()
    written: set[str] = set()
    for sample in samples:
        args, kwargs = _clone((sample.args, sample.kwargs))
        before = _clone((args, kwargs))
        out = _flat(overload(*args, **kwargs))
        for name, now, was in _named_tensors(names, args, kwargs, before):
            if not torch.equal(now, was):
                written.add(name.split("[")[0])
                if name not in declared and name.split("[")[0] not in declared:
                    undeclared.add(name)
            if any(o.untyped_storage().data_ptr() == now.untyped_storage().data_ptr() for o in out):
                returned.add(name)
    problems, fixes = [], []
    if undeclared:
        problems.append(f"the kernel writes input(s) {', '.join(sorted(undeclared))} but the schema does not mark them mutated")
        fixes.append(f"Mark them Tensor(a!) in the schema (e.g. `Tensor(a!) {sorted(undeclared)[0]}`)")
    if returned:
        problems.append(f"an output shares memory with input(s) {', '.join(sorted(returned))}")
        fixes.append("Return a new tensor, never an input")
    never_written = sorted(declared - written)
    if never_written:
        problems.append(
            f"the schema marks {', '.join(never_written)} mutated but the kernel left it unchanged on all {len(samples)} sample(s)"
        )
        fixes.append(f"Write {never_written[0]} in the kernel, or drop its (a!) mark if the op does not mutate it")
    if problems:
        return CheckItem("mutations declared", FAIL, "; ".join(problems), "; ".join(fixes) + ".")
    what = f"mutates only {', '.join(sorted(declared))}, as declared" if declared else "mutates no input, as declared"
    return CheckItem("mutations declared", PASS, f"the kernel {what}; no output aliases an input")


def _named_tensors(names: list[str], args: Any, kwargs: Any, before: Any) -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    old_args, old_kwargs = before
    pairs = list(zip(names, args, old_args)) + [(k, kwargs[k], old_kwargs[k]) for k in kwargs]
    out = []
    for name, now, was in pairs:
        for i, (n, w) in enumerate(zip(_flat(now), _flat(was))):
            out.append((name if not isinstance(now, (list, tuple)) else f"{name}[{i}]", n, w))
    return out


# -- prototype --------------------------------------------------------------------------
_PARAM_TYPE = {"Tensor": "required", "Optional[Tensor]": "optional", "List[Tensor]": "dynamic", "List[Optional[Tensor]]": "dynamic"}
_ATTR_TYPES = {
    "int": ("int",),
    "SymInt": ("int",),
    "float": ("float",),
    "bool": ("bool",),
    "str": ("str", "string"),
    "List[int]": ("list_int", "listint"),
    "List[SymInt]": ("list_int", "listint"),
    "List[float]": ("list_float", "listfloat"),
    "List[bool]": ("list_bool", "listbool"),
    "ScalarType": ("type", "data_type"),
}


def _prototype_checks(overload: Any, facts: OpFacts, proto: Prototype | None) -> list[CheckItem]:
    if proto is None:
        return [
            CheckItem(
                "prototype",
                WARN,
                f"no Ascend C prototype registered for {camel_case(facts.qualname.split('::')[1])}",
                "Pass the op's msOpGen JSON with --prototype op.json (or define_op(..., prototype=FILE)).",
            )
        ]
    schema = overload._schema
    tensors = [a for a in schema.arguments if _is_tensor_type(a)]
    scalars = [a for a in schema.arguments if not _is_tensor_type(a)]
    mutated = [a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write]
    return [
        _name_check(facts, proto),
        _inputs_check(tensors, proto),
        _outputs_check(schema, mutated, proto),
        _attrs_check(scalars, proto),
        _lists_check(proto),
    ]


def _name_check(facts: OpFacts, proto: Prototype) -> CheckItem:
    expected = camel_case(facts.qualname.split("::")[1])
    if proto.op_type == expected:
        return CheckItem("prototype name", PASS, f"{proto.op_type} is the CamelCase of {facts.qualname}")
    if facts.converter in ("fxlab", "torchair"):
        return CheckItem(
            "prototype name",
            PASS,
            f"{proto.op_type} is not the CamelCase {expected}, but the registered converter "
            f"({facts.converter_where}) names the GE op itself",
        )
    return CheckItem(
        "prototype name",
        FAIL,
        f"prototype op {proto.op_type!r} is not {expected!r}, the CamelCase of {facts.qualname}",
        f"Name the Ascend C op {expected} (TorchAir's auto converter looks it up by that name), or register a converter.",
    )


def _inputs_check(tensors: list[Any], proto: Prototype) -> CheckItem:
    want = [(a.name, _PARAM_TYPE.get(str(a.type), "?")) for a in tensors]
    have = [(p.name, p.param_type) for p in proto.inputs]
    if want != have:
        return CheckItem(
            "prototype inputs",
            FAIL,
            f"schema tensor arguments {_fmt(want)}, prototype inputs {_fmt(have)}",
            "List the prototype's input_desc in schema order with matching names and param_type "
            "(Tensor: required, Tensor?: optional, Tensor[]: dynamic).",
        )
    return CheckItem("prototype inputs", PASS, f"inputs {_fmt(have)} follow the schema")


def _outputs_check(schema: Any, mutated: list[str], proto: Prototype) -> CheckItem:
    own = len(schema.returns)
    names = proto.output_names
    missing = [m for m in mutated if m not in names[: len(mutated)]]
    problems = []
    if missing:
        problems.append(f"no ref output named {', '.join(missing)} before the op's own outputs (outputs are {names})")
    if len(names) != len(mutated) + own:
        problems.append(f"{len(names)} outputs, expected {len(mutated)} ref + {own} own")
    if problems:
        wanted = mutated + [f"<output {i}>" for i in range(own)]
        return CheckItem(
            "prototype outputs",
            FAIL,
            "; ".join(problems),
            f"Give the prototype output_desc {wanted}: an output with the same name as each mutated input, first, then the op's outputs.",
        )
    ref = f"ref output(s) {', '.join(mutated)} then " if mutated else ""
    return CheckItem("prototype outputs", PASS, f"{ref}{own} own output(s): {names}")


def _attrs_check(scalars: list[Any], proto: Prototype) -> CheckItem:
    want = [a.name for a in scalars]
    have = [a.name for a in proto.attrs]
    problems = [] if want == have else [f"schema scalars {want}, prototype attrs {have}"]
    for arg, attr in zip(scalars, proto.attrs):
        allowed = _ATTR_TYPES.get(str(arg.type))
        if arg.name == attr.name and allowed is not None and attr.type.lower() not in allowed:
            problems.append(f"attr {attr.name} has type {attr.type!r}, the schema says {arg.type}")
    if problems:
        return CheckItem(
            "prototype attrs",
            FAIL,
            "; ".join(problems),
            "Declare each scalar argument as an attr, in schema order, with the matching type.",
        )
    return CheckItem("prototype attrs", PASS, f"scalars are attrs: {have}" if have else "no scalar arguments, no attrs")


def _lists_check(proto: Prototype) -> CheckItem:
    bad = [
        f"{p.name} ({'no type list' if not p.types else 'no format list' if not p.formats else 'type and format lists differ in length'})"
        for p in proto.inputs + proto.outputs
        if not p.types or not p.formats or len(p.types) != len(p.formats)
    ]
    if bad:
        return CheckItem(
            "prototype dtype/format",
            FAIL,
            f"tensor entries without usable lists: {', '.join(bad)}",
            'Give every input_desc/output_desc a "type" and a "format" list of the same length.',
        )
    return CheckItem("prototype dtype/format", PASS, "every tensor entry lists its dtypes and formats")


def _fmt(pairs: list[tuple[str, str]]) -> str:
    return "[" + ", ".join(f"{n}:{t}" for n, t in pairs) + "]"


# -- converters -------------------------------------------------------------------------
def _auto_converter(overload: Any, facts: OpFacts, proto: Prototype | None) -> CheckItem:
    ok, ge_type, reason = auto_verdict(overload, proto)
    if ok:
        return CheckItem("auto converter", PASS, f"TorchAir's auto converter maps it to GE op {ge_type}")
    if facts.converter in ("fxlab", "torchair"):
        return CheckItem(
            "auto converter",
            PASS,
            f"the auto converter would not work ({reason}); the registered converter at {facts.converter_where} is used instead",
        )
    return CheckItem(
        "auto converter",
        FAIL,
        f"TorchAir's auto converter cannot convert it: {reason}",
        "Register a converter (@torchair.register_fx_node_ge_converter) or change the schema/prototype as the reason says.",
    )


def _converter_runs(overload: Any, facts: OpFacts, samples: list[Sample]) -> CheckItem:
    if facts.converter == "none":
        return CheckItem(
            "converter",
            FAIL,
            NO_CONVERTER,
            REGISTER_CONVERTER,
        )
    types: list[str] = []
    not_run: list[str] = []
    outputs = 0
    for i, sample in enumerate(samples):
        conversion = convert_sample(overload, sample)
        if conversion.error:
            return CheckItem(
                "converter",
                FAIL,
                f"sample {i}: {conversion.error}",
                "Fix the converter so it handles these inputs and returns one GE tensor per schema output.",
            )
        types, outputs = conversion.ge_types, len(fx_outputs_of(conversion.graph) or conversion.graph.outputs)
        differs, reason = _ir_against_kernel(overload, sample, conversion.graph)
        if differs:
            return CheckItem(
                "converter",
                FAIL,
                f"sample {i}: the Ascend IR run on CPU differs from the CPU kernel: {differs}",
                "Make the converter compute what the kernel computes (inputs in schema order, attrs, which output is which).",
            )
        if reason:
            not_run.append(f"sample {i}: {reason}")
    ran_by_op = _run_by_the_ops_kernel(conversion.graph, facts)
    emitted = (
        f"the {facts.converter} converter runs on fake inputs, returns {outputs} tensor output(s), and emits {', '.join(types) or 'no ops'}"
    )
    if not_run:
        return CheckItem(
            "converter",
            WARN,
            f"{emitted}; its IR was not run against the CPU kernel ({not_run[0]})",
            "Register a CPU reference kernel for each GE op type it names, in a --plugin file: "
            '@fxlab.ops.reference_kernel("Type") on a function taking the op\'s inputs and attrs (docs/custom-ops.md).',
        )
    return CheckItem("converter", PASS, f"{emitted}; its IR run on CPU matches the CPU kernel on {len(samples)} sample(s){ran_by_op}")


def _run_by_the_ops_kernel(graph: Any, facts: OpFacts) -> str:
    """What to add when the IR's one GE op was run by the op's own CPU kernel."""
    types = [op.type for op, _ in ops_run_by_their_torch_op(graph.ops)] if graph is not None else []
    if not types:
        return ""
    return (
        f" (GE op {', '.join(types)} has no reference kernel of its own: {facts.qualname}'s CPU kernel ran in its place, "
        "so this checks the converter's wiring, not the Ascend C kernel)"
    )


def _ir_against_kernel(overload: Any, sample: Sample, graph: Any) -> tuple[str, str]:
    """Run the op's Ascend IR on the sample and the CPU kernel on a copy: what differs
    (outputs, or inputs the op writes), or why the IR could not run."""
    args, kwargs = _clone((sample.args, sample.kwargs))
    expected = _flat(overload(*args, **kwargs))
    ir_inputs = _flat(_clone((sample.args, sample.kwargs)))
    try:
        # An output that is an input (an in-place op's result) is made on the host, as
        # TorchAir makes it: not a NetOutput input.
        actual = rebuild_fx_outputs(graph, ir_inputs, execute(graph, ir_inputs))
    except ExecutionError as exc:
        return "", str(exc)
    if len(actual) != len(expected):
        return f"{len(actual)} IR output(s), the kernel returns {len(expected)}", ""
    pairs = [(f"output {j}", e, a) for j, (e, a) in enumerate(zip(expected, actual))]
    pairs += [(f"input {j} after the call", e, a) for j, (e, a) in enumerate(zip(_flat((args, kwargs)), ir_inputs))]
    for label, e, a in pairs:
        if e.shape != a.shape or e.dtype != a.dtype:
            return f"{label}: IR {a.dtype}{list(a.shape)}, kernel {e.dtype}{list(e.shape)}", ""
        if not torch.allclose(e, a, rtol=1e-3, atol=1e-4, equal_nan=True):
            return f"{label}: values differ", ""
    return "", ""
