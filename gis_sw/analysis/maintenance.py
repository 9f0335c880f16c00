"""The maintenance obligations a proposal's stormwater facilities bring with them (SW211).

A proposal with at least one infiltration device (a stormwater management facility or
practice) takes on, whatever else the screening finds:

- § 183-9B: a maintenance easement agreement, binding on every later owner and recorded with
  the County Clerk, before any approval that has the facility as a requirement;
- § 183-9D: a formal maintenance agreement approved by the Town and recorded as a deed
  restriction before final plan approval (or the facility's dedication to the Town);
- § 183-10B: as-built plans of every practice, certified by a professional engineer, after
  final construction;
- § 183-10E: the landowner's grant of right of entry to the Town for inspection.

One ``required`` finding per proposal with devices lists the devices and the obligations.
The obligations' wording and section letters are ``ruleset.devices.maintenance_obligations``
(the law's text is checked there, not here); a ruleset that lists none gives ``review``
rather than an empty obligation.  ``measured`` is the number of devices.
"""

from __future__ import annotations

import numpy as np
import shapely

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import Findings, Outcome, rule_check


@rule_check
def check_maintenance_obligations(ctx: CheckContext, rows: Findings) -> None:
    """Check SW211: one ``required`` finding per proposal with devices, listing them."""
    devices = ctx.proposals.devices
    if len(devices) == 0:
        return
    obligations = ctx.ruleset.devices.maintenance_obligations
    cite = rows.citation
    pid_of = devices["proposal_id"].astype(str).to_numpy()
    did_of = devices["device_id"].astype(str).to_numpy()
    geom_of = devices.geometry.to_numpy()
    # grouped in plain Python: a pandas groupby costs more than the rest of the check
    by_pid: dict[str, list[int]] = {}
    for i in sorted(range(len(pid_of)), key=lambda i: (pid_of[i], did_of[i])):
        by_pid.setdefault(pid_of[i], []).append(i)
    pids = list(by_pid)
    listed = [", ".join(did_of[i] for i in members) for members in by_pid.values()]
    counts = np.array([len(members) for members in by_pid.values()], dtype="float64")
    shapes = [shapely.union_all(geom_of[members]) for members in by_pid.values()]
    messages = []
    for pid, ids, n in zip(pids, listed, counts, strict=True):
        noun, verb = ("device", "brings") if n == 1 else ("devices", "bring")
        if obligations:
            messages.append(
                f"{pid} proposes {n:.0f} stormwater {noun} ({ids}), which {verb} maintenance "
                f"obligations: {'; '.join(obligations)} ({cite})."
            )
        else:
            messages.append(
                f"{pid} proposes {n:.0f} stormwater {noun} ({ids}); the ruleset lists no "
                f"maintenance obligations (devices.maintenance_obligations) to state ({cite})."
            )
    outcome = Outcome.REQUIRED if obligations else Outcome.REVIEW
    rows.extend(
        proposal_id=pids,
        outcome=outcome,
        message=messages,
        measured=counts,
        unit="devices",
        geometry=shapes,
    )
