"""What the user asked to trace, as one frozen record that travels from the command line
(or the public API) to the capture session and on to every rank.

A request names the model — a model file (with its entry function and plugins), or a
model object and its inputs — and how to trace it: the stages, TorchAir's mode, whose
conversion builds the GE graph, the SoC stood in, dynamic shapes, the checks, and for a
multi-rank model the number of ranks and how long they may take. The session
(:mod:`fxlab.session`) turns it into a trace; nothing in it is live but the model object
a caller of the public API hands over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fxlab.errors import UsageError
from fxlab.passes.torchair_options import ACLGRAPH_MODES, MAX_AUTOTUNE, REDUCE_OVERHEAD, check_mode, stages_of_mode
from fxlab.socs import SocInfo, choose_soc, default_soc
from fxlab.stage_names import ALL_STAGES

CONVERTERS = ("builtin", "torchair")
DEFAULT_RANK_TIMEOUT = 300.0


@dataclass(frozen=True)
class TraceRequest:
    """One trace asked for (see the module docstring). ``model`` is a model file's path,
    or a callable (an ``nn.Module``, a function) traced on ``inputs``."""

    model: Path | Any
    inputs: Any = None  # with a model object: a tuple of arguments, a dict, or (args, kwargs)
    entry: str | None = None
    plugins: tuple[Path, ...] = ()
    stages: tuple[str, ...] = ALL_STAGES
    mode: str | None = None  # TorchAir's config.mode; None: the model file's, else max-autotune
    converter: str = "builtin"  # who builds the GE graph: fxlab's converters, or TorchAir's own code
    torchair_path: Path | None = None  # TorchAir's sources for converter="torchair"
    soc: SocInfo = field(default_factory=default_soc)  # the SoC stood in (a known SoC's name is taken too)
    dynamic: bool = False  # torch.compile(dynamic=True), whatever the model file says
    convert_refused: bool = False  # let the built-in conversion convert ops TorchAir refuses
    verify: bool | None = None  # run the mode's graph on CPU against the compiled run (None: on)
    nproc: int | None = None  # ranks, one process each (None: one process, or torchrun's)
    timeout: float = DEFAULT_RANK_TIMEOUT  # seconds every rank may take

    def __post_init__(self) -> None:
        """Bad options fail here, before anything is loaded, captured or written."""
        object.__setattr__(self, "plugins", tuple(Path(p) for p in self.plugins))
        object.__setattr__(self, "stages", tuple(self.stages))
        if not isinstance(self.soc, SocInfo):
            object.__setattr__(self, "soc", choose_soc(self.soc))  # an unknown name fails here, naming the known ones
        if self.converter not in CONVERTERS:
            raise UsageError(f"--converter {self.converter!r}: choose builtin or torchair.")
        if self.nproc is not None and self.nproc < 1:
            raise UsageError(f"--nproc {self.nproc}: give at least 1 rank.")
        check_mode(self.mode)
        validate_stages(self.stages, self.mode)

    @property
    def model_file(self) -> Path | None:
        """The model file, when the request names one."""
        return Path(self.model) if isinstance(self.model, (str, Path)) else None

    @property
    def model_name(self) -> str:
        """The model as messages name it: its file, or the object's name."""
        file = self.model_file
        return str(file) if file is not None else getattr(self.model, "__name__", type(self.model).__name__)


def validate_stages(stages: Sequence[str], mode: str | None = None) -> tuple[str, ...]:
    """``stages`` in pipeline order; with ``mode``, only that mode's stages (asking for
    every stage, :data:`ALL_STAGES`, gives the mode's)."""
    unknown = [s for s in stages if s not in ALL_STAGES]
    if unknown:
        raise UsageError(f"unknown stage {', '.join(map(repr, unknown))}: the stages are {', '.join(ALL_STAGES)}.")
    if mode is None:
        return tuple(s for s in ALL_STAGES if s in stages)
    own = stages_of_mode(mode)
    if tuple(stages) == tuple(ALL_STAGES):
        return own
    foreign = [s for s in stages if s not in own]
    if foreign:
        other = MAX_AUTOTUNE if mode in ACLGRAPH_MODES else REDUCE_OVERHEAD
        hint = f" --mode {other} has {', '.join(foreign)}." if all(s in stages_of_mode(other) for s in foreign) else ""
        raise UsageError(f"stage {', '.join(map(repr, foreign))} is not part of {mode} mode: its stages are {', '.join(own)}.{hint}")
    return tuple(s for s in own if s in stages)
