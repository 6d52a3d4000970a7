"""The HTML report of a multi-rank trace: each rank's report, and a rank selector.

Every rank's own report (:func:`fxlab.viz.html_report.html_report`, a whole page with its
graph viewer) is embedded as the ``srcdoc`` of a frame; the selector at the top shows one
rank at a time and says which ranks' graphs are alike in structure. The file stays
self-contained.
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
const select = document.getElementById('rank');
function show() {
  for (const frame of document.querySelectorAll('iframe')) frame.classList.toggle('shown', frame.dataset.rank === select.value);
  document.getElementById('alike').textContent = ALIKE[select.value] || '';
}
select.addEventListener('change', show);
show();
"""


def rank_report(pages: dict[int, str | None], groups: list[list[int]]) -> str:
    """One page holding every rank's report (``pages``: rank -> its HTML report)."""
    alike = {str(r): _alike_text(g) for g in groups for r in g}
    options = "".join(f'<option value="{r}">rank {r}</option>' for r in sorted(pages))
    frames = "".join(
        f'<iframe data-rank="{r}" title="rank {r}" srcdoc="{html.escape(page or _missing(r), quote=True)}"></iframe>'
        for r, page in sorted(pages.items())
    )
    script = _SCRIPT.replace("ALIKE", f"({script_json(alike)})")
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>fxlab trace · {len(pages)} ranks</title><style>{_STYLE}</style></head><body>"
        f'<header><strong>fxlab trace · {len(pages)} ranks</strong><label>rank <select id="rank">{options}</select></label>'
        f'<span id="alike" class="alike"></span></header>{frames}<script>{script}</script></body></html>\n'
    )


def _alike_text(group: list[int]) -> str:
    return f"graphs identical in structure on ranks {ranks_text(group)}" if len(group) > 1 else "graphs unlike every other rank's"


def _missing(rank: int) -> str:
    return f"<p>rank {rank} made no report</p>"
