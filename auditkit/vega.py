"""Charts drawn with no network: the Vega-Lite mime type JupyterLab draws with its own Vega, a static SVG
(vl-convert), and a chart embedded in an HTML page with the Vega bundle inlined (one chart's page,
:func:`chart_page`; a notebook's export, :func:`auditkit.notebooks.export_html`). Used by
:mod:`auditkit.charts` and :mod:`auditkit.notebooks` alike."""

from __future__ import annotations

import html
import json
import uuid
from typing import Any

__all__ = ["VEGALITE_V5_MIME", "VEGALITE_V5_SCHEMA", "static_svg", "embed", "bundle", "chart_page"]

VEGALITE_V5_MIME = "application/vnd.vegalite.v5+json"
"""The Vega-Lite mime type JupyterLab 4 (and Notebook 7) draw with their own bundled Vega, no network."""
VEGALITE_V5_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"


def static_svg(spec: dict[str, Any]) -> str:
    """The chart as SVG, drawn by vl-convert at the Vega-Lite version Altair writes."""
    import vl_convert as vlc
    from altair.utils._importers import vl_version_for_vl_convert

    return vlc.vegalite_to_svg(spec, vl_version=vl_version_for_vl_convert())


def embed(spec: dict[str, Any]) -> str:
    """A div and the vegaEmbed call that draws ``spec`` in it: ``<``, ``>`` and ``&`` of the spec's text (log text)
    written as JSON escapes (``\\u003c``), so nothing in it ends the script or opens a comment in it."""
    div = f"auditkit-chart-{uuid.uuid4().hex[:12]}"
    data = json.dumps(spec).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (f'<div id="{div}"></div><script type="text/javascript">'
            f'vegaEmbed("#{div}", {data}, {{"actions": false}}).catch(console.error);</script>')


def bundle() -> str:
    """The script element of the Vega, Vega-Lite and vega-embed bundle (offline), at the version Altair writes."""
    import vl_convert as vlc
    from altair.utils._importers import vl_version_for_vl_convert

    code = vlc.javascript_bundle(vl_version=vl_version_for_vl_convert()).replace("</script", "<\\/script")
    return f'<script type="text/javascript">\n{code}\n</script>'


def chart_page(spec: dict[str, Any], title: str = "chart") -> str:
    """One chart as a self-contained HTML page (works offline), its data inlined as :func:`embed` does:
    ``charts.save_chart``'s ``.html`` (vl-convert's own page wrote log text into its script unescaped)."""
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"{bundle()}</head><body>{embed(spec)}</body></html>")
