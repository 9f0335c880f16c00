"""The ``gis-sw serve`` web app: a Starlette application over one :class:`~gis_sw.api.Town`.

The screening, siting, reading and writing run in Starlette's thread pool, so the page and
its files are served while a check runs; the :class:`~gis_sw.api.Town` is only read by
them (each check builds its own context).

Endpoints (JSON unless said; every error is ``{"error": "..."}`` with HTTP 400, 404 or 413):

=======================================  ===========================================================
``GET /``                                the page
``GET /static/...``                      the page's script, style and vendored Leaflet, Geoman
``GET /api/town``                        name, bounds (EPSG:4326), choices for the side form,
                                         limits, and the documents of ``--proposals`` if given
``GET /api/parcels?bbox=w,s,e,n``        parcels in a box (at most :data:`MAX_PARCELS`)
``GET /api/parcels/at?lon=&lat=``        the parcel under a point (or within 25 ft)
``GET /api/parcels/search?q=``           parcels whose id or address contains ``q``
``GET /api/lot/{parcel_id}``             the lot and the town features within reach of it
``GET /api/siting?parcel_id=&device_class=&depth_ft=``
                                         the legal siting polygon, its area and setback lines
``POST /api/check``                      a proposal document (:mod:`gis_sw.serve.codec`) →
                                         findings and their geometries (EPSG:4326)
``POST /api/upload?filename=``           a proposals file as the raw body → documents
``POST /api/export?format=gpkg|geojson`` a proposal document → the file ``gis-sw check`` reads
``POST /api/export/findings?format=``    a proposal document, screened again → its findings as
                                         ``csv`` (``summary.csv``) or ``geojson`` (a zip of
                                         ``findings.geojson``, ``findings_lines.geojson``,
                                         ``findings_points.geojson``), as ``gis-sw check`` writes
``POST /api/export/sheet``               a proposal document, screened again → its map sheet PDF
                                         (``gis-sw check``'s sheet, siting polygons drawn)
=======================================  ===========================================================

Limits: a proposal document is at most :data:`MAX_DOCUMENT_BYTES`, an upload at most
:data:`MAX_UPLOAD_BYTES` (HTTP 413 beyond).  A sheet is drawn for at most
:data:`MAX_SHEET_PAGES` pages (a map book beyond: HTTP 400, use ``gis-sw check``), and one at
a time (HTTP 503 while another is drawn); exports are written to a fresh temporary folder and
sent from memory.  Nothing the client sends names a file on the
server: an upload is written to a fresh temporary folder under a fixed name with the
extension of ``filename``, and messages name the client's file name, never that folder.
"""

from __future__ import annotations

import io
import json
import logging
import re
import tempfile
import threading
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import shapely
from pyproj import Transformer
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from gis_sw.api import Town, setback_lines
from gis_sw.errors import GisSwError
from gis_sw.layers.proposals import Proposals
from gis_sw.layers.specs import LAND_USES
from gis_sw.serve.codec import (
    WGS84,
    RequestError,
    export_geojson,
    export_gpkg,
    parse_document,
    to_documents,
)
from gis_sw.serve.findings_json import encode_findings, json_number
from gis_sw.serve.http import (
    LOCAL_NAMES,
    STATIC_FILES,
    BusyError,
    asset,
    error,
    guarded,
    hide_folder,
    read_body,
)

log = logging.getLogger(__name__)

MAX_DOCUMENT_BYTES = 2 * 1024 * 1024
"""Largest proposal document the page may send (2 MiB)."""
MAX_UPLOAD_BYTES = 20 * 1024 * 1024
"""Largest proposals file that may be uploaded (20 MiB)."""
MAX_PARCELS = 3000
"""Most parcels one ``/api/parcels`` answer holds (the page asks when zoomed in)."""
MAX_SHEET_PAGES = 4
"""Most pages of a sheet PDF drawn from the page (a few seconds each)."""
UPLOAD_SUFFIXES = (".gpkg", ".geojson", ".json", ".fgb", ".parquet", ".dxf", ".zip")
"""File kinds an upload may be (a zipped Shapefile as ``.zip``)."""

