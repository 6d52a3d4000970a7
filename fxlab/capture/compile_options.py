"""How a model asks to be compiled: ``torch.compile``'s ``dynamic`` from the model file
or the command line.

A model file may define, at module level, ``compile_options = {"dynamic": True}`` (or
``False``, or ``None`` for Dynamo's default: static first, dynamic for the dims that change
on a recompile); ``fxlab trace --dynamic`` asks for ``dynamic=True`` whatever the file says.
``torch._dynamo.mark_dynamic`` / ``mark_static`` on the example inputs work as under
``torch.compile`` (the marks are kept on the copies fxlab runs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fxlab.errors import ModelLoadError

OPTIONS_NAME = "compile_options"
KNOWN_OPTIONS = ("dynamic",)


@dataclass(frozen=True)
class CompileOptions:
    """What fxlab passes to ``torch.compile`` besides its backend, and where it came from."""

    dynamic: bool | None = None
    source: str = ""  # "the model file's compile_options", "--dynamic", or "" (the default)

    def to_json(self) -> dict[str, Any]:
        return {"dynamic": self.dynamic, "source": self.source}

    @property
    def note(self) -> str | None:
        """A sentence for the trace's notes, when the model asked for something."""
        if not self.source:
            return None
        return f"compiled with torch.compile(dynamic={self.dynamic}) ({self.source})"


def compile_options(module: Any, where: str, dynamic_flag: bool = False) -> CompileOptions:
    """The options of a loaded model file ``module`` (named ``where`` in messages), with
    ``--dynamic`` (``dynamic_flag``) taking precedence."""
    if dynamic_flag:
        return CompileOptions(dynamic=True, source="--dynamic")
    options = getattr(module, OPTIONS_NAME, None) if module is not None else None
    if options is None:
        return CompileOptions()
    if not isinstance(options, dict):
        raise ModelLoadError(
            f"{where}: `{OPTIONS_NAME}` is a {type(options).__name__}; make it a dict such as {{'dynamic': True}}, or remove it."
        )
    unknown = sorted(str(k) for k in options if k not in KNOWN_OPTIONS)
    if unknown:
        raise ModelLoadError(
            f"{where}: `{OPTIONS_NAME}` has {', '.join(map(repr, unknown))}, which fxlab does not pass to torch.compile; "
            f"the options it takes are {', '.join(map(repr, KNOWN_OPTIONS))}. Remove the others."
        )
    dynamic = options.get("dynamic")
    if dynamic not in (True, False, None):
        raise ModelLoadError(f"{where}: `{OPTIONS_NAME}['dynamic']` is {dynamic!r}; give True, False or None.")
    return CompileOptions(dynamic=dynamic, source=f"the model file's {OPTIONS_NAME}")
