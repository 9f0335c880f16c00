# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # gis-sw: the first hour
#
# This notebook walks through **gis-sw** on the sample town that ships with it. gis-sw
# screens proposed land development against the Town of Mount Pleasant (NY) Code
# **Chapter 183, Stormwater Management and Erosion and Sediment Control**, and tells a
# planner, rule by rule, what the law asks of each application: a permit, a stormwater
# pollution prevention plan (SWPPP), fees, a fix, or a closer look.
#
# You will:
#
# 1. load the sample town (parcels, zoning, wetlands, wells, rasters ...);
# 2. look at it on a map, with the R-10 zone (the zone with the lower permit threshold)
#    picked out;
# 3. screen three applications and read the findings table;
# 4. look at one application's map sheet (and learn where the web map comes from);
# 5. find where an infiltration device may go on a lot;
# 6. screen every parcel of the town in one batch run;
# 7. see what gis-sw does **not** decide.
#
# Everything runs on your computer; nothing is downloaded. The sample town is
# synthetic: no name, address, soil or well in it is real. `data/sample/README.md`
# describes it, and `docs/` explains each command.
#
# **gis-sw screens; it does not decide.** Every result below is a screening result for the
# Town Engineer, who decides.

# %% [markdown]
# ## 1. Load the sample town
#
# First we find the repository folder (the one holding `pyproject.toml` and the sample
# data), so the notebook works wherever Jupyter was started. Everything the notebook writes
# goes into a temporary folder, never into the repository.

# %%
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display
from matplotlib.patches import Patch

import gis_sw
from gis_sw.analysis.siting import siting_polygons
from gis_sw.ruleset import load_ruleset

STARTED = time.perf_counter()


def find_repo_root() -> Path:
    """The folder holding pyproject.toml and data/sample.

    Looked for in $GIS_SW_REPO, then from the current folder upwards, then from the folder
    of the installed gis_sw package upwards.
    """
    starts = [Path.cwd(), Path(gis_sw.__file__).resolve().parent]
    if os.environ.get("GIS_SW_REPO"):
        starts.insert(0, Path(os.environ["GIS_SW_REPO"]).resolve())
    for start in starts:
        for folder in [start, *start.parents]:
            if (folder / "pyproject.toml").is_file() and (
                folder / "data" / "sample" / "layers.toml"
            ).is_file():
                return folder
    raise FileNotFoundError(
        "cannot find the gis_sw repository (pyproject.toml with data/sample/layers.toml) "
        "above the current folder: start Jupyter inside the repository, or set GIS_SW_REPO."
    )


ROOT = find_repo_root()
SAMPLE = ROOT / "data" / "sample"
if os.environ.get("GIS_SW_WORK"):  # a folder of your choice for the outputs
    WORK = Path(os.environ["GIS_SW_WORK"])
    WORK.mkdir(parents=True, exist_ok=True)
else:
    WORK = Path(tempfile.mkdtemp(prefix="gis_sw_walkthrough_"))

pd.set_option("display.max_colwidth", None)
pd.set_option("display.width", 200)
print("repository:", ROOT)
print("outputs go to:", WORK)

# %% [markdown]
# The **ruleset** holds every number, zone name and citation of the law (thresholds,
# setbacks, fees). gis-sw never hard-codes them, so another town can use its own file.

# %%
ruleset = load_ruleset()  # the packaged Mount Pleasant ruleset
print(ruleset.title)
print("Law:", ruleset.law)
print("Ruleset version:", ruleset.version)
print("Working coordinate system:", ruleset.working_crs.name)
print("Decision maker:", ruleset.decision_maker)

# %% [markdown]
# The town's layers are listed in a small **layers manifest**, `data/sample/layers.toml`:
# which file holds the parcels, the zoning, the wetlands and so on, and whether each raster
# (ground elevation, seasonal high groundwater, bedrock) holds depths or elevations.
# `gis_sw.read_town` reads them all once, checks each against its specification and
# reprojects them to the working coordinate system (feet).
#
# The applications ("proposals") are in `data/sample/proposals.gpkg`: the areas each one
# would disturb, the infiltration devices (drywells, trenches, basins) it proposes, the new
# roofs and pavement, and a table of attributes (land use, cost, dates ...).

