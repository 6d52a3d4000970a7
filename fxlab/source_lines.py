"""Where an FX node came from in the user's code.

Dynamo stores, on every node it captures (and FX passes copy it on), the Python stack
that made it as text in ``node.meta["stack_trace"]``, outermost frame first. When the op
was made inside a library (a collective in ``torch.distributed``, a transformers helper),
the innermost frame is the library's, while the user asks which of their lines it came
from. So a node's source is the innermost frame in the user's code (not an installed
package, not the standard library); failing that, the innermost frame outside torch (a
transformers model's own line); failing that, the innermost frame. The innermost frame
stays available beside it (:func:`library_location`).

The stage records, the conversion to Ascend IR and the scope report all read it; parsing
is done here, once per distinct trace (a model repeats the same few hundred traces over
thousands of nodes), and a node's ``file:line`` is cached in its meta under
:data:`SOURCE_KEY`.
"""

from __future__ import annotations

import functools
import os
import re
import site
import sysconfig
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

SOURCE_KEY = "fxlab.source"
NO_FRAME: tuple[None, None, None] = (None, None, None)
# A traceback entry's header, ``  File "PATH", line N, in FUNC``. The path is written as it
# is, quotes and newlines included (a folder named so): it runs to the first ``", line N``.
_FRAME_HEADER = re.compile(r'^[ \t]*File "(.+?)", line (\d+)[^\n]*', re.MULTILINE | re.DOTALL)
USER, LIBRARY, TORCH = 0, 1, 2


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    code: str | None = None
    function: str | None = None

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"


def frame_headers(stack_trace: str) -> list[re.Match[str]]:
    """Each frame's header line in a ``stack_trace`` text, outermost first: ``group(1)`` is
    its file, ``group(2)`` its line number, ``start()`` where the entry begins."""
    return list(_FRAME_HEADER.finditer(stack_trace))


@functools.lru_cache(maxsize=4096)
def frames(stack_trace: str) -> tuple[Frame, ...]:
    """The frames of a ``stack_trace`` text, outermost first, each with its code line."""
    text = stack_trace.rstrip()
    headers = frame_headers(text)
    found = []
    for i, header in enumerate(headers):
        body = text[header.end() : headers[i + 1].start() if i + 1 < len(headers) else len(text)].strip("\n")
        code = body.split("\n", 1)[0].strip() if body else None
        found.append(Frame(header.group(1), int(header.group(2)), code or None))
    return tuple(found)


@functools.lru_cache(maxsize=4096)
def source_frames(stack_trace: str) -> tuple[Frame | None, Frame | None]:
    """``(the frame to show, the innermost frame when it is another one)``. fxlab's own
    frames (its npu-device mode, which Dynamo steps through for a call naming a device) are
    no one's source."""
    found = tuple(frame for frame in frames(stack_trace) if not is_fxlab_file(frame.file))
    if not found:
        return None, None
    best = min(kind(frame.file) for frame in found)
    chosen = next(frame for frame in reversed(found) if kind(frame.file) == best)
    return chosen, (found[-1] if found[-1] is not chosen else None)


def source_frame(stack_trace: str) -> tuple[str | None, int | None, str | None]:
    """(file, line, code) of the frame to show; :data:`NO_FRAME` when there is none."""
    frame, _ = source_frames(stack_trace)
    return (frame.file, frame.line, frame.code) if frame is not None else NO_FRAME


def user_frame_of(exc: BaseException, foreign: Callable[[str], bool] | None = None) -> Frame | None:
    """The innermost frame of ``exc``'s traceback in the user's code (a plugin file's
    converter, say), with its function; ``None`` when every frame is a library's.
    ``foreign(path)`` says which other files are not the user's (a TorchAir copy)."""
    for entry in reversed(traceback.extract_tb(exc.__traceback__)):
        if kind(entry.filename) == USER and not (foreign and foreign(entry.filename)):
            return Frame(entry.filename, entry.lineno or 0, entry.line or None, entry.name)
    return None


def describe_user_frame(exc: BaseException, foreign: Callable[[str], bool] | None = None) -> str:
    """``" in fn at file:line (`code`)"`` for :func:`user_frame_of`, or ``""``."""
    frame = user_frame_of(exc, foreign)
    if frame is None:
        return ""
    code = f" (`{frame.code}`)" if frame.code else ""
    return f" in {frame.function} at {frame.location}{code}"


