"""TorchAir's pattern fusion pass (``apply_pattern_passes``): users' ``register_replacement``
patterns, each match recorded node by node.

``torchair.register_replacement(search_fn, replace_fn, example_inputs, ...)`` (and
npugraph_ex's) registers a pattern with Inductor's pattern matcher, in one pattern pass
that TorchAir applies to every graph when ``experimental_config.pattern_fusion_pass`` is
on. Before a replacement is made TorchAir checks that the matched nodes run on one stream
(npugraph_ex also: in one deterministic and one core-limit scope), then calls the user's
``extra_check``. fxlab registers the same patterns with Inductor's own
``register_replacement`` in one ``PatternMatcherPass`` per pattern set, with the same
checks, and records for each pattern the nodes each match replaced and the nodes it added
(with their source lines); a pattern that matched nothing is named.

TorchAir's own patterns fuse torch_npu operators. Those of its GE graph mode
(``npu_add_rms_norm`` with a float32 cast or ``npu_dynamic_quant``) run first, in
max-autotune mode (:mod:`fxlab.passes.torchair_patterns`); the reduce-overhead ones
(AddRmsNorm with Quant, BatchMatMul with Transpose) run only with ``--converter torchair``. Inductor's pattern matcher is imported only when a pattern is registered.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch.fx as fx
from torch._subclasses.fake_tensor import unset_fake_temporarily

from fxlab.passes.convert_to_ascend_ir import node_source
from fxlab.passes.graph_copy import copy_graph_module
from fxlab.passes.infra import PassResult
from fxlab.passes.stream_labels import SCOPE_METADATA_KEY, STREAM_KEY, annotate_stream_scopes
from fxlab.passes.torchair_options import MAX_AUTOTUNE, NPUGRAPH_EX, describe_callable
from fxlab.passes.torchair_patterns import fuse_torchair_patterns

TORCHAIR_OWN_PATTERNS = (
    "TorchAir's own patterns fuse torch_npu operators: AddRmsNorm + Cast / DynamicQuant in max-autotune mode (run here in "
    "that mode: passes/torchair_patterns.py); AddRmsNorm + Quant and BatchMatMul + Transpose on its reduce-overhead path, "
    "which fxlab's passes do not run"
)
OWN_PATTERNS_FUSED = "TorchAir's own torch_npu patterns fused npu_add_rms_norm with its cast or dynamic quant"


@dataclass(frozen=True)
class RegisteredPattern:
    """One ``register_replacement`` call, as the user made it."""

    search_fn: Callable[..., Any]
    replace_fn: Callable[..., Any]
    example_inputs: tuple[Any, ...]
    trace_fn: Callable[..., Any] | None = None  # None: Inductor's fwd_only, TorchAir's default
    extra_check: Callable[[Any], bool] | None = None
    search_fn_pattern: Any = None
    scalar_workaround: Any = None
    skip_duplicates: bool = False
    registrar: str = "torchair.register_replacement"
    where: str = ""  # file:line of the call

    @property
    def name(self) -> str:
        return describe_callable(self.search_fn)


_REGISTERED: list[RegisteredPattern] = []


def register_pattern(pattern: RegisteredPattern) -> None:
    """Called by the stand-in ``register_replacement``: keep the pattern for the trace."""
    _REGISTERED.append(pattern)


def registered_patterns() -> tuple[RegisteredPattern, ...]:
    return tuple(_REGISTERED)


def forget_patterns() -> None:
    _REGISTERED.clear()


def caller_location(depth: int = 2) -> str:
    """``file.py:line`` of the code ``depth`` frames up (where a pattern was registered)."""
    frame = inspect.currentframe()
    for _ in range(depth):
        frame = frame.f_back if frame is not None else None
    if frame is None:
        return ""
    return f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno}"


@dataclass
class UserPassRun:
    """One run of a user's pass (or of the user's patterns): the graph just before and
    just after it, for the check that runs both on the traced inputs."""

    name: str  # post_grad_custom_pre_pass / post_grad_custom_post_pass / apply_pattern_passes
    function: str  # the user's function(s), ``name (file:line)``
    before: fx.GraphModule
    after: fx.GraphModule | None = None


@dataclass
class PatternMatch:
    """One replacement: the nodes it matched and the nodes it put in their place."""

    replaced: list[dict[str, str]]  # {"name", "target", "source"}
    added: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"replaced": self.replaced, "added": self.added}


@dataclass
class PatternReport:
    """Every pattern of one run, with its matches (in the order they were made)."""

    patterns: list[RegisteredPattern]
    matches: dict[int, list[PatternMatch]] = field(default_factory=dict)

    def to_json(self) -> list[dict[str, Any]]:
        return [
            {
                "pattern": p.name,
                "replacement": describe_callable(p.replace_fn),
                "registered_at": p.where,
                "registrar": p.registrar,
                "matches": [m.to_json() for m in self.matches.get(i, [])],
            }
            for i, p in enumerate(self.patterns)
        ]

    def unmatched(self) -> list[RegisteredPattern]:
        return [p for i, p in enumerate(self.patterns) if not self.matches.get(i)]


def _node_record(node: fx.Node) -> dict[str, str]:
    return {"name": node.name, "target": str(node.target), "source": node_source(node) or ""}


class _Recorder:
    """Follows one pass application: which pattern accepted which match, and which nodes
    appeared after it (a match is applied right after its check accepts it)."""

    def __init__(self, gm: fx.GraphModule, report: PatternReport) -> None:
        self.gm, self.report = gm, report
        self.known = {n.name for n in gm.graph.nodes}
        self.open: PatternMatch | None = None

    def settle(self) -> None:
        """Give the nodes that appeared since the last accepted match to that match."""
        now = {n.name: n for n in self.gm.graph.nodes}
        if self.open is not None:
            self.open.added.extend(_node_record(now[name]) for name in now if name not in self.known)
        self.known = set(now)
        self.open = None

    def accepted(self, index: int, nodes: list[fx.Node]) -> None:
        self.settle()
        match = PatternMatch([_node_record(n) for n in nodes if n.op == "call_function"])
        self.report.matches.setdefault(index, []).append(match)
        self.open = match


class PatternFusion:
    """The pass: users' patterns through Inductor's matcher, with TorchAir's checks."""

    def __init__(self, patterns: tuple[RegisteredPattern, ...], mode: str, user_runs: list[Any] | None = None) -> None:
        self.patterns = list(patterns)
        self.mode = mode
        self.report = PatternReport(self.patterns)
        self.user_runs = user_runs
        self._recorder: _Recorder | None = None
        self._matcher: Any = None

    def __call__(self, gm: fx.GraphModule) -> PassResult[fx.GraphModule]:
        fused = self.mode == MAX_AUTOTUNE and fuse_torchair_patterns(gm)
        own = [OWN_PATTERNS_FUSED] if fused else []
        if not self.patterns:
            return PassResult(gm, fused, notes=[*own, "no pattern registered (torchair.register_replacement)", TORCHAIR_OWN_PATTERNS])

        before = copy_graph_module(gm) if self.user_runs is not None else None
        annotate_stream_scopes(gm, "npugraph_ex" if self.mode == NPUGRAPH_EX else "air")
        self._recorder = _Recorder(gm, self.report)
        count = self._pass().apply(gm)
        self._recorder.settle()
        gm.graph.lint()
        gm.recompile()
        if before is not None and count and self.user_runs is not None:
            self.user_runs.append(
                UserPassRun("apply_pattern_passes", ", ".join(p.name for p in self.patterns), before, copy_graph_module(gm))
            )
        notes = [f"{p.name}: {len(self.report.matches.get(i, []))} match(es)" for i, p in enumerate(self.patterns)]
        notes += [f"registered pattern {p.name} ({p.where}) matched nothing" for p in self.report.unmatched()]
        return PassResult(gm, count > 0 or fused, notes=own + notes)

    def _pass(self) -> Any:
        if self._matcher is None:
            # TorchAir traces a pattern when the user registers it, outside any compile (and
            # its fake mode): the pattern's example inputs are real tensors.
            with unset_fake_temporarily():
                self._matcher = _register_all(self.patterns, self._check_for)
        return self._matcher

    def _check_for(self, index: int, pattern: RegisteredPattern) -> Callable[[Any], bool]:
        def check(match: Any) -> bool:
            nodes = list(match.nodes)
            if not _one_stream(nodes) or (self.mode == NPUGRAPH_EX and not _one_execution_scope(nodes)):
                return False
            if pattern.extra_check is not None and not pattern.extra_check(match):
                return False
            if self._recorder is not None:
                self._recorder.accepted(index, nodes)
            return True

        return check


