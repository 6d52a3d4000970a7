"""The names of a saved trace's files (README, "Saved traces"): a contract users script
against, spelled once for the serializer that writes them, the reader, and the command
line that moves the folder into place."""

from __future__ import annotations

MANIFEST = "manifest.json"
CAPTURE_CODE = "aclgraph_capture.py"  # the ACL graph capture module TorchAir generates
CONVERSION_SUMMARY_CSV = "conversion_summary.csv"
CONVERSION_SUMMARY_JSON = "conversion_summary.json"
IR_JSON_FILE = "ascend_ir.json"
IR_PB_FILE = "ascend_ir.pb"
IR_PBTXT_FILE = "ascend_ir.pbtxt"
IR_PY_FILE = "ascend_ir.py"


def graph_folder(index: int) -> str:
    """The folder of the ``index``-th Dynamo graph."""
    return f"graph_{index}"
