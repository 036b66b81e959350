"""One answer and its evidence as a self-contained HTML page (`kgqa ask --graph FILE.html`): the same drawing
as the web page of `kgqa serve`, with the graph library inlined so that the file opens offline."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from kgqa.core.errors import BadInput, KgqaError
from kgqa.service.app import STATIC


def _script_json(value: Any) -> str:
    """JSON that cannot close the <script> element it sits in, whatever the KG's names hold."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")


def evidence_html(result: dict[str, Any]) -> str:
    rows = "\n".join(
        f"<tr><td>{i}</td><td>{html.escape(h)}</td><td>{html.escape(r)}</td><td>{html.escape(t)}</td></tr>"
        for i, (h, r, t) in enumerate(result.get("triplets", []), 1)
    )
    answers = ", ".join(html.escape(a) for a in result.get("answers", [])[:20]) or "no answer"
    library = (STATIC / "vendor" / "cytoscape.min.js").read_text(encoding="utf-8")
    drawing = (STATIC / "graph.js").read_text(encoding="utf-8")
    style = (STATIC / "style.css").read_text(encoding="utf-8")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kgqa: {html.escape(result.get("question", ""))}</title>
<style>{style}</style></head>
<body>
<h1>{html.escape(result.get("question", ""))}</h1>
<div class="answers">{answers}</div>
<div class="meta">topic: {html.escape(", ".join(result.get("topic_entities", [])) or "none")} ·
method {html.escape(str(result.get("method")))} · kg {html.escape(str(result.get("kg")))}</div>
<div id="graph" class="graph"></div>
<div class="legend"><span class="dot topic"></span> topic entity <span class="dot answer"></span> answer
<span class="line path"></span> path from topic to answer</div>
<table><thead><tr><th>#</th><th>subject</th><th>relation</th><th>object</th></tr></thead><tbody>
{rows}
</tbody></table>
<script>{library}</script>
<script>{drawing}</script>
<script>
window.kgqaLastGraph = kgqaDrawEvidence(document.getElementById("graph"), {_script_json(result)});
</script>
</body></html>
"""


def check_page_path(path: Path) -> None:
    if path.suffix.lower() not in (".html", ".htm"):
        raise BadInput(f"--graph writes an HTML page: name the file .html, not {path.name!r}")
    if not path.parent.is_dir():
        raise BadInput(f"--graph: the folder {path.parent} does not exist")


def write_evidence_html(result: dict[str, Any], path: Path) -> None:
    check_page_path(path)
    try:
        path.write_text(evidence_html(result), encoding="utf-8")
    except OSError as exc:
        raise KgqaError(f"cannot write {path}: {exc.strerror or exc}") from None
