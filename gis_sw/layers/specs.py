"""What each layer kind must hold: geometry type, required and optional columns.

The specs are data; :mod:`gis_sw.layers.validate` checks a GeoDataFrame against them.
Column types are the logical types after reading: ``str``, ``bool``, ``float``, ``int``,
``date``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class GeometryKind(StrEnum):
    """The geometry family a layer kind's features must have."""

    POLYGON = "polygon"
    POINT = "point"
    LINE = "line"
    POINT_OR_POLYGON = "point_or_polygon"
    RASTER = "raster"


@dataclass(frozen=True, slots=True)
class LayerSpec:
    """The contract of one layer kind.

    Attributes
    ----------
    kind
        Layer name, as in a GeoPackage of town layers or a manifest table.
    geometry
        Geometry family every feature must have.
    required
        Columns that must be present, name to logical type.
    optional
        Columns used when present, name to logical type.
    id_column
        Column that names features in messages (``None`` when the layer has no id).
    unique_id
        True when ``id_column`` must be unique; False for an optional label that real
        layers repeat (a wetland system id shared by its parts).
    required_layer
        True when screening cannot start without this layer.
    description
        One line for reports and the README.
    """

    kind: str
    geometry: GeometryKind
    required: dict[str, str] = field(default_factory=dict)
    optional: dict[str, str] = field(default_factory=dict)
    id_column: str | None = None
    required_layer: bool = False
    unique_id: bool = True
    description: str = ""


def _water(
    kind: str, geometry: GeometryKind, id_column: str, description: str, *, unique_id: bool = False
) -> LayerSpec:
    """Return the spec of a water layer: an optional id and name, the id shared by parts."""
    return LayerSpec(
        kind,
        geometry,
        optional={id_column: "str", "name": "str"},
        id_column=id_column,
        unique_id=unique_id,
        description=description,
    )


TOWN_LAYERS: dict[str, LayerSpec] = {
    spec.kind: spec
    for spec in (
        LayerSpec(
            "parcels",
            GeometryKind.POLYGON,
            required={"parcel_id": "str"},
            optional={"owner": "str", "address": "str", "land_use": "str"},
            id_column="parcel_id",
            required_layer=True,
            description="Tax parcels; their edges are the property lines of § 183-12C(2)(c)[6].",
        ),
        LayerSpec(
            "zoning",
            GeometryKind.POLYGON,
            required={"zone": "str"},
            required_layer=True,
            description="Zoning districts; R-10 carries the 100 sq ft threshold of § 183-12A.",
        ),
        _water(
            "wetlands",
            GeometryKind.POLYGON,
            "wetland_id",
            "Mapped freshwater wetlands (Chapter 111, NYSDEC, NWI).",
        ),
        LayerSpec(
            "floodplain",
            GeometryKind.POLYGON,
            optional={"flood_zone": "str"},
            description="100-year floodplain (FEMA special flood hazard area).",
        ),
        _water(
            "water_bodies",
            GeometryKind.POLYGON,
            "water_id",
            "Streams, ponds and lakes as polygons.",
        ),
        _water(
            "streams",
            GeometryKind.LINE,
            "stream_id",
            "Streams and watercourses as centre lines; water bodies for the setbacks.",
            unique_id=True,
        ),
        LayerSpec(
            "wells",
            GeometryKind.POINT,
            required={"well_id": "str"},
            id_column="well_id",
            description="Water supply wells.",
        ),
        LayerSpec(
            "septic_fields",
            GeometryKind.POLYGON,
            required={"septic_id": "str"},
            id_column="septic_id",
            description="Subsurface treatment systems (septic absorption fields).",
        ),
        LayerSpec(
            "buildings",
            GeometryKind.POLYGON,
            required={"building_id": "str"},
            optional={"habitable_basement": "bool", "below_ground_storage": "bool"},
            id_column="building_id",
            description=(
                "Building footprints; habitable_basement and below_ground_storage drive "
                "§ 183-12C(2)(c)[7]."
            ),
        ),
        LayerSpec(
            "impaired_waters",
            GeometryKind.POLYGON,
            optional={"name": "str", "pollutant": "str", "listing": "str"},
            description="303(d)-listed waters or TMDL watersheds (Condition A).",
        ),
        LayerSpec(
            "soils",
            GeometryKind.POLYGON,
            required={"hsg": "str"},
            optional={"musym": "str"},
            description="Soil map units with hydrologic soil group (A, B, C, D, A/D ...).",
        ),
        LayerSpec(
            "land_cover",
            GeometryKind.POLYGON,
            required={"cover": "str"},
            description="Pervious cover (lawn, woods, meadow ...) for curve numbers.",
        ),
        LayerSpec(
            "pavement",
            GeometryKind.POLYGON,
            optional={"surface": "str"},
            description="Existing paved surfaces (driveways, roads, parking).",
        ),
        LayerSpec(
            "drainage_areas",
            GeometryKind.POLYGON,
            required={"drainage_id": "str"},
            optional={"proposal_id": "str", "tc_min": "float"},
            id_column="drainage_id",
            description="Drainage areas for runoff calculations (default: touched parcels).",
        ),
    )
}

RASTER_LAYERS: dict[str, str] = {
    "dem": "Ground elevation, ft.",
    "seasonal_high_groundwater": "Seasonal high groundwater: depth below ground or elevation, ft.",
    "bedrock": "Bedrock: depth below ground or elevation, ft.",
}

PROPOSAL_LAYERS: dict[str, LayerSpec] = {
    spec.kind: spec
    for spec in (
        LayerSpec(
            "disturbance",
            GeometryKind.POLYGON,
            required={"proposal_id": "str"},
            optional={
                "disturbance_id": "str",
                "phase": "str",
                "start_date": "date",
                "end_date": "date",
            },
            required_layer=True,
            description="Proposed land disturbance (limits of disturbance), by phase.",
        ),
        LayerSpec(
            "devices",
            GeometryKind.POINT_OR_POLYGON,
            required={"device_id": "str", "proposal_id": "str"},
            optional={
                "device_type": "str",
                "serves_vehicle_traffic": "bool",
                "bottom_elevation_ft": "float",
                "depth_ft": "float",
                "has_sedimentation_device": "bool",
                "test_hole_logged": "bool",
                "test_hole_groundwater_elevation_ft": "float",
                "test_hole_bedrock_elevation_ft": "float",
            },
            id_column="device_id",
            description="Proposed infiltration devices (drywells, trenches, basins).",
        ),
        LayerSpec(
            "impervious",
            GeometryKind.POLYGON,
            required={"proposal_id": "str"},
            optional={
                "surface": "str",
                "habitable_basement": "bool",
                "below_ground_storage": "bool",
            },
            description="Proposed new impervious surfaces (roof, driveway, patio, pool, road).",
        ),
        LayerSpec(
            "proposals",
            GeometryKind.POLYGON,  # attribute table: geometry not used
            required={"proposal_id": "str"},
            optional={
                "name": "str",
                "land_use": "str",
                "exemption": "str",
                "approved_swppp": "bool",
                "part_of_larger_plan": "bool",
                "larger_plan_acres": "float",
                "construction_cost_usd": "float",
                "discharges_to_impaired_water": "bool",
                "construction_start": "date",
                "construction_end": "date",
            },
            id_column="proposal_id",
            description="One row per application: land use, exemption claimed, SWPPP, cost.",
        ),
    )
}

LAND_USES = ("single_family", "agricultural", "other")
