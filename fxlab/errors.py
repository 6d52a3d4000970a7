"""fxlab's user-facing errors: one paragraph naming the cause and the fix, and an exit code.

Layers below the CLI raise these; the CLI prints the message (never a traceback) and
exits with ``exit_code``.
"""

from __future__ import annotations


class FxlabError(Exception):
    """An error the user can fix. ``str(err)`` is the whole paragraph shown to them."""

    exit_code = 2


class ModelLoadError(FxlabError):
    """The model file is missing, does not import, or defines no model and inputs."""


class CaptureError(FxlabError):
    """The model failed under ``torch.compile`` or while a stage was being traced."""

    exit_code = 3


class EagerModelError(CaptureError):
    """The model fails when run eagerly on its inputs: the input is at fault, not
    ``torch.compile`` (bad input, as a model file that does not import)."""

    exit_code = 2


class FxlabBug(FxlabError):
    """fxlab's own fault, proven (the same model compiles and runs without fxlab's backend):
    not the user's input; the message asks for a report."""

    exit_code = 70  # sysexits' EX_SOFTWARE, as for any other failure of fxlab itself


class OutputError(FxlabError):
    """``--out`` cannot be written."""


class UsageError(FxlabError):
    """A bad option value (an unknown stage, a bad core count, ...)."""


class NpuNotEmulated(FxlabError):
    """A script running on the CPU that stands in for the NPU called something only an NPU
    can do (an ACL graph capture, a raw device pointer); the message names the call and
    the script's line."""