# %%
t0 = time.perf_counter()
town = gis_sw.read_town(SAMPLE / "layers.toml", ruleset=ruleset)
proposals = gis_sw.read_proposals(SAMPLE / "proposals.gpkg", ruleset=ruleset)
layers = town.layers
print(f"read in {time.perf_counter() - t0:.1f} s")

parcels = layers.get("parcels")
zoning = layers.get("zoning")
print(f"{len(parcels)} parcels; layers: {', '.join(layers.vectors)}")
print("not provided (rules that need them answer 'review'):", ", ".join(layers.missing))
print(f"{len(proposals.ids)} proposals:", ", ".join(proposals.ids))

# %% [markdown]
# ## 2. Look at the town
#
# Chapter 183 has one zone-specific number: a stormwater management control permit is
# needed for 250 sq ft or more of disturbance in any zone, **but already at 100 sq ft in
# the R-10 zone** (§ 183-12A). The map shades each zoning district and hatches the
# low-threshold zone(s) named in the ruleset, so R-10 stands out. The brook, its wetlands
# and its 100-year floodplain run across the R-40 band; the three applications we screen
# below are marked.

# %%
FOCUS = {
    "P01-addition-r10": "P01",
    "P09-lot-line-devices": "P09",
    "P07-commercial-phased-7ac": "P07",
}
ZONE_COLOURS = {"CB": "#d9d9d9", "R-10": "#fdae61", "R-20": "#fee8c8", "R-40": "#e5f5e0"}

fig, ax = plt.subplots(figsize=(11, 9.5))
handles = []
for zone in sorted(zoning["zone"].unique()):
    low = ruleset.is_low_threshold_zone(str(zone))
    colour = ZONE_COLOURS.get(str(zone), "#f0f0f0")
    zoning[zoning["zone"] == zone].plot(
        ax=ax,
        color=colour,
        edgecolor="#7b3294" if low else "none",
        hatch="///" if low else None,
        linewidth=1.2 if low else 0,
    )
    label = f"{zone} (permit at 100 sq ft, § 183-12A)" if low else f"{zone}"
    handles.append(
        Patch(
            facecolor=colour,
            edgecolor="#7b3294" if low else "grey",
            hatch="///" if low else None,
            label=label,
        )
    )
parcels.boundary.plot(ax=ax, color="grey", linewidth=0.3)
for kind, colour, label in [
    ("floodplain", "#6baed6", "100-year floodplain"),
    ("wetlands", "#31a354", "wetlands"),
    ("water_bodies", "#08519c", "water bodies"),
]:
    frame = layers.get(kind)
    if frame is not None and len(frame):
        frame.plot(ax=ax, color=colour, alpha=0.55 if kind == "floodplain" else 0.9)
        handles.append(Patch(facecolor=colour, alpha=0.7, label=label))
buildings = layers.get("buildings")
buildings.plot(ax=ax, color="#525252", linewidth=0)
handles.append(Patch(facecolor="#525252", label="buildings"))
disturbance = proposals.disturbance
for pid, short in FOCUS.items():
    area = disturbance[disturbance["proposal_id"] == pid]
    area.plot(ax=ax, facecolor="none", edgecolor="red", linewidth=2)
    c = area.union_all().centroid
    ax.annotate(
        short,
        (c.x, c.y),
        xytext=(12, 12),
        textcoords="offset points",
        color="red",
        weight="bold",
        fontsize=12,
        arrowprops={"arrowstyle": "-", "color": "red"},
        bbox={"boxstyle": "round", "fc": "white", "ec": "red"},
    )
handles.append(
    Patch(facecolor="none", edgecolor="red", linewidth=2, label="proposals screened below")
)
ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9)
ax.set_title("Sample town: zoning (R-10 hatched), water resources, three proposals")
ax.set_xlabel("easting, US survey ft (EPSG:2260)")
ax.set_ylabel("northing, US survey ft")
ax.ticklabel_format(style="plain")
ax.set_aspect("equal")
fig.tight_layout()
plt.show()

# %%
zone_table = (
    zoning.assign(area_acres=zoning.geometry.area / 43_560)
    .groupby("zone", as_index=True)["area_acres"]
    .sum()
    .round(1)
    .to_frame()
)
zone_table["permit threshold (sq ft of disturbance)"] = [
    ruleset.permit.threshold_low_zone_sqft
    if ruleset.is_low_threshold_zone(str(z))
    else ruleset.permit.threshold_any_zone_sqft
    for z in zone_table.index
]
zone_table

