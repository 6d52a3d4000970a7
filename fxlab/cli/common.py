"""What every model-taking command shares: its options, and capturing through one capture
session with a progress line on stderr (:func:`fxlab.cli.console.progress`).

The capture (torch, Dynamo, the passes) is imported only when a command captures, not
when the command line starts: ``fxlab --help`` stays fast. That is why this module, and
every command module, imports it inside the functions that use it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from fxlab.cli import console
from fxlab.python_files import python_file_error
from fxlab.stage_names import ALL_STAGES

if TYPE_CHECKING:
    from fxlab.capture.pipeline import Capture
    from fxlab.capture.request import TraceRequest
    from fxlab.session import CaptureSession

ModelArg = typer.Argument(
    ..., metavar="MODEL.py", help="Python file defining `model` + `example_inputs`, or `get_model_and_inputs()`.", show_default=False
)
EntryOpt = typer.Option(None, "--entry", metavar="NAME", help="Name of a function in the model file returning (model, inputs).")
PluginOpt = typer.Option(
    None,
    "--plugin",
    metavar="FILE",
    help="Python file imported before the model (custom-op registrations, Meta functions, converters, register_replacement patterns). Repeatable.",
)
ModeOpt = typer.Option(
    None,
    "--mode",
    metavar="MODE",
    help="TorchAir's mode: max-autotune (GE graph: pre_ge, ascend_ir), reduce-overhead (aclgraph: TorchAir's capture path) or npugraph_ex (torch_npu's standalone aclgraph backend). Default: the model file's compiler_config, else max-autotune.",
)


def request_of(*, model_is_file: bool = True, **fields: Any) -> TraceRequest:
    """The request of a command's options (``None``: the request's default), checked now,
    before anything is captured or written (``model_is_file``: the model is a model file,
    not a program ``fxlab run`` names)."""
    model = fields.get("model")
    files = [(model, "model")] if model_is_file and isinstance(model, (str, Path)) else []
    for path, role in [*files, *((plugin, "plugin") for plugin in fields.get("plugins") or ())]:
        refused = python_file_error(path, role)  # at once: torch's import takes seconds
        if refused is not None:
            raise refused
    from fxlab.capture.request import TraceRequest  # lazy: the capture imports torch (module docstring)

    return TraceRequest(**{key: value for key, value in fields.items() if value is not None})


def open_session(request: TraceRequest, progress: Callable[[str], None] | None = None, with_torchair: bool = False) -> CaptureSession:
    """A capture session whose notes and warnings go to stderr."""
    from fxlab.session import CaptureSession  # lazy: the capture imports torch (module docstring)

    return CaptureSession(request, progress=progress, note=console.note, warn=console.warn, with_torchair=with_torchair)


def capture_request(request: TraceRequest, after_load: Callable[[], Any] | None = None) -> Capture:
    """Capture ``request`` in a session of its own, with a spinner on stderr
    (``after_load``: what to do once the model file has run)."""
    with console.progress("loading model") as status, open_session(request, status.update) as session:
        return session.capture(after_load=after_load)


def parse_stages(value: str | None) -> tuple[str, ...]:
    """The ``--stages`` asked for (every stage of the mode by default)."""
    if not value or value == "all":
        return tuple(ALL_STAGES)
    return tuple(s.strip() for s in value.split(",") if s.strip())
