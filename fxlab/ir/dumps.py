"""The Ascend IR dumps of one graph, named as the saved trace layout names them (README, "Saved traces").

``ascend_ir.json`` (:meth:`IrGraph.to_json`), ``ascend_ir.pb`` (GE ``ModelDef``, binary),
``ascend_ir.pbtxt`` (the same as protobuf text) and ``ascend_ir.py`` (TorchAir-style
``py`` dump), as data (the command line writes them), and the one reader of the first
three.
"""

from __future__ import annotations


from fxlab.ir.ge_proto import encode_model_def
from fxlab.ir.json_values import encode_strict
from fxlab.ir.model import IrGraph
from fxlab.ir.pbtxt import graph_to_pbtxt
from fxlab.saved_layout import IR_JSON_FILE, IR_PB_FILE, IR_PBTXT_FILE, IR_PY_FILE


# Strict JSON: no NaN/Infinity, complex as pairs (fxlab/ir/json_values.py, README).
_encode_value = encode_strict


def graph_to_json_text(graph: IrGraph) -> str:
    """``ascend_ir.json``: :meth:`IrGraph.to_json` with one op per line, so the file
    diffs and greps well."""
    head = _encode_value(
        {
            "name": graph.name,
            "inputs": list(graph.inputs),
            "outputs": list(graph.outputs),
            "attrs": {k: v.to_typed_json() for k, v in graph.attrs.items()},
        }
    )[:-1]
    lines = ",\n".join(_encode_value(op.to_json()) for op in graph.ops)
    return f'{head}, "ops": [\n{lines}\n]}}\n' if lines else f'{head}, "ops": []}}\n'


def ir_dump_files(graph: IrGraph, py_text: str) -> dict[str, bytes | str]:
    """The four dumps of ``graph`` by file name: the JSON, the GE protobuf (binary and
    text) and ``py_text``, TorchAir's ``py`` dump of it (:func:`fxlab.ir.dump_py.graph_to_py`,
    rendered where the FX graph it was converted from is at hand)."""
    return {
        IR_JSON_FILE: graph_to_json_text(graph),
        IR_PB_FILE: encode_model_def(graph),
        IR_PBTXT_FILE: graph_to_pbtxt(graph),
        IR_PY_FILE: py_text,
    }