# %% [markdown]
# ## 3. Screen three proposals
#
# `run_rules` applies every rule of the ruleset to every proposal and returns one row per
# (rule, proposal, subject): a **finding**. Each finding has an **outcome**:
#
# | outcome | meaning |
# |---|---|
# | `pass` | the rule is met, or does not apply |
# | `fail` | the rule is broken: the plan must change (or be waived by the Town) |
# | `required` | the law attaches a duty: a permit, a SWPPP, fees, other permits |
# | `review` | data are missing or a judgement is needed: a person must look |
# | `info` | a figure the law asks to see (runoff volumes, water quality volume ...) |
#
# Each finding also carries the sentence to read aloud (`message`) and the section of the
# law (`citation`). Missing data never passes silently: it gives `review`.
#
# We screen the three proposals marked on the map:
#
# * **P01**: a 12 × 10 ft house addition on an R-10 lot;
# * **P09**: two roof drywells on an R-20 lot, one 9 ft and one 11 ft from a lot line;
# * **P07**: a 7-acre commercial site built in three overlapping phases.

# %%
t0 = time.perf_counter()
screening = town.screen(proposals)  # what the maps and reports below draw
findings_all = screening.findings
print(f"{len(findings_all)} findings for {len(proposals.ids)} proposals in {time.perf_counter() - t0:.1f} s")
findings = findings_all[findings_all["proposal_id"].isin(list(FOCUS))]

COLUMNS = ["rule_id", "subject_id", "outcome", "message", "citation"]


def findings_table(proposal_id: str, *, everything: bool = False) -> pd.DataFrame:
    """The findings of one proposal: rule, subject, outcome, message and citation."""
    rows = findings[findings["proposal_id"] == proposal_id]
    if not everything:
        rows = rows[rows["outcome"].isin(["fail", "review", "required"])]
    return rows[COLUMNS].reset_index(drop=True)


pd.crosstab(findings["proposal_id"], findings["outcome"])

# %% [markdown]
# ### P01: a 120 sq ft addition in R-10
#
# § 183-12A: no one may perform a land development activity "that involves 250 square feet
# or more of disturbance in all zones, except where 100 square feet or more of disturbance
# is proposed in the R-10 zone, without first obtaining the proper stormwater management
# control permit from the Town Engineer". 120 sq ft is under 250 but over 100, and it is in
# R-10, so rule **SW101** says the permit is **required**. SW105 then lists what the
# application must carry and computes the fees (§ 183-12C(1)).

# %%
sw101 = findings[(findings["proposal_id"] == "P01-addition-r10") & (findings["rule_id"] == "SW101")].iloc[0]
print(f"SW101 {sw101['outcome']}: {sw101['message']}")
print(f"measured {sw101['measured']:,.2f} {sw101['unit']}, limit {sw101['threshold']:,.2f} {sw101['unit']}")

# %% [markdown]
# The whole table for P01 (every rule, including the passes). Rows SW401–SW403 are the
# duties during construction (weekly inspections, notices before each stage); SW501–SW504
# are the runoff figures the law asks the design to show.

# %%
findings_table("P01-addition-r10", everything=True)

# %% [markdown]
# ### P09: drywells near a lot line
#
# § 183-12C(2)(c)[6]: "The minimum horizontal distance from an infiltration device to a
# property line is 10 feet." Rule **SW205** measures each device's exact distance to the
# lot lines: `D09-9ft` at 9.00 ft **fails**; `D09-11ft` at 11.00 ft passes. (The patio-sized
# disturbance itself, 128 sq ft in R-20, is under the 250 sq ft threshold, so SW101
# passes.)

# %%
p09 = findings[(findings["proposal_id"] == "P09-lot-line-devices") & (findings["rule_id"] == "SW205")]
p09[["subject_id", "outcome", "measured", "threshold", "unit", "message", "citation"]].reset_index(drop=True)

# %% [markdown]
# ### P07: a phased commercial site
#
# § 183-7B(1)(d): "not more than five acres shall be disturbed at any one time unless
# pursuant to an approved SWPPP". P07 opens phase 1 (3.0 acres) and phase 2 (2.5 acres)
# together from 2027-08-01 to 2027-10-31, so **SW301 fails** at 5.50 acres. At 7 acres in
# all it is a land development activity needing a SWPPP and SPDES coverage (SW102,
# § 183-6, § 183-7A), with post-construction controls under Condition B (SW103,
# § 183-7B(2)(b)), and the fees are $150 plus 0.5 % of the $6.5 million cost (SW105).
# Below are its fail, review and required findings.

