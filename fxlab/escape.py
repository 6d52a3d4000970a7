"""User-derived text escaped for where it goes: shown (terminal, HTML, comments) or
written as a Python string literal.

Model paths, op names, GE op types, exception messages and scope names are user text.
Bidi controls (U+202E and friends) reorder the characters after them ("Trojan Source"),
and C0/C1 controls (ESC) drive the terminal: both are shown as ``\\uXXXX`` so what is
printed is what is there. (Rich markup is the console's business: ``fxlab.viz.safe_text``.)
"""

from __future__ import annotations

from json.encoder import encode_basestring

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
LINE_SEPARATORS = "\u2028\u2029"  # line breaks to some editors and viewers
_CONTROLS = [chr(c) for c in range(0x20) if chr(c) not in "\n\t"] + [chr(0x7F)] + [chr(c) for c in range(0x80, 0xA0)]
_ESCAPES = {ord(c): f"\\u{ord(c):04x}" for c in BIDI_CONTROLS + LINE_SEPARATORS + "".join(_CONTROLS)}
_ONE_LINE = {**_ESCAPES, ord("\n"): "\\n"}


def visible(text: str) -> str:
    """``text`` with bidi and terminal control characters written as ``\\uXXXX``."""
    return text.translate(_ESCAPES)


def one_line(text: str) -> str:
    """:func:`visible`, and a line break as ``\\n``: for a comment or a one-line cell."""
    return text.translate(_ONE_LINE)


def python_str_literal(text: str) -> str:
    """A double-quoted Python literal of ``text``: quotes, backslashes and line breaks
    escaped (JSON's escapes are Python's), and every character that is not printable
    (bidi controls, U+2028, C1 controls) as ``\\uXXXX``, so the literal is one line that
    reads as what it holds."""
    literal = encode_basestring(text)
    if literal.isprintable():
        return literal
    return "".join(c if c.isprintable() else _unicode_escape(c) for c in literal)


def _unicode_escape(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
