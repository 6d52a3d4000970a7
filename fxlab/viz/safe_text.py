"""User text as rich renderables: never read as markup, controls shown escaped.

Rich reads ``[`` ... ``]`` in a plain ``str`` as markup (``[/]`` raises, ``[bold]``
vanishes, ``[link=...]`` becomes a hyperlink); a :class:`rich.text.Text` is never parsed.
"""

from __future__ import annotations

from rich.text import Text

from fxlab.escape import one_line, visible

__all__ = ["plain", "plain_line", "visible"]


def plain(text: object, style: str = "") -> Text:
    """A renderable showing ``text`` as it is (no markup, controls escaped)."""
    return Text(visible(str(text)), style=style)


def plain_line(text: object, style: str = "") -> Text:
    """:func:`plain` on one line: a line break in ``text`` (an op name a dump holds) shown as
    ``\\n``, so it cannot start a line of its own in a table cell or a list."""
    return Text(one_line(str(text)), style=style)
