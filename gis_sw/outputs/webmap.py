r"""One self-contained HTML web map that works offline.

Leaflet 1.9.4's JavaScript and CSS (vendored in ``gis_sw/outputs/vendor/leaflet`` with its
BSD-2-Clause licence) are inlined, its two control images become data URIs, points are drawn
as circle markers (no marker images), and a Content-Security-Policy forbids every request, so
opening the file with the network off shows everything and asks no server for anything.

Attribute text is never put into HTML: the layers travel as JSON inside a
``<script type="application/json">`` block (``<``, ``>`` and ``&`` escaped as ``\u003c`` ...)
and the page writes them with ``textContent``, so a parcel owner called ``<script>`` shows as
text.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import json
import logging
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gis_sw.outputs.atomic import write_text_atomic
from gis_sw.outputs.maps.furniture import DISCLAIMER
from gis_sw.outputs.webmap_layers import PAD_FT, build_layers, feature_collection

if TYPE_CHECKING:
    from gis_sw.screening import Screening

log = logging.getLogger(__name__)

__all__ = ["build_layers", "feature_collection", "render_webmap", "write_webmap"]

_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)


def _vendor(name: str) -> bytes:
    return resources.files("gis_sw.outputs").joinpath("vendor", "leaflet", name).read_bytes()


def leaflet_assets() -> tuple[str, str, str]:
    """Return Leaflet's JS and CSS ready to inline, and its licence text.

    The source-map line is dropped and the images become data URIs.
    """
    script = _vendor("leaflet.js").decode("utf-8")
    script = re.sub(r"//# sourceMappingURL=\S+\s*$", "", script)
    css = _vendor("leaflet.css").decode("utf-8")

    def data_uri(match: re.Match[str]) -> str:
        name = match.group(1)
        try:
            png = _vendor(name)
        except FileNotFoundError:
            return "none"
        return f"url(data:image/png;base64,{base64.b64encode(png).decode('ascii')})"

    css = re.sub(r"url\(images/([A-Za-z0-9_.-]+)\)", data_uri, css)
    licence = _vendor("LICENSE").decode("utf-8")
    return script, css, licence


def _json_for_script(payload: Any) -> str:
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


_PAGE_CSS = """
html, body { height: 100%; margin: 0; font: 13px/1.35 sans-serif; }
#map { position: absolute; inset: 0; background: #f6f6f2; }
.gsw-swatch { display: inline-block; width: 14px; height: 10px; border: 2px solid #000;
  vertical-align: middle; }
.gsw-popup-title { font-weight: bold; margin-bottom: 4px; }
.gsw-message { margin: 4px 0 6px; }
.gsw-popup table { border-collapse: collapse; font-size: 12px; }
.gsw-popup th { text-align: left; padding-right: 8px; color: #555; font-weight: normal; }
.gsw-measure a { width: auto !important; padding: 0 8px; font-size: 12px; }
.gsw-readout { background: #fff; padding: 0 6px; font-size: 12px; }
.gsw-title { background: rgba(255,255,255,0.92); padding: 6px 10px; border: 1px solid #999;
  max-width: 420px; }
.gsw-disclaimer { font-weight: bold; margin-top: 3px; }
.gsw-apps { background: #fff; border: 1px solid #999; padding: 6px; width: 260px;
  max-height: 45vh; overflow-y: auto; }
.gsw-apps input { width: 100%; box-sizing: border-box; margin-bottom: 4px; }
.gsw-app { padding: 3px 2px; border-top: 1px solid #eee; cursor: pointer; }
.gsw-app:hover { background: #f0f4ff; }
.gsw-app .gsw-verdict { font-size: 11px; color: #444; }
.gsw-app.fail .gsw-verdict { color: #b00020; } .gsw-app.review .gsw-verdict { color: #8a5a00; }
.gsw-label { font-weight: bold; background: rgba(255,255,255,0.85); border: 1px solid #666; }
.gsw-hit { border-top: 1px solid #ddd; padding-top: 4px; margin-top: 4px; }
"""


def render_webmap(
    screening: Screening,
    *,
    siting: bool = False,
    proposal_ids: Sequence[str] | None = None,
    pad_ft: float = PAD_FT,
) -> str:
    """Return the web map's HTML text (see :func:`write_webmap`)."""
    from gis_sw.outputs.webmap_index import application_entries

    proposals, ruleset = screening.proposals, screening.ruleset
    web_layers, bounds = build_layers(
        screening, siting=siting, proposal_ids=proposal_ids, pad_ft=pad_ft
    )
    ids = list(proposal_ids) if proposal_ids is not None else proposals.ids
    names = [proposals.attributes["name"].get(i) for i in ids] if len(proposals.attributes) else []
    shown = [
        f"{i} ({n})" if isinstance(n, str) and n else i for i, n in zip(ids, names, strict=False)
    ]
    if len(shown) > 3:
        title = f"Stormwater screening: {len(shown)} proposals ({ids[0]} ... {ids[-1]})"
    else:
        title = "Stormwater screening: " + (", ".join(shown) or "no proposal")
    payload = {
        "title": title,
        "subtitle": f"{ruleset.title}; ruleset {ruleset.name} {ruleset.version}; run "
        f"{dt.datetime.now(tz=dt.UTC).date().isoformat()}",
        "disclaimer": DISCLAIMER,
        "bounds": bounds,
        "applications": application_entries(
            layers=screening.layers,
            proposals=proposals,
            findings=screening.findings,
            proposal_ids=ids,
        ),
        "layers": [
            {
                "key": w.key,
                "title": w.title,
                "style": w.style,
                "visible": w.visible,
                "features": w.features,
            }
            for w in web_layers
        ],
    }
    script, css, licence = leaflet_assets()
    app = resources.files("gis_sw.outputs.maps").joinpath("webmap.js").read_text("utf-8")
    licence_comment = licence.replace("--", "- -")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<!-- Leaflet 1.9.4, inlined. Its licence:\n{licence_comment}\n-->\n"
        f"<style>\n{css}\n</style>\n<style>{_PAGE_CSS}</style>\n</head>\n<body>\n"
        '<div id="map"></div>\n'
        f'<script type="application/json" id="gis-sw-data">{_json_for_script(payload)}</script>\n'
        f"<script>\n{script}\n</script>\n<script>\n{app}\n</script>\n</body>\n</html>\n"
    )


def write_webmap(
    path: str | Path,
    screening: Screening,
    *,
    siting: bool = False,
    overwrite: bool = False,
    proposal_ids: Sequence[str] | None = None,
    pad_ft: float = PAD_FT,
) -> Path:
    """Write ``webmap.html``: every layer toggleable, findings with message and citation.

    Parameters
    ----------
    path
        The file to write.
    screening
        The screening drawn: its town's layers within ``pad_ft`` of the proposals, the
        proposals and their findings.
    siting
        Add the screening's siting polygons.
    overwrite
        Replace an existing file.
    proposal_ids
        Only these proposals (default: every one).
    pad_ft
        Ground shown around the proposals.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    OutputError
        When the file exists without ``overwrite`` or cannot be written.
    """
    text = render_webmap(screening, siting=siting, proposal_ids=proposal_ids, pad_ft=pad_ft)
    target = write_text_atomic(path, text, overwrite=overwrite)
    log.info("web map %s (%d kB)", target, len(text) // 1024)
    return target
