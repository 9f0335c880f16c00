"""``gis-sw serve``: a local web app that re-checks the law while a device is moved.

:mod:`gis_sw.serve.app` holds the Starlette application over one
:class:`~gis_sw.api.Town`; :mod:`gis_sw.serve.codec` turns the page's GeoJSON document into
:class:`~gis_sw.layers.proposals.Proposals` and back; :mod:`gis_sw.serve.http` holds the
request plumbing (body limits, JSON errors, security headers) and
:mod:`gis_sw.serve.findings_json` the findings as the page shows them; ``static/`` holds the
page, with Leaflet (shared with the web map) and Leaflet-Geoman vendored, so no request
leaves the local server.
"""
