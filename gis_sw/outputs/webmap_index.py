"""The web map's list of applications: verdict, counts, where each is, what finds it.

One entry per application for the side list (search by application id, name, parcel id or
address; a click zooms to it) and for its label on the map.  Built from the findings and the
layers, like the report's summary (:mod:`gis_sw.outputs.deliverable`), so the list, the
report and ``index.html`` say the same verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import geopandas as gpd
import shapely

from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.outputs.application import summarise_application
from gis_sw.outputs.deliverable import application_site

WGS84 = "EPSG:4326"


def application_entries(
    *,
    layers: LayerSet,
    proposals: Proposals,
    findings: gpd.GeoDataFrame,
    proposal_ids: Sequence[str],
) -> list[dict[str, Any]]:
    """One plain-data entry per application (JSON-ready; lon/lat bounds and label point)."""
    dist = proposals.disturbance
    names = proposals.attributes.get("name")
    entries = []
    for pid in proposal_ids:
        mine = dist[dist["proposal_id"].astype(str) == pid]
        if len(mine) == 0:
            continue
        site = shapely.union_all(mine.geometry.to_numpy())
        where = gpd.GeoSeries([site, site.point_on_surface()], crs=dist.crs).to_crs(WGS84)
        lon0, lat0, lon1, lat1 = (float(v) for v in where.iloc[:1].total_bounds)
        label = where.iloc[1]
        parcels, zones = application_site(layers, proposals, pid)
        name = names.get(pid) if names is not None else None
        summary = summarise_application(findings, pid)
        entries.append(
            {
                "id": pid,
                "name": name if isinstance(name, str) else "",
                "verdict": summary.verdict,
                "fail": summary.count("fail"),
                "review": summary.count("review"),
                "required": summary.count("required"),
                "parcels": [p.parcel_id for p in parcels],
                "addresses": [p.address for p in parcels if p.address],
                "zones": list(zones),
                "bounds": [lon0, lat0, lon1, lat1],
                "label": [float(label.x), float(label.y)],
            }
        )
    return entries