# %%
findings_table("P07-commercial-phased-7ac")

# %% [markdown]
# The same findings can be written as GeoJSON, GeoPackage and CSV for GIS software: that is
# what `gis-sw check PROPOSALS --layers LAYERS --out FOLDER` does, with the map sheets and
# web map of the next section beside them unless `--map none` is given (see `docs/check.md`).

# %% [markdown]
# ## 4. A proposal's map sheet, and the web map
#
# `write_sheets` draws one sheet per proposal at a true engineering scale: § 183-12C(3)(a)[3]
# asks for site maps at "one inch equals 50 feet" or larger, so gis-sw picks the largest of
# 1" = 10', 20', 30', 40', 50' that fits. Each sheet shows zoning, lot lines, buildings,
# water resources, the limits of disturbance, the devices with their setback rings, every
# `fail` and `review` finding labelled with its figures, a location map, north arrow,
# scale bar, legend and title block. Here is P09's sheet (written as PNG; PDF is the
# default for printing).

# %%
from gis_sw.outputs.maps import write_sheets

t0 = time.perf_counter()
sheet_paths = write_sheets(
    WORK / "maps", screening, formats=("png",), proposal_ids=["P09-lot-line-devices"]
)
print(f"wrote {[p.name for p in sheet_paths]} in {time.perf_counter() - t0:.1f} s")

sheet = plt.imread(sheet_paths[0])
fig, ax = plt.subplots(figsize=(14, 9))
ax.imshow(sheet)
ax.set_axis_off()
fig.tight_layout()
plt.show()

# %% [markdown]
# The red label `SW205 9.0 ft < 10 ft` is the failing drywell; the passing one carries no
# label. From the command line, `gis-sw map data/sample/proposals.gpkg --layers
# data/sample/layers.toml --out out/maps --id P09-lot-line-devices` writes the same sheet
# as PDF and PNG (see `docs/maps.md`). A site too big for one sheet at 1" = 50', such as
# P07, becomes a map book: a key map and numbered sheets.
#
# `gis-sw map` also writes **`webmap.html`**: a single file that opens in any browser,
# offline, with every layer switchable, a click on a finding showing its message and
# citation, and a measuring tool. From Python it is `write_webmap`:

# %%
from gis_sw.outputs.webmap import write_webmap

webmap = write_webmap(WORK / "maps" / "webmap.html", screening, proposal_ids=list(FOCUS))
print(f"{webmap.name}: {webmap.stat().st_size / 1024:,.0f} kB; open it in a web browser")

# %% [markdown]
# ## 5. Where may an infiltration device go on a lot?
#
# Chapter 183 says where drywells, trenches and basins may **not** go
# (§ 183-12C(2)(c)):
#
# * [6] within 10 ft of a property line;
# * [7] within 20 ft of a structure with a habitable basement;
# * [3] up-gradient within 20 ft of a septic field; and, for devices taking runoff from
#   roadways, parking lots or driveways (**vehicle** class), within 50 ft of any well,
#   wetland or water body;
# * [4] where its bottom would be less than 2 ft above seasonal high groundwater or
#   bedrock.
#
# `siting_polygons` turns those into the polygon of the lot where a device may go. We ask
# it for lot `5.1-1-3`, an unsewered R-40 lot with a house, a well and a septic field, for a
# device whose bottom is 4 ft below ground, once for roof runoff and once for runoff from a
# driveway (vehicle class).
#
# In the figure, the white notch above the septic field is the ground within 20 ft of it
# that lies higher than the field (up-gradient, read from the ground elevation raster);
# below the field, down the slope, a device may come closer. The 50 ft circles around the
# wells apply only to the vehicle class.

# %%
LOT = "5.1-1-3"
DEPTH_FT = 4.0
t0 = time.perf_counter()
siting = pd.concat(
    [
        siting_polygons(layers, ruleset, parcel_ids=[LOT], device_class=cls, depth_ft=DEPTH_FT)
        for cls in ("roof", "vehicle")
    ],
    ignore_index=True,
)
print(f"sited in {time.perf_counter() - t0:.2f} s")
siting[["parcel_id", "device_class", "depth_ft", "area_sqft", "outcome", "reason"]]

