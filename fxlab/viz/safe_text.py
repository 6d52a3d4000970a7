"""User text as rich renderables: never read as markup, controls shown escaped.

Rich reads ``[`` ... ``]`` in a plain ``str`` as markup (``[/]`` raises, ``[bold]``
vanishes, ``[link=...]`` becomes a hyperlink); a :class:`rich.text.Text` is never parsed.
"""

from __future__ import annotations

from rich.text import Text

from fxlab.escape import visible

__all__ = ["plain", "visible"]


def plain(text: object, style: str = "") -> Text:
    """A renderable showing ``text`` as it is (no markup, controls escaped)."""
    return Text(visible(str(text)), style=style)
