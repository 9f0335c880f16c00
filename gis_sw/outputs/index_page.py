"""``index.html``: one row per application with its verdict and counts, linking its files.

A plain, self-contained HTML page (no script, no network): it opens offline from the output
folder.  Every text that comes from the data (ids, names, verdicts) is escaped, and every
link is a relative path quoted for a URL, so a hostile id cannot inject markup.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import quote

from gis_sw.outputs.application import DISCLAIMER, ApplicationSummary
from gis_sw.outputs.atomic import write_text_atomic

_STYLE = """
body { font: 14px/1.45 "DejaVu Sans", Arial, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #ccc; padding: 0.4em 0.6em; text-align: left;
         vertical-align: top; }
th { background: #f2f2f2; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.fail { color: #b00020; font-weight: bold; }
.review { color: #8a5a00; font-weight: bold; }
.note { color: #555; font-size: 12px; }
"""


def _cell_class(summary: ApplicationSummary) -> str:
    if summary.count("fail"):
        return "fail"
    return "review" if summary.count("review") else ""


def index_html(
    summaries: Sequence[ApplicationSummary],
    links: Mapping[str, Sequence[tuple[str, str]]],
    *,
    title: str,
    footer: str,
    top_links: Sequence[tuple[str, str]] = (),
) -> str:
    """Return the page's HTML.

    Parameters
    ----------
    summaries
        One per application, in the order of the rows.
    links
        Per proposal id, ``(label, relative path)`` of its files (report, sheets ...).
    title, footer
        Page heading and the line under the table (ruleset, run date, version).
    top_links
        ``(label, relative path)`` of the run-wide files (web map, findings, summary).
    """
    esc = html.escape
    rows = []
    for s in summaries:
        anchors = " · ".join(
            f'<a href="{esc(quote(path))}">{esc(label)}</a>'
            for label, path in links.get(s.proposal_id, ())
        )
        counts = "".join(f'<td class="n">{s.count(k)}</td>' for k in ("fail", "review", "required"))
        rows.append(
            f"<tr><td>{esc(s.proposal_id)}<br><span class=note>{esc(s.name)}</span></td>"
            f'<td class="{_cell_class(s)}">{esc(s.verdict)}</td>{counts}'
            f'<td class="n">{len(s.passes)}</td><td>{anchors}</td></tr>'
        )
    top = " · ".join(f'<a href="{esc(quote(p))}">{esc(label)}</a>' for label, p in top_links)
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        f"<title>{esc(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{esc(title)}</h1><p>{top}</p>"
        "<table><thead><tr><th>Application</th><th>Verdict</th><th>Fail</th><th>Review</th>"
        "<th>Required</th><th>Met</th><th>Files</th></tr></thead><tbody>"
        + "".join(rows)
        + f"</tbody></table><p class=note>{esc(footer)}. {esc(DISCLAIMER)}.</p></body></html>\n"
    )


def write_index_html(path: str | Path, page: str, *, overwrite: bool = False) -> Path:
    """Write ``page`` atomically.

    Raises
    ------
    OutputError
        If ``path`` exists without ``overwrite`` or cannot be written.
    """
    return write_text_atomic(path, page, overwrite=overwrite)