# %%
lot = parcels[parcels["parcel_id"] == LOT]
view = lot.geometry.iloc[0].buffer(60)
xmin, ymin, xmax, ymax = view.bounds


def near(kind: str):
    frame = layers.get(kind)
    return None if frame is None else frame[frame.intersects(view)]


fig, axes = plt.subplots(1, 2, figsize=(13, 6.5), sharey=True)
for ax, (_, row) in zip(axes, siting.iterrows(), strict=True):
    parcels[parcels.intersects(view)].boundary.plot(ax=ax, color="grey", linewidth=0.6)
    lot.boundary.plot(ax=ax, color="black", linewidth=1.8)
    siting.iloc[[_]].plot(ax=ax, color="#74c476", alpha=0.75)
    for kind, style in [
        ("septic_fields", {"color": "#bf812d", "alpha": 0.8}),
        ("buildings", {"color": "#525252"}),
        ("wetlands", {"color": "#31a354", "alpha": 0.6}),
        ("water_bodies", {"color": "#08519c"}),
    ]:
        frame = near(kind)
        if frame is not None and len(frame):
            frame.plot(ax=ax, **style)
    wells = near("wells")
    if wells is not None and len(wells):
        wells.plot(ax=ax, color="#2166ac", markersize=40, marker="o")
        if row["device_class"] == "vehicle":
            wells.buffer(ruleset.devices.vehicle_traffic_ft).boundary.plot(
                ax=ax, color="#2166ac", linestyle="--", linewidth=1
            )
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(ymin, ymax)
    ax.set_aspect("equal")
    ax.ticklabel_format(style="plain")
    ax.tick_params(labelsize=7)
    ax.set_title(
        f"{row['device_class']} device, bottom {row['depth_ft']:.0f} ft deep:\n"
        f"{row['area_sqft']:,.0f} sq ft allowed ({row['outcome']})"
    )
fig.legend(
    handles=[
        Patch(facecolor="#74c476", alpha=0.75, label="where a device may go"),
        Patch(facecolor="#525252", label="house"),
        Patch(facecolor="#bf812d", label="septic field"),
        Patch(facecolor="#2166ac", label="well (dashed: 50 ft, vehicle class)"),
        Patch(facecolor="none", edgecolor="black", label=f"lot {LOT}"),
    ],
    loc="lower center",
    ncol=5,
    fontsize=9,
)
fig.suptitle(f"Lot {LOT}: room for an infiltration device (§ 183-12C(2)(c)[3], [4], [6], [7])")
fig.tight_layout(rect=(0, 0.06, 1, 1))
plt.show()

# %%
roof_sqft, vehicle_sqft = siting.set_index("device_class").loc[["roof", "vehicle"], "area_sqft"]
display(
    Markdown(
        f"On lot `{LOT}` a roof drywell may go on **{roof_sqft:,.0f} sq ft**; a device taking "
        f"driveway runoff only on **{vehicle_sqft:,.0f} sq ft**, because it must also stay "
        f"{ruleset.devices.vehicle_traffic_ft:.0f} ft from the well. A device placed inside the "
        "green area passes rules SW201–SW206 on these layers; the deep test holes the law asks "
        "for (§ 183-12C(2)(c)[4]) still decide."
    )
)

# %% [markdown]
# The command-line version is `gis-sw siting --layers data/sample/layers.toml --parcel
# 5.1-1-3 --device-class vehicle --depth-ft 4 --out FOLDER` (see `docs/devices.md`).

# %% [markdown]
# ## 6. Screen the whole town in one batch
#
# The batch run screens **every parcel**: its zones and permit threshold, the wetlands,
# adjacent area, water and floodplain on it, the wells and septic fields near it, and how
# much room it has for a roof or a vehicle-traffic device. With proposals it also runs every
# rule on every proposal. It works in spatial chunks on both processor cores and can
# resume a run that was stopped. `gis-sw batch --layers data/sample/layers.toml --proposals
# data/sample/proposals.gpkg --out FOLDER` does this; here we call the same library
# functions the command calls.

# %%
from gis_sw.batch.run import RunOptions, run_chunks_to_store
from gis_sw.batch.write import write_batch_outputs

