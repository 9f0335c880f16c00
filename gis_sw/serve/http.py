"""Request and response plumbing of ``gis-sw serve``: bodies, errors, headers, static files.

Every endpoint runs inside :func:`guarded`, which turns the errors the app raises into JSON
answers (``{"error": "..."}``: HTTP 400, 404, 413 or 503) and sets the security headers of
every response (:data:`CSP`, ``nosniff``, ``no-store``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib import resources

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gis_sw.errors import GisSwError
from gis_sw.serve.codec import RequestError

STATIC_FILES = {
    "app.js": ("serve", "app.js", "text/javascript"),
    "app.css": ("serve", "app.css", "text/css"),
    "geoman.js": ("serve", "vendor/geoman/leaflet-geoman.min.js", "text/javascript"),
    "geoman.css": ("serve", "vendor/geoman/leaflet-geoman.css", "text/css"),
    "leaflet.js": ("outputs", "leaflet/leaflet.js", "text/javascript"),
    "leaflet.css": ("outputs", "leaflet/leaflet.css", "text/css"),
    "images/layers.png": ("outputs", "leaflet/layers.png", "image/png"),
    "images/layers-2x.png": ("outputs", "leaflet/layers-2x.png", "image/png"),
}
"""``/static/NAME`` to (package, path under its static or vendor folder, media type)."""

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
"""The Content-Security-Policy of every response: the page loads nothing from elsewhere."""

LOCAL_NAMES = ("127.0.0.1", "localhost", "::1")
"""Host names the app answers to by default: a page on another site that points its own
name at 127.0.0.1 (DNS rebinding) gets HTTP 400, not the town's layers."""

Endpoint = Callable[[Request], Awaitable[Response]]


class TooLargeError(RequestError):
    """A body over its limit (HTTP 413)."""


class BusyError(RequestError):
    """Another sheet is being drawn (HTTP 503)."""


def asset(where: str, name: str) -> bytes:
    """Return a file of the page: ``serve``'s static folder, or ``outputs``' vendor folder."""
    if where == "serve":
        return resources.files("gis_sw.serve").joinpath("static", *name.split("/")).read_bytes()
    return resources.files("gis_sw.outputs").joinpath("vendor", *name.split("/")).read_bytes()


def hide_folder(text: str, folder: str) -> str:
    """Return a message without the server's temporary folder in it."""
    return text.replace(folder + "/", "").replace(folder, "")


def error(message: str, status: int = 400) -> JSONResponse:
    """Return the JSON answer ``{"error": message}`` with an HTTP status."""
    return JSONResponse({"error": message}, status_code=status)


async def read_body(request: Request, limit: int) -> bytes:
    """Return a request's body, refused as soon as it is over ``limit`` bytes.

    Raises
    ------
    TooLargeError
        When the declared length or the bytes received pass ``limit``.
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise TooLargeError(f"the body is {int(declared):,} bytes; the limit is {limit:,} bytes.")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise TooLargeError(f"the body is over the limit of {limit:,} bytes.")
        chunks.append(chunk)
    return b"".join(chunks)


def guarded(endpoint: Endpoint) -> Endpoint:
    """Wrap an endpoint: its errors become JSON answers; every response gets the headers."""

    async def run(request: Request) -> Response:
        try:
            response: Response = await endpoint(request)
        except TooLargeError as exc:
            return error(str(exc), 413)
        except BusyError as exc:
            return error(str(exc), 503)
        except GisSwError as exc:
            status = 404 if "no parcel with parcel_id" in str(exc) else 400
            return error(str(exc), status)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Cache-Control"] = "no-store"
        return response

    return run