def library_location(stack_trace: str | None) -> str | None:
    """``file:line`` of the innermost frame, when the node's source is another frame."""
    if not stack_trace:
        return None
    _, innermost = source_frames(stack_trace)
    return innermost.location if innermost is not None else None


@functools.lru_cache(maxsize=4096)
def kind(path: str) -> int:
    """``USER`` for the user's code, ``TORCH`` for torch's own files, ``LIBRARY`` for any
    other installed package or the standard library (and fxlab itself)."""
    real = os.path.realpath(path)
    if real.startswith(_torch_root()):
        return TORCH
    return LIBRARY if real.startswith(_library_roots()) else USER


def raise_location(exc: BaseException) -> str | None:
    """``file:line`` of the innermost frame of ``exc``'s traceback in the user's code
    (else outside torch, else the innermost): where a model's own code raised."""
    found = [(f.filename, f.lineno) for f in traceback.extract_tb(exc.__traceback__) if f.lineno is not None]
    for wanted in (USER, LIBRARY):
        mine = [(file, line) for file, line in found if kind(file) == wanted and not is_fxlab_file(file)]
        if mine:
            return location(*mine[-1])
    return location(*found[-1]) if found else None


def is_fxlab_file(path: str) -> bool:
    """Whether ``path`` is one of fxlab's own files."""
    return os.path.realpath(path).startswith(_fxlab_root())


def library_relative(path: str) -> str:
    """``path`` from the installed-packages folder (or standard library) holding it:
    ``transformers/integrations/moe.py``; ``path`` itself when no such folder holds it."""
    real = os.path.realpath(path)
    torch_parent = os.path.dirname(_torch_root().rstrip(os.sep)) + os.sep  # torch's files show "torch/"
    roots = [root for root in (*_library_roots(), torch_parent) if root != _fxlab_root() and real.startswith(root)]
    return real[len(max(roots, key=len)) :] if roots else path


@functools.cache
def _fxlab_root() -> str:
    return os.path.realpath(os.path.dirname(os.path.abspath(__file__))) + os.sep


@functools.cache
def _torch_root() -> str:
    return os.path.realpath(os.path.dirname(torch.__file__)) + os.sep


@functools.cache
def _library_roots() -> tuple[str, ...]:
    paths = {*site.getsitepackages(), site.getusersitepackages()}
    paths |= {sysconfig.get_paths().get(key, "") for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots = {os.path.realpath(p) + os.sep for p in paths if p}
    return (*roots, _fxlab_root())  # fxlab's own files (a scope marker's library)


def location(file: str | None, line: int | None) -> str | None:
    """``file:line``, or ``None`` when either is unknown."""
    return f"{file}:{line}" if file and line else None


def parse_source(node: Any) -> str | None:
    """``file:line`` of the user code that produced the FX ``node``, parsed from its
    stack trace (the cache is not read)."""
    stack_trace = node.meta.get("stack_trace")
    file, line, _ = source_frame(stack_trace) if stack_trace else NO_FRAME
    return location(file, line)


def node_source(node: Any) -> str | None:
    """``file:line`` of the user code that produced the FX ``node``: its cached
    :data:`SOURCE_KEY`, else parsed from its stack trace."""
    cached = node.meta.get(SOURCE_KEY)
    return cached if cached is not None else parse_source(node)


def calling_line(frame: Any) -> str | None:
    """``file:line`` of the innermost frame of the user's code on the stack from ``frame``
    (a live frame) outwards: not torch's, an installed library's or fxlab's; else the
    innermost frame outside fxlab and torch. Walks the frames, reads no source."""
    fallback = inline = None
    while frame is not None:
        file = frame.f_code.co_filename
        if file in INLINE_PROGRAMS:
            inline = inline or location(file, frame.f_lineno)
        elif not file.startswith("<") and not is_fxlab_file(file):
            where = kind(file)
            if where == USER:
                return location(file, frame.f_lineno)
            if where != TORCH and fallback is None:
                fallback = location(file, frame.f_lineno)
        frame = frame.f_back
    return inline or fallback


# A program given on the command line (``python -c``, ``python -`` or a pipe): its code has
# no file, and its lines are the user's (generated code has ``<...>`` names of its own).
INLINE_PROGRAMS = ("<string>", "<stdin>")
