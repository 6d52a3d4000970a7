"""Several HTML reports in one page: a multi-rank trace (each rank's report), a program
run (each compile's trace).

Every report (:func:`fxlab.viz.html_report.html_report`, a whole page with its graph
viewer) is embedded as the ``srcdoc`` of a frame; the selector at the top shows one at a
time, with a caption (which ranks' graphs are alike in structure; where a program compiled
the function). The file stays self-contained.
"""

from __future__ import annotations

import html

from fxlab.distributed.layout import ranks_text
from fxlab.viz.html_report import script_json

_STYLE = """
body { margin: 0; font-family: system-ui, sans-serif; }
header { padding: 0.5em 1em; border-bottom: 1px solid #ccc; display: flex; gap: 1em; align-items: center; }
iframe { width: 100%; height: calc(100vh - 3em); border: 0; display: none; }
iframe.shown { display: block; }
.alike { color: #555; }
"""

_SCRIPT = """
const select = document.getElementById('KEY');
function show() {
  for (const frame of document.querySelectorAll('iframe')) frame.classList.toggle('shown', frame.dataset.KEY === select.value);
  document.getElementById('alike').textContent = ALIKE[select.value] || '';
}
select.addEventListener('change', show);
show();
"""


def framed_pages(title: str, key: str, pages: list[tuple[str, str, str, str]]) -> str:
    """One page holding several reports: ``pages`` are (value, label, caption, report
    HTML); ``key`` names the selector (a plain word: ``rank``, ``trace``)."""
    captions = {value: caption for value, _, caption, _ in pages}
    options = "".join(f'<option value="{html.escape(value)}">{html.escape(label)}</option>' for value, label, _, _ in pages)
    frames = "".join(
        f'<iframe data-{key}="{html.escape(value)}" title="{html.escape(label)}" srcdoc="{html.escape(page, quote=True)}"></iframe>'
        for value, label, _, page in pages
    )
    script = _SCRIPT.replace("KEY", key).replace("ALIKE", f"({script_json(captions)})")
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        f'<header><strong>{html.escape(title)}</strong><label>{key} <select id="{key}">{options}</select></label>'
        f'<span id="alike" class="alike"></span></header>{frames}<script>{script}</script></body></html>\n'
    )


def rank_report(pages: dict[int, str | None], groups: list[list[int]]) -> str:
    """One page holding every rank's report (``pages``: rank -> its HTML report)."""
    alike = {r: _alike_text(g) for g in groups for r in g}
    entries = [(str(r), f"rank {r}", alike.get(r, ""), page or _missing(r)) for r, page in sorted(pages.items())]
    return framed_pages(f"fxlab trace · {len(pages)} ranks", "rank", entries)


def _alike_text(group: list[int]) -> str:
    return f"graphs identical in structure on ranks {ranks_text(group)}" if len(group) > 1 else "graphs unlike every other rank's"


def _missing(rank: int) -> str:
    return f"<p>rank {rank} made no report</p>"