CONTEXT_LAYERS = ("buildings", "wells", "septic_fields", "wetlands", "water_bodies")
OUTCOME_ORDER = ("fail", "review", "required", "info", "pass")


class App:
    """The routes over one town (kept apart from Starlette so tests can build it cheaply)."""

    def __init__(self, town: Town, *, proposals: Proposals | None = None) -> None:
        self.town = town
        self.to_wgs = Transformer.from_crs(town.crs, WGS84, always_xy=True)
        self.to_town = Transformer.from_crs(WGS84, town.crs, always_xy=True)
        self.documents = to_documents(proposals) if proposals is not None else []
        self.page = asset("serve", "index.html")
        self._drawing = threading.Lock()

    # -- helpers ------------------------------------------------------------------------------

    def _fc(self, frame: Any, columns: tuple[str, ...]) -> dict[str, Any]:
        from gis_sw.outputs.webmap import feature_collection

        return feature_collection(frame, columns)

    async def _document(self, request: Request) -> Proposals:
        raw = await read_body(request, MAX_DOCUMENT_BYTES)
        try:
            doc = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise RequestError(f"the body is not JSON ({exc}).") from None
        proposals = await run_in_threadpool(parse_document, doc, self.town.ruleset)
        self._inside_town(proposals, "the proposal")
        return proposals

    def _inside_town(self, proposals: Proposals, what: str) -> None:
        geoms = [g for g in proposals.disturbance.geometry.to_numpy() if g is not None]
        geoms += [g for g in proposals.devices.geometry.to_numpy() if g is not None]
        if not geoms:
            return
        town_box = shapely.box(*self.town.bounds)
        if not shapely.intersects(shapely.box(*shapely.total_bounds(geoms)), town_box):
            raise RequestError(
                f"{what} lies outside the town's layers (none of it is within their extent). "
                "Fix: check the file's CRS, or that it is a proposal in this town."
            )

    # -- endpoints ----------------------------------------------------------------------------

    async def index(self, request: Request) -> Response:
        """Answer ``GET /``: the page."""
        return Response(self.page, media_type="text/html; charset=utf-8")

    async def static(self, request: Request) -> Response:
        """Answer ``GET /static/NAME``: the page's script, style and vendored libraries."""
        name = request.path_params["name"]
        if name not in STATIC_FILES:
            return error("no such file", 404)
        where, path, media = STATIC_FILES[name]
        return Response(asset(where, path), media_type=media)

    async def town_info(self, request: Request) -> Response:
        """Answer ``GET /api/town``: name, bounds, the side form's choices, the documents."""
        minx, miny, maxx, maxy = self.town.bounds
        west, south = self.to_wgs.transform(minx, miny)
        east, north = self.to_wgs.transform(maxx, maxy)
        ruleset = self.town.ruleset
        return JSONResponse(
            {
                "title": ruleset.title,
                "municipality": ruleset.municipality,
                "decision_maker": ruleset.decision_maker,
                "bounds": [west, south, east, north],
                "land_uses": list(LAND_USES),
                "exemptions": dict(ruleset.exemptions),
                "device_classes": ["roof", "vehicle"],
                "max_upload_bytes": MAX_UPLOAD_BYTES,
                "documents": self.documents,
            }
        )

    def _parcels_fc(self, frame: Any) -> dict[str, Any]:
        return self._fc(frame, ("parcel_id", "address", "owner"))

    async def parcels(self, request: Request) -> Response:
        """Answer ``GET /api/parcels?bbox=``: the parcels in a box, or ``too_many``."""
        try:
            w, s, e, n = (float(v) for v in request.query_params.get("bbox", "").split(","))
        except ValueError:
            return error("bbox must be four numbers: west,south,east,north (degrees).")
        xs, ys = self.to_town.transform([w, e, e, w], [s, s, n, n])
        hits = self.town.parcels_in(shapely.box(min(xs), min(ys), max(xs), max(ys)))
        if len(hits) > MAX_PARCELS:
            return JSONResponse({"type": "FeatureCollection", "features": [], "too_many": True})
        return JSONResponse(self._parcels_fc(hits))

    async def parcel_at(self, request: Request) -> Response:
        """Answer ``GET /api/parcels/at?lon=&lat=``: the parcel under a point (or 25 ft off)."""
        try:
            lon = float(request.query_params["lon"])
            lat = float(request.query_params["lat"])
        except (KeyError, ValueError):
            return error("give lon and lat as numbers (degrees).")
        x, y = self.to_town.transform(lon, lat)
        hits = self.town.parcels_near(x, y, 25.0)
        return JSONResponse(self._parcels_fc(hits.iloc[:1]))

    async def search(self, request: Request) -> Response:
        """Answer ``GET /api/parcels/search?q=``: parcels whose id or address contains ``q``."""
        text = request.query_params.get("q", "")[:200]
        hits = self.town.search_parcels(text)
        return JSONResponse(self._parcels_fc(hits))

    async def lot(self, request: Request) -> Response:
        """Answer ``GET /api/lot/ID``: the lot, its neighbours, the town features near it."""
        parcel_id = request.path_params["parcel_id"]
        parcel = self.town.parcel(parcel_id)
        local = self.town.local([parcel.geometry.iloc[0]])
        context = {}
        reach = parcel.geometry.iloc[0].buffer(self.town.ruleset.devices.largest_setback_ft)
        for kind in CONTEXT_LAYERS:
            frame = local.get(kind)
            if frame is None:
                continue
            near = frame[shapely.intersects(frame.geometry.to_numpy(), reach)]
            columns = tuple(c for c in near.columns if c != near.geometry.name)
            context[kind] = self._fc(near, columns)
        neighbours = self.town.parcels_in(reach)
        return JSONResponse(
            {
                "parcel": self._parcels_fc(parcel),
                "neighbours": self._parcels_fc(neighbours),
                "context": context,
            }
        )

    async def siting(self, request: Request) -> Response:
        """Answer ``GET /api/siting``: the legal siting polygon, its area and setback lines."""
        q = request.query_params
        parcel_id = q.get("parcel_id", "")
        klass = q.get("device_class", "roof")
        if klass not in ("roof", "vehicle"):
            return error("device_class must be roof or vehicle.")
        depth: float | None = None
        if q.get("depth_ft"):
            try:
                depth = float(q["depth_ft"])
            except ValueError:
                return error("depth_ft must be a number of feet.")
            if not np.isfinite(depth) or depth < 0:
                return error("depth_ft must be 0 or more (feet below ground).")
        frame = await run_in_threadpool(
            self.town.siting, [parcel_id], device_classes=(klass,), depth_ft=depth
        )
        sited = next(iter(frame.values()))
        lines = await run_in_threadpool(setback_lines, self.town, parcel_id, klass)
        row = sited.iloc[0]
        return JSONResponse(
            {
                "parcel_id": parcel_id,
                "device_class": klass,
                "depth_ft": depth,
                "area_sqft": json_number(row["area_sqft"]),
                "outcome": str(row["outcome"]),
                "reason": str(row["reason"]),
                "polygon": self._fc(sited, ("parcel_id", "area_sqft", "outcome")),
                "setbacks": self._fc(lines, ("rule_id", "distance_ft", "label", "citation")),
            }
        )

    async def check(self, request: Request) -> Response:
        """Answer ``POST /api/check``: the findings of a proposal document and their geometries."""
        started = time.perf_counter()
        proposals = await self._document(request)
        parsed = time.perf_counter()
        screening = await run_in_threadpool(self.town.screen, proposals, siting=False)
        screened = time.perf_counter()
        findings = screening.findings
        rows, lines = encode_findings(findings, self.to_wgs)
        now = time.perf_counter()
        elapsed = (now - started) * 1000
        parts = {
            "parse": parsed - started,
            "screen": screened - parsed,
            "encode": now - screened,
        }
        timing = ", ".join(f"{k};dur={v * 1000:.1f}" for k, v in parts.items())
        return JSONResponse(
            {
                "proposal_id": proposals.ids[0] if proposals.ids else None,
                "findings": rows,
                "geometries": {"type": "FeatureCollection", "features": lines},
                "server_ms": round(elapsed, 1),
            },
            headers={"Server-Timing": f"{timing}, check;dur={elapsed:.1f}"},
        )

    def _stem(self, proposals: Proposals) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]", "_", proposals.ids[0])[:60] or "proposal"

    async def export_findings(self, request: Request) -> Response:
        """Answer ``POST /api/export/findings``: a document's findings as CSV or zipped GeoJSON."""
        kind = request.query_params.get("format", "csv")
        if kind not in ("csv", "geojson"):
            return error("format must be csv or geojson.")
        proposals = await self._document(request)
        body = await run_in_threadpool(self._findings_file, proposals, kind)
        stem = self._stem(proposals)
        if kind == "csv":
            name, media = f"{stem}-findings.csv", "text/csv; charset=utf-8"
        else:
            name, media = f"{stem}-findings-geojson.zip", "application/zip"
        return Response(
            body,
            media_type=media,
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    def _findings_file(self, proposals: Proposals, kind: str) -> bytes:
        from gis_sw.outputs.geojson import write_findings_geojson
        from gis_sw.outputs.summary import write_summary_csv

        findings = self.town.screen(proposals, siting=False).findings
        with tempfile.TemporaryDirectory(prefix="gis-sw-export-") as tmp:
            folder = Path(tmp)
            try:
                if kind == "csv":
                    return write_summary_csv(folder / "summary.csv", findings).read_bytes()
                written = write_findings_geojson(folder, findings)
            except GisSwError as exc:
                raise RequestError(hide_folder(str(exc), tmp)) from None
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
                for path in written:
                    archive.write(path, arcname=path.name)
            return buffer.getvalue()

    async def export_sheet(self, request: Request) -> Response:
        """Answer ``POST /api/export/sheet``: a document's map sheet PDF (one at a time)."""
        proposals = await self._document(request)
        if not self._drawing.acquire(blocking=False):
            raise BusyError("another sheet is being drawn; try again in a few seconds.")
        try:
            body = await run_in_threadpool(self._sheet_file, proposals)
        finally:
            self._drawing.release()
        return Response(
            body,
            media_type="application/pdf",
            headers={"Content-Disposition": f'attachment; filename="{self._stem(proposals)}.pdf"'},
        )

    def _sheet_file(self, proposals: Proposals) -> bytes:
        from gis_sw.outputs.maps.sheets import sheet_paths, write_sheets
        from gis_sw.screening import Screening
        from gis_sw.townparts import proposal_geoms

        findings = self.town.screen(proposals, siting=False).findings
        ids = proposals.ids[:1]
        local = self.town.local(proposal_geoms(proposals), proposal_ids=ids)
        drawn = Screening(Town(local, self.town.ruleset), proposals, findings)
        with tempfile.TemporaryDirectory(prefix="gis-sw-sheet-") as tmp:
            # one PNG per page: how many pages the PDF would have, before anything is drawn
            pages = sheet_paths(tmp, drawn, formats=("png",), proposal_ids=ids)
            if not pages:
                raise RequestError(
                    f"{ids[0]} has nothing to draw on a sheet. Fix: draw its limits of "
                    "disturbance or place a device."
                )
            if len(pages) > MAX_SHEET_PAGES:
                raise RequestError(
                    f"the sheets of {ids[0]} would run to {len(pages)} pages; the page draws "
                    f"at most {MAX_SHEET_PAGES}. Fix: export the proposal and run gis-sw "
                    "check on it for the map book."
                )
            try:
                written = write_sheets(tmp, drawn, formats=("pdf",), siting=True, proposal_ids=ids)
            except GisSwError as exc:
                raise RequestError(hide_folder(str(exc), tmp)) from None
            pdfs = [p for p in written if p.suffix == ".pdf"]
            return pdfs[0].read_bytes()

    async def upload(self, request: Request) -> Response:
        """Answer ``POST /api/upload``: a proposals file (the raw body) as page documents."""
        name = request.query_params.get("filename", "proposals.gpkg")
        shown = re.sub(r"[^A-Za-z0-9_. -]", "_", Path(name.replace("\\", "/")).name)[:80]
        suffix = Path(shown).suffix.lower()
        if suffix not in UPLOAD_SUFFIXES:
            return error(
                f"{shown}: a {suffix or 'nameless'} file cannot be read as proposals. Fix: "
                f"upload one of {', '.join(UPLOAD_SUFFIXES)}."
            )
        raw = await read_body(request, MAX_UPLOAD_BYTES)
        if not raw:
            return error(f"{shown}: the file is empty.")
        with tempfile.TemporaryDirectory(prefix="gis-sw-upload-") as tmp:
            path = Path(tmp) / f"upload{suffix}"
            path.write_bytes(raw)
            try:
                from gis_sw.layers.read import read_proposals

                proposals = await run_in_threadpool(read_proposals, path, ruleset=self.town.ruleset)
            except GisSwError as exc:
                text = str(exc).replace(str(path), shown).replace(tmp, "")
                return error(f"{shown}: {text}" if shown not in text else text)
            except Exception as exc:  # noqa: BLE001 (GDAL's errors on a file of no such format)
                text = str(exc).replace(str(path), shown).replace(tmp, "")
                return error(f"{shown} could not be read as proposals ({text[:200]}).")
        self._inside_town(proposals, shown)
        return JSONResponse({"filename": shown, "documents": to_documents(proposals)})

    async def export(self, request: Request) -> Response:
        """Answer ``POST /api/export``: a document as the GeoPackage or GeoJSON ``check`` reads."""
        kind = request.query_params.get("format", "gpkg")
        if kind not in ("gpkg", "geojson"):
            return error("format must be gpkg or geojson.")
        proposals = await self._document(request)
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", proposals.ids[0])[:60] or "proposal"
        if kind == "gpkg":
            body = await run_in_threadpool(export_gpkg, proposals)
            media = "application/geopackage+sqlite3"
        else:
            body = await run_in_threadpool(export_geojson, proposals)
            media = "application/geo+json"
        return Response(
            body,
            media_type=media,
            headers={"Content-Disposition": f'attachment; filename="{stem}.{kind}"'},
        )


def create_app(
    town: Town,
    *,
    proposals: Proposals | None = None,
    allowed_hosts: Sequence[str] = LOCAL_NAMES,
) -> Starlette:
    """Build the Starlette app over ``town`` (and the documents of ``proposals``, if given).

    ``allowed_hosts`` are the ``Host`` header values answered (``["*"]`` for any, as
    ``--host 0.0.0.0`` needs).
    """
    app = App(town, proposals=proposals)

    routes = [
        Route("/", guarded(app.index)),
        Route("/static/{name:path}", guarded(app.static)),
        Route("/api/town", guarded(app.town_info)),
        Route("/api/parcels", guarded(app.parcels)),
        Route("/api/parcels/at", guarded(app.parcel_at)),
        Route("/api/parcels/search", guarded(app.search)),
        Route("/api/lot/{parcel_id:path}", guarded(app.lot)),
        Route("/api/siting", guarded(app.siting)),
        Route("/api/check", guarded(app.check), methods=["POST"]),
        Route("/api/upload", guarded(app.upload), methods=["POST"]),
        Route("/api/export", guarded(app.export), methods=["POST"]),
        Route("/api/export/findings", guarded(app.export_findings), methods=["POST"]),
        Route("/api/export/sheet", guarded(app.export_sheet), methods=["POST"]),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))]
    starlette = Starlette(routes=routes, middleware=middleware)
    starlette.state.gis_sw = app  # the routes' object, for tests
    return starlette
