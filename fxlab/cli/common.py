"""What every model-taking command shares: options, loading with plugins inside the
TorchAir-compatible layer, and capturing with a status indicator on stderr."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from fxlab.cli import console
from fxlab.errors import FxlabError

if TYPE_CHECKING:  # the capture package is imported only when a command captures
    from fxlab.capture.pipeline import Converter, TorchAirCode

ModelArg = typer.Argument(..., help="Python file defining `model` + `example_inputs`, or `get_model_and_inputs()`.", show_default=False)
EntryOpt = typer.Option(None, "--entry", help="Name of a function in the model file returning (model, inputs).")
PluginOpt = typer.Option(
    None,
    "--plugin",
    help="Python file imported before the model (custom-op registrations, Meta functions, converters, register_replacement patterns). Repeatable.",
)
ModeOpt = typer.Option(
    None,
    "--mode",
    help="TorchAir's mode: max-autotune (GE graph: pre_ge, ascend_ir), reduce-overhead (aclgraph: TorchAir's capture path) or npugraph_ex (torch_npu's standalone aclgraph backend). Default: the model file's compiler_config, else max-autotune.",
)


@contextlib.contextmanager
def user_code_environment() -> Iterator[None]:
    """While user files run: fxlab's stand-ins for `torchair` / `torch_npu` when the real
    ones are not importable (announced once on stderr), and collectives as TorchAir
    captures them."""
    try:
        from fxlab.compat.collectives import torchair_collectives
        from fxlab.compat.layer import compat_layer
    except ImportError:
        yield
        return
    with compat_layer(announce=console.note), torchair_collectives():
        yield


def capture_model(
    model: Path,
    entry: str | None,
    plugins: Sequence[Path] | None,
    stages: Sequence[str],
    verify: bool | None = None,
    converter: Converter | TorchAirCode | None = None,
    convert_refused: bool = False,
    mode: str | None = None,
    soc: str | None = None,
    dynamic: bool = False,
    *,
    ranks: Any = None,
    after_load: Callable[[], None] | None = None,
    progress: Callable[[str], None] | None = None,
    reference: Any = None,
) -> Any:
    """Load and capture ``model`` with a spinner on stderr; returns (loaded, trace).
    One rank of a multi-rank trace passes its ``ranks`` hooks (:mod:`fxlab.capture.ranks`),
    what to do once the model file has run (``after_load``) and where progress goes;
    ``reference`` is TorchAir's own backend for the aclgraph check."""
    from fxlab.capture import capture_trace, load_model
    from fxlab.capture.torch_logs import torch_warnings_as_notes
    from fxlab.viz.safe_text import plain

    status = console.err().status("loading model", spinner="dots")
    say = progress or (lambda msg: status.update(plain(msg)))
    try:
        with user_code_environment(), status, torch_warnings_as_notes() as torch_notes:
            say("loading model")
            loaded = load_model(model, entry=entry, plugins=list(plugins or []))
            if after_load is not None:
                after_load()
            trace = capture_trace(
                loaded,
                stages=stages,
                progress=say,
                verify=verify,
                converter=converter,
                convert_refused=convert_refused,
                mode=mode,
                soc=soc,
                dynamic=dynamic,
                ranks=ranks,
                reference=reference,
            )
    except SystemExit as exc:  # only the user's code exits while fxlab runs it
        raise FxlabError(
            f"the model called exit ({type(exc).__name__}: {exc.code}) while fxlab ran it, so nothing could be captured. "
            f"Remove the exit() / sys.exit() call from the code {model} runs."
        ) from exc
    trace.notes.extend(note for note in torch_notes if note not in trace.notes)
    return loaded, trace


def parse_stages(value: str | None, mode: str | None = None) -> tuple[str, ...]:
    """The ``--stages`` asked for (every stage by default); with ``--mode``, checked
    against that mode's stages now, before anything is captured or written."""
    from fxlab.capture import ALL_STAGES, validate_stages
    from fxlab.capture.torchair_config import check_mode

    check_mode(mode)
    if not value or value == "all":
        return tuple(ALL_STAGES)
    wanted = validate_stages([s.strip() for s in value.split(",") if s.strip()])
    if mode is not None:
        validate_stages(wanted, mode)
    return wanted
