"""A corpus of bad inputs, generated into a folder by each case itself.

Every case starts from one small good town (two parcels near Mount Pleasant, EPSG:2260, two
proposals) and breaks one thing.  A case says, per command, what the law-abiding answer is:

* :class:`Fails`: exit 2 with a message naming the file, layer, column or feature (every
  string in ``names``) and a fix;
* :class:`Works`: the run completes; ``findings`` / ``siting`` give outcomes to assert,
  ``same_as_base`` says the findings must equal those of the untouched town.

Commands: ``validate`` (with ``--proposals``), ``check``, ``siting`` (parcel ``A``) and
``batch`` (with ``--proposals``).  :data:`CASES` lists every case; the modules below add
theirs with :func:`case`.
"""

from __future__ import annotations

import importlib
import json
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import geopandas as gpd
import pandas as pd
import shapely
from pyproj import Transformer

CRS = "EPSG:2260"
X0, Y0 = (
    round(v)
    for v in Transformer.from_crs("EPSG:4326", CRS, always_xy=True).transform(-73.79, 41.11)
)
COMMANDS = ("validate", "check", "siting", "batch")


@dataclass(frozen=True, slots=True)
class Inputs:
    """Where a case wrote its inputs."""

    layers: Path
    proposals: Path
    parcel: str = "A"
    strict: bool = False


@dataclass(frozen=True, slots=True)
class Fails:
    """Exit 2, one clear message naming every string of ``names`` (and a fix).

    ``bug`` (file:line and what is wrong) marks a known bug: the test is a strict xfail.
    """

    names: tuple[str, ...] = ()
    bug: str = ""


@dataclass(frozen=True, slots=True)
class Works:
    """The run completes.

    Attributes
    ----------
    findings
        (rule_id, subject_id) to the outcome ``check`` must give.
    same_as_base
        Every finding (outcome, measured to 0.01) equals the untouched town's.
    siting
        Parcel id to (outcome, area in sq ft to 1 sq ft or None) from ``siting``.
    output
        Strings the command's output must contain.
    bug
        A known bug (file:line and what is wrong): the test is a strict xfail.
    """

    findings: Mapping[tuple[str, str], str] = field(default_factory=dict)
    same_as_base: bool = False
    siting: Mapping[str, tuple[str, float | None]] = field(default_factory=dict)
    output: tuple[str, ...] = ()
    bug: str = ""


Expect = Fails | Works


@dataclass(frozen=True, slots=True)
class Case:
    """One bad input and what each command must make of it."""

    id: str
    build: Callable[[Path], Inputs]
    expect: Mapping[str, Expect]


CASES: list[Case] = []


def case(case_id: str, **expect: Expect) -> Callable[[Callable[[Path], Inputs]], Case]:
    """Register a builder as a case; keyword arguments are command -> expectation."""

    def register(build: Callable[[Path], Inputs]) -> Case:
        unknown = set(expect) - set(COMMANDS)
        assert not unknown, unknown
        made = Case(case_id, build, expect)
        CASES.append(made)
        return made

    return register


def every(expect: Expect, *, but: Mapping[str, Expect] | None = None) -> dict[str, Expect]:
    """The same expectation for every command, except those in ``but``."""
    return dict.fromkeys(COMMANDS, expect) | dict(but or {})


# --- the good town -------------------------------------------------------------------------


def box(x: float, y: float, w: float, h: float) -> shapely.Polygon:
    """A rectangle ``w`` x ``h`` ft whose lower-left corner is ``(X0 + x, Y0 + y)``."""
    return shapely.box(X0 + x, Y0 + y, X0 + x + w, Y0 + y + h)


def town_frames() -> dict[str, gpd.GeoDataFrame]:
    """Parcels A (100 x 100 ft, R-10) and B (200 x 100 ft, R-20), far-away wetlands."""
    lots = [box(0, 0, 100, 100), box(100, 0, 200, 100)]
    far = box(5000, 0, 100, 100)
    return {
        "parcels": gpd.GeoDataFrame(
            {"parcel_id": ["A", "B"], "owner": ["Ann Smith", "Bo Li"]}, geometry=lots, crs=CRS
        ),
        "zoning": gpd.GeoDataFrame({"zone": ["R-10", "R-20"]}, geometry=lots, crs=CRS),
        "wetlands": gpd.GeoDataFrame({"wetland_id": ["W-1"]}, geometry=[far], crs=CRS),
        "water_bodies": gpd.GeoDataFrame({"water_id": ["L-1"]}, geometry=[far], crs=CRS),
        "floodplain": gpd.GeoDataFrame({"flood_zone": ["AE"]}, geometry=[far], crs=CRS),
    }