batch_dir = WORK / "batch"
t0 = time.perf_counter()
result = run_chunks_to_store(
    layers,
    ruleset,
    batch_dir,
    options=RunOptions(workers=2),
    resume=False,
    overwrite=False,
    proposals=str(SAMPLE / "proposals.gpkg"),
)
written = write_batch_outputs(
    batch_dir,
    result,
    layers,
    ruleset,
    findings=findings_all,
    disturbance=proposals.disturbance,
    overwrite=True,
    formats=("parquet", "gpkg"),
)
print(f"screened {len(result.rows)} parcels in {result.plan.n_chunks} chunk(s) in {time.perf_counter() - t0:.1f} s")
print("wrote:", ", ".join(sorted(written)))

# %% [markdown]
# `summary.csv` counts parcels (and findings) by zone and outcome. For a parcel, `required`
# means a mapped wetland, adjacent area, water body or floodplain lies on it, so any
# development there must show it on the plans and other chapters apply
# (§ 183-12C(3)(a)[5], § 183-7D); `info` means a well or septic field is near or no
# vehicle-traffic device fits; `pass` means nothing of the kind was found.

# %%
summary = pd.read_csv(written["summary.csv"])
parcel_counts = (
    summary[summary["table"] == "parcels"]
    .pivot_table(index="zone", columns="outcome", values="count", aggfunc="sum", fill_value=0)
    .astype(int)
)
parcel_counts["all parcels"] = parcel_counts.sum(axis=1)
display(Markdown("**Parcels by zone and screening result**"))
display(parcel_counts)
finding_counts = (
    summary[summary["table"] == "findings"]
    .pivot_table(index="zone", columns="outcome", values="count", aggfunc="sum", fill_value=0)
    .astype(int)
)
display(Markdown("**Findings of the sample proposals, by the zone each proposal lies in**"))
display(finding_counts)

# %% [markdown]
# The run also writes a townwide overview map, every parcel coloured by its result:

# %%
if "overview.png" in written:
    overview = plt.imread(written["overview.png"])
    fig, ax = plt.subplots(figsize=(11, 8.5))
    ax.imshow(overview)
    ax.set_axis_off()
    fig.tight_layout()
    plt.show()
else:
    print("no overview map was written (the maps module is not available)")

# %% [markdown]
# The parcel table (`parcels.parquet` / `parcels.gpkg`) has one row per parcel; for
# example, the parcels with the least room for a vehicle-traffic device:

# %%
rows = result.rows
rows.sort_values(["vehicle_siting_sqft", "parcel_id"])[
    ["parcel_id", "zone_main", "area_sqft", "roof_siting_sqft", "vehicle_siting_sqft", "screen", "result"]
].head(8).reset_index(drop=True)

# %% [markdown]
# The batch's room for a device is a quicker, more cautious townwide figure than section 5's:
# it keeps 20 ft from every side of a septic field (not only the up-gradient side) and does
# not look at groundwater or bedrock. For one lot, use `siting_polygons` (or `gis-sw
# siting`). On lot 5.1-1-3:

# %%
batch_lot = rows.set_index("parcel_id").loc[LOT]
pd.DataFrame(
    {
        "batch (townwide screen)": [batch_lot["roof_siting_sqft"], batch_lot["vehicle_siting_sqft"]],
        f"siting_polygons, {DEPTH_FT:.0f} ft deep": [roof_sqft, vehicle_sqft],
    },
    index=["roof device, sq ft", "vehicle device, sq ft"],
).round(0)

# %% [markdown]
# ## 7. What gis-sw does not decide: the Town Engineer decides
#
# gis-sw measures proposals against the numbers of Chapter 183 and the layers it is given.
# It does **not** decide:
#
# * whether a permit is granted: § 183-12A sends the application to the Town Engineer;
# * whether a claimed § 183-5 exemption applies (it shows `review`);
# * whether the mapped wetlands, floodplain, zoning, groundwater and bedrock are current and
#   accurate: field delineation and the deep test holes witnessed by the Town Engineer
#   (§ 183-12C(2)(c)[4]) govern;
# * whether a device is big enough or the soil percolates, whether a separation is the
#   "maximum attainable" (§ 183-12C(2)(c)[5]), or whether a larger design storm is needed;
# * permits under other law (Chapters 108 and 111, NYSDEC SPDES, Westchester County
#   Department of Health): it says they apply; it does not screen them.
#
# Every map sheet, overview map and web map it draws says **"Screening result, not a permit
# decision"**. The Town Engineer decides.

# %%
print(f"Decision maker under {ruleset.law}: {ruleset.decision_maker}")
print(f"Notebook ran in {time.perf_counter() - STARTED:.0f} s")
