"""``gis-sw serve``: a local web app that re-checks the law while a device is moved.

:mod:`gis_sw.serve.app` holds the Starlette application over one
:class:`~gis_sw.api.Town`; :mod:`gis_sw.serve.codec` turns the page's GeoJSON document into
:class:`~gis_sw.layers.proposals.Proposals` and back; ``static/`` holds the page, with
Leaflet (shared with the web map) and Leaflet-Geoman vendored, so no request leaves the
local server.
"""
