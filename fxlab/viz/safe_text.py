"""User-derived text made safe for a terminal: never read as rich markup, and with the
characters that would change what the rest of a line looks like shown as escapes.

Model paths, op names, GE op types, exception messages and scope names are user text.
Rich reads ``[`` ... ``]`` in a plain ``str`` as markup (``[/]`` raises, ``[bold]`` vanishes,
``[link=...]`` becomes a hyperlink); a :class:`rich.text.Text` is never parsed. Bidi
controls (U+202E and friends) reorder the characters after them, and C0/C1 controls
(ESC) drive the terminal: both are shown as ``\\uXXXX`` so what is printed is what is there.
"""
from __future__ import annotations

from rich.text import Text

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_CONTROLS = [chr(c) for c in range(0x20) if chr(c) not in "\n\t"] + [chr(0x7F)] + [chr(c) for c in range(0x80, 0xA0)]
_ESCAPES = {ord(c): f"\\u{ord(c):04x}" for c in BIDI_CONTROLS + "".join(_CONTROLS)}


def visible(text: str) -> str:
    """``text`` with bidi and terminal control characters written as ``\\uXXXX``."""
    return text.translate(_ESCAPES)


def plain(text: object, style: str = "") -> Text:
    """A renderable showing ``text`` as it is (no markup, controls escaped)."""
    return Text(visible(str(text)), style=style)
