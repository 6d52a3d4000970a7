"""Dynamo's and aot_autograd's errors, in one paragraph with the user's source line."""

from __future__ import annotations

import traceback

from fxlab.capture.loader import LoadedModel
from fxlab.errors import CaptureError


def summarize_compile_error(exc: BaseException, loaded: LoadedModel) -> CaptureError:
    """Dynamo's error in one paragraph, with the user's source line when it has one."""
    where = _user_frame(exc, loaded)
    root = root_cause(exc)
    cause = f"; caused by {first_line(root)}" if root is not exc else ""
    return CaptureError(
        f"the model failed under torch.compile ({first_line(exc)}{cause})"
        + (f" at {where}" if where else "")
        + ". Check that the model runs eagerly on the example inputs and that every custom op has a Meta/fake "
        "function (`fxlab ops check OP`); run with TORCH_LOGS=graph_breaks for Dynamo's own detail."
    )


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def root_cause(exc: BaseException) -> BaseException:
    seen = {id(exc)}
    while (nxt := exc.__cause__ or exc.__context__) is not None and id(nxt) not in seen:
        seen.add(id(nxt))
        exc = nxt
    return exc


def _user_frame(exc: BaseException, loaded: LoadedModel) -> str | None:
    model_file = str(loaded.path.resolve()) if loaded.path else None
    user_stack = getattr(exc, "real_stack", None) or []
    frames = list(user_stack) + list(traceback.extract_tb(exc.__traceback__))
    for frame in reversed(frames):
        if model_file and frame.filename == model_file:
            return f"{frame.filename}:{frame.lineno} ({(frame.line or '').strip()})"
    return None