def proposal_frames() -> dict[str, gpd.GeoDataFrame]:
    """P-1: 134 sq ft in R-10 (permit required); P-2: 200 sq ft in R-20 (not required)."""
    disturbance = gpd.GeoDataFrame(
        {
            "proposal_id": ["P-1", "P-2"],
            "disturbance_id": ["L-1", "L-2"],
            "start_date": ["2026-05-01", "2026-05-01"],
            "end_date": ["2026-08-01", "2026-08-01"],
        },
        geometry=[box(86.6, 0, 13.4, 10), box(150, 0, 20, 10)],
        crs=CRS,
    )
    devices = gpd.GeoDataFrame(
        {
            "device_id": ["D-1"],
            "proposal_id": ["P-1"],
            "device_type": ["drywell"],
            "serves_vehicle_traffic": ["no"],
        },
        geometry=[shapely.Point(X0 + 50, Y0 + 50)],
        crs=CRS,
    )
    attributes = gpd.GeoDataFrame(
        {
            "proposal_id": ["P-1", "P-2"],
            "name": ["Smith addition", "Li patio"],
            "land_use": ["single_family", "single_family"],
            "part_of_larger_plan": ["no", "no"],
            "discharges_to_impaired_water": ["no", "no"],
            "construction_cost_usd": [20_000.0, 5_000.0],
        },
        geometry=gpd.GeoSeries([None, None], crs=CRS),
    )
    return {"disturbance": disturbance, "devices": devices, "proposals": attributes}


def write_gpkg(path: Path, frames: Mapping[str, gpd.GeoDataFrame | pd.DataFrame]) -> Path:
    """Each frame as a layer of one GeoPackage (frames without geometry as tables)."""
    for name, frame in frames.items():
        if isinstance(frame, gpd.GeoDataFrame):
            frame.to_file(path, layer=name, driver="GPKG", engine="pyogrio")
        else:
            gpd.GeoDataFrame(frame, geometry=gpd.GeoSeries([None] * len(frame))).to_file(
                path, layer=name, driver="GPKG", engine="pyogrio"
            )
    return path


_TEMPLATES: dict[str, bytes] = {}


def _template(which: str) -> bytes:
    """The good ``town.gpkg`` or ``proposals.gpkg``, written once per session."""
    if which not in _TEMPLATES:
        with tempfile.TemporaryDirectory() as tmp:
            frames = town_frames() if which == "town" else proposal_frames()
            _TEMPLATES[which] = write_gpkg(Path(tmp) / "t.gpkg", frames).read_bytes()
    return _TEMPLATES[which]


def _same(a: gpd.GeoDataFrame, b: gpd.GeoDataFrame) -> bool:
    """Same columns, values, CRS and geometries (WKB: Z and M count)."""
    try:
        plain = a.drop(columns=a.geometry.name).equals(b.drop(columns=b.geometry.name))
        return (
            bool(plain)
            and list(a.columns) == list(b.columns)
            and a.crs == b.crs
            and list(a.geometry.to_wkb()) == list(b.geometry.to_wkb())
        )
    except (TypeError, ValueError, AttributeError):
        return False


def _write_variant(path: Path, which: str, frames: Mapping[str, gpd.GeoDataFrame] | None) -> Path:
    """The good GeoPackage with only the layers that differ rewritten (fast)."""
    good = town_frames() if which == "town" else proposal_frames()
    if frames is not None and not set(good) <= set(frames):
        return write_gpkg(path, frames)  # a layer was left out: write afresh
    path.write_bytes(_template(which))
    changed = {k: v for k, v in (frames or {}).items() if k not in good or not _same(v, good[k])}
    return write_gpkg(path, changed) if changed else path


def write_town(
    folder: Path,
    *,
    town: Mapping[str, gpd.GeoDataFrame] | None = None,
    proposals: Mapping[str, gpd.GeoDataFrame] | None = None,
    parcel: str = "A",
) -> Inputs:
    """Write ``town.gpkg`` and ``proposals.gpkg`` (the good ones unless given)."""
    layers = _write_variant(folder / "town.gpkg", "town", town)
    props = _write_variant(folder / "proposals.gpkg", "proposals", proposals)
    return Inputs(layers, props, parcel)


def manifest(folder: Path, tables: Mapping[str, Mapping[str, str]]) -> Path:
    """A ``layers.toml`` with one table per kind (plain string values only)."""
    lines = []
    for kind, keys in tables.items():
        lines.append(f"[{kind}]")
        lines.extend(f"{key} = {json.dumps(value)}" for key, value in keys.items())
        lines.append("")
    path = folder / "layers.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def town_with(folder: Path, **replace: gpd.GeoDataFrame) -> Inputs:
    """The good town with some layers replaced."""
    return write_town(folder, town=town_frames() | replace)


def proposals_with(folder: Path, **replace: gpd.GeoDataFrame | None) -> Inputs:
    """The good proposals with some layers replaced (None: layer left out)."""
    frames = {k: v for k, v in (proposal_frames() | replace).items() if v is not None}
    return write_town(folder, proposals=frames)


# Register every case: each module adds its own with @case.
for _module in ("files", "crs", "geometry", "attributes", "proposals", "proposal_inputs"):
    importlib.import_module(f"corpus.{_module}")