def _register_all(patterns: list[RegisteredPattern], check_for: Callable[[int, RegisteredPattern], Any]) -> Any:
    """One Inductor ``PatternMatcherPass`` holding every pattern, in registration order."""
    # lazy: Inductor takes over a second to import; only a user's registered patterns need it
    from torch._inductor.pattern_matcher import PatternMatcherPass, fwd_only, register_replacement

    matcher = (
        PatternMatcherPass(pass_name="fxlab_user_patterns")
        if "pass_name" in inspect.signature(PatternMatcherPass).parameters
        else PatternMatcherPass()
    )
    for index, pattern in enumerate(patterns):
        register_replacement(
            search_fn=pattern.search_fn,
            replace_fn=pattern.replace_fn,
            example_inputs=list(pattern.example_inputs),
            trace_fn=pattern.trace_fn or fwd_only,
            pass_dicts=matcher,
            extra_check=check_for(index, pattern),
            search_fn_pattern=pattern.search_fn_pattern,
            scalar_workaround=pattern.scalar_workaround,
            skip_duplicates=pattern.skip_duplicates,
        )
    return matcher


def _one_stream(nodes: list[fx.Node]) -> bool:
    """TorchAir's rule: a match never spans two streams (the default stream counts)."""
    labels = {n.meta.get(STREAM_KEY) for n in nodes if n.op == "call_function"}
    return len(labels) <= 1


def _one_execution_scope(nodes: list[fx.Node]) -> bool:
    """npugraph_ex's rule: nor two deterministic levels, nor two core limits."""
    scopes = [n.meta.get(SCOPE_METADATA_KEY, (None, None)) for n in nodes if n.op == "call_function"]
    return len({s[0] for s in scopes}) <= 1 and len({s[1] for s in scopes}) <= 1
