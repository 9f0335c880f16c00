/* gis-sw serve: live placement.  Every text from the server or the user goes into the page
   with textContent (or as a DOM node to Leaflet), never as HTML. */
(function () {
  "use strict";

  const COLOURS = { fail: "#c0392b", review: "#e67e22", required: "#8e44ad", info: "#7f8c8d", pass: "#27ae60" };
  const OUTCOMES = ["fail", "review", "required", "info", "pass"];
  const FIELDS = {
    disturbance: [["disturbance_id", "text"], ["phase", "text"], ["start_date", "date"], ["end_date", "date"]],
    impervious: [["surface", "choice", ["roof", "driveway", "patio", "pool", "road", "parking", "other"]]],
    devices: [
      ["device_id", "text"], ["device_type", "text"], ["serves_vehicle_traffic", "bool"],
      ["depth_ft", "number"], ["bottom_elevation_ft", "number"], ["has_sedimentation_device", "bool"],
      ["test_hole_logged", "bool"], ["test_hole_groundwater_elevation_ft", "number"],
      ["test_hole_bedrock_elevation_ft", "number"],
    ],
  };
  const STYLE = {
    disturbance: { color: "#8e6c3a", weight: 2, fillOpacity: 0.15, dashArray: "6 4" },
    impervious: { color: "#555", weight: 1, fillColor: "#999", fillOpacity: 0.5 },
    devices: { color: "#1f77b4", weight: 2, fillColor: "#1f77b4", fillOpacity: 0.5 },
  };

  const $ = (id) => document.getElementById(id);
  const state = {
    town: null, lot: null, features: [], selected: null, mode: null,
    timer: null, fired: true, inflight: false, dirty: false, counter: 0,
  };
  const app = { ready: false, checks: 0, pending: false, lastCheck: null, lastSiting: null, state };
  window.gswApp = app;

  const map = L.map("map", { maxZoom: 22, zoomSnap: 0.25, preferCanvas: false });
  app.map = map;
  map.pm.setGlobalOptions({ allowSelfIntersection: false, snappable: false });
  map.pm.addControls({
    position: "topleft", drawMarker: false, drawCircleMarker: false, drawPolyline: false,
    drawRectangle: false, drawCircle: false, drawText: false, drawPolygon: false, cutPolygon: false,
    rotateMode: false, editMode: true, dragMode: true, removalMode: true,
  });
  const panes = {};
  for (const [name, z] of [["parcels", 350], ["context", 380], ["siting", 390], ["setbacks", 395], ["edit", 420], ["findings", 430], ["devices", 640]]) {
    panes[name] = map.createPane(name);
    panes[name].style.zIndex = z;
  }
  panes.parcels.style.pointerEvents = "none";
  const parcelsLayer = L.layerGroup().addTo(map);
  const contextLayer = L.layerGroup().addTo(map);
  const sitingLayer = L.layerGroup().addTo(map);
  const findingsLayer = L.layerGroup().addTo(map);

  function setStatus(text, isError) {
    const el = $("status");
    el.textContent = text || "";
    el.className = isError ? "error" : "";
  }

  function textNode(text, className) {
    const span = document.createElement("span");
    if (className) span.className = className;
    span.textContent = text;
    return span;
  }

  async function api(path, options) {
    const response = await fetch(path, options);
    const type = response.headers.get("content-type") || "";
    if (!response.ok) {
      let message = response.status + " " + response.statusText;
      if (type.includes("json")) {
        const body = await response.json();
        if (body && body.error) message = body.error;
      }
      const error = new Error(message);
      error.status = response.status;
      throw error;
    }
    return type.includes("json") ? response.json() : response.blob();
  }

  function geo(data, options) {
    return L.geoJSON(data, Object.assign({ pmIgnore: true }, options));
  }

  // -- town and parcels ----------------------------------------------------------------------

  async function loadParcels() {
    const b = map.getBounds();
    const bbox = [b.getWest(), b.getSouth(), b.getEast(), b.getNorth()].join(",");
    try {
      const data = await api("/api/parcels?bbox=" + bbox);
      parcelsLayer.clearLayers();
      if (data.too_many) return;
      parcelsLayer.addLayer(geo(data, { pane: "parcels", style: { color: "#999", weight: 1, fill: false }, interactive: false }));
    } catch (e) { setStatus(e.message, true); }
  }

  function chooseFromFeature(feature) {
    const props = feature.properties || {};
    chooseLot(String(props.parcel_id));
  }

  async function chooseLot(parcelId) {
    if (parcelId === state.lot) return; // a click on the lot already chosen
    try {
      const data = await api("/api/lot/" + encodeURIComponent(parcelId));
      state.lot = parcelId;
      contextLayer.clearLayers();
      contextLayer.addLayer(geo(data.neighbours, { pane: "context", style: { color: "#777", weight: 1, fill: false }, interactive: false }));
      const ctxStyle = {
        buildings: { color: "#444", weight: 1, fillColor: "#bbb", fillOpacity: 0.7 },
        septic_fields: { color: "#8d6e63", weight: 1, fillColor: "#d7ccc8", fillOpacity: 0.6 },
        wetlands: { color: "#2e7d32", weight: 1, fillColor: "#a5d6a7", fillOpacity: 0.5 },
        water_bodies: { color: "#1565c0", weight: 1, fillColor: "#90caf9", fillOpacity: 0.6 },
        wells: { color: "#0d47a1", weight: 2, fillColor: "#fff", fillOpacity: 1 },
      };
      for (const [kind, fc] of Object.entries(data.context)) {
        contextLayer.addLayer(geo(fc, {
          pane: "context", style: ctxStyle[kind], interactive: false,
          pointToLayer: (f, ll) => L.circleMarker(ll, Object.assign({ radius: 5, pane: "context", pmIgnore: true }, ctxStyle[kind])),
        }));
      }
      const lot = geo(data.parcel, { pane: "context", style: { color: "#000", weight: 3, fill: false }, interactive: false });
      contextLayer.addLayer(lot);
      const props = data.parcel.features.length ? data.parcel.features[0].properties : {};
      $("lot").textContent = "Lot " + props.parcel_id + (props.address ? ", " + props.address : "");
      $("lot").className = "";
      if (!state.features.length && !state.loaded) $("proposal-id").value = "P-" + props.parcel_id;
      map.fitBounds(lot.getBounds(), { padding: [40, 40], maxZoom: 21 });
      await loadSiting();
      scheduleCheck(0);
    } catch (e) { setStatus(e.message, true); }
  }

  async function loadSiting() {
    if (!state.lot) return;
    const klass = $("device-class").value;
    const depth = $("siting-depth").value;
    let url = "/api/siting?parcel_id=" + encodeURIComponent(state.lot) + "&device_class=" + klass;
    if (depth !== "") url += "&depth_ft=" + encodeURIComponent(depth);
    try {
      const data = await api(url);
      app.lastSiting = data;
      sitingLayer.clearLayers();
      sitingLayer.addLayer(geo(data.polygon, { pane: "siting", style: { color: "#1e8449", weight: 1, fillColor: "#58d68d", fillOpacity: 0.35 }, interactive: false }));
      const lines = geo(data.setbacks, { pane: "setbacks", style: { color: "#b03a2e", weight: 1.5, dashArray: "4 3" }, interactive: false });
      lines.eachLayer((layer) => {
        layer.bindTooltip(textNode(layer.feature.properties.label), { permanent: true, direction: "center", className: "gsw-label", pane: "setbacks" });
      });
      sitingLayer.addLayer(lines);
      const area = data.area_sqft === null ? "?" : Math.round(data.area_sqft).toLocaleString("en-US");
      const p = $("siting");
      p.textContent = "";
      p.className = "";
      p.appendChild(textNode(area + " sq ft ", "area"));
      p.appendChild(textNode(data.outcome, "outcome o-" + data.outcome));
      p.appendChild(document.createElement("br"));
      p.appendChild(textNode(data.reason, "muted small"));
      const list = $("setbacks");
      list.textContent = "";
      for (const f of data.setbacks.features) {
        const li = document.createElement("li");
        li.textContent = f.properties.label + " (" + f.properties.citation + ")";
        list.appendChild(li);
      }
    } catch (e) { setStatus(e.message, true); }
  }

  // -- the proposal's features ----------------------------------------------------------------

  function deviceIcon(selected) {
    return L.divIcon({ className: "gsw-device" + (selected ? " selected" : ""), iconSize: [14, 14] });
  }

  function defaults(kind) {
    state.counter += 1;
    const pid = $("proposal-id").value || "P-1";
    const n = state.features.filter((f) => f.kind === kind).length + 1;
    if (kind === "devices") {
      return { device_id: "D-" + n, device_type: "drywell", serves_vehicle_traffic: $("device-class").value === "vehicle" };
    }
    if (kind === "disturbance") return { disturbance_id: pid + "-d" + n };
    return { surface: "roof" };
  }

  function addFeature(kind, layer, props) {
    const item = { kind, layer, props: Object.assign({}, props) };
    state.features.push(item);
    layer.gswItem = item;
    if (layer instanceof L.Marker) {
      layer.on("drag", () => scheduleCheck(60));
      layer.on("dragend", () => scheduleCheck(0));
    } else {
      layer.setStyle(STYLE[kind]);
      layer.on("pm:edit pm:markerdrag pm:drag", () => scheduleCheck(60));
      layer.on("pm:markerdragend pm:dragend", () => scheduleCheck(0));
    }
    layer.on("click", (e) => {
      if (state.mode) return; // drawing or placing: the click belongs to the map
      L.DomEvent.stopPropagation(e);
      select(item);
    });
    layer.on("pm:remove", () => {
      state.features = state.features.filter((f) => f !== item);
      if (state.selected === item) select(null);
      scheduleCheck(0);
    });
    select(item);
    scheduleCheck(0);
    return item;
  }

  function placeDevice(latlng, props) {
    const marker = L.marker(latlng, { draggable: true, icon: deviceIcon(false), pane: "devices", autoPan: false });
    marker.addTo(map);
    return addFeature("devices", marker, props || defaults("devices"));
  }

  function addPolygon(kind, latlngs, props) {
    const layer = L.polygon(latlngs, { pane: "edit" }).addTo(map);
    return addFeature(kind, layer, props || defaults(kind));
  }

  function select(item) {
    for (const f of state.features) {
      if (f.layer instanceof L.Marker) f.layer.setIcon(deviceIcon(f === item));
    }
    state.selected = item;
    const form = $("feature-form");
    form.textContent = "";
    if (!item) { form.hidden = true; return; }
    form.hidden = false;
    const title = document.createElement("strong");
    title.textContent = { devices: "Device", disturbance: "Limits of disturbance", impervious: "New impervious surface" }[item.kind];
    form.appendChild(title);
    for (const [name, type, choices] of FIELDS[item.kind]) {
      const label = document.createElement("label");
      label.textContent = name.replace(/_/g, " ") + " ";
      let input;
      if (type === "bool" || type === "choice") {
        input = document.createElement("select");
        const options = type === "bool" ? [["", "unknown"], ["true", "yes"], ["false", "no"]] : choices.map((c) => [c, c]);
        for (const [value, text] of options) {
          const o = document.createElement("option");
          o.value = value; o.textContent = text;
          input.appendChild(o);
        }
        const v = item.props[name];
        input.value = v === true ? "true" : v === false ? "false" : (v === null || v === undefined ? "" : String(v));
      } else {
        input = document.createElement("input");
        input.type = type === "number" ? "number" : type === "date" ? "date" : "text";
        if (type === "number") input.step = "any";
        const v = item.props[name];
        input.value = v === null || v === undefined ? "" : String(v);
      }
      input.name = name;
      input.dataset.field = name;
      input.addEventListener("change", () => {
        const raw = input.value;
        let value = raw === "" ? null : raw;
        if (type === "bool") value = raw === "" ? null : raw === "true";
        if (type === "number") value = raw === "" ? null : Number(raw);
        item.props[name] = value;
        scheduleCheck(0);
      });
      label.appendChild(input);
      form.appendChild(label);
    }
    const remove = document.createElement("button");
    remove.type = "button";
    remove.textContent = "Delete";
    remove.addEventListener("click", () => {
      map.removeLayer(item.layer);
      state.features = state.features.filter((f) => f !== item);
      select(null);
      scheduleCheck(0);
    });
    form.appendChild(remove);
  }

  function clearFeatures() {
    for (const f of state.features) map.removeLayer(f.layer);
    state.features = [];
    select(null);
  }

  function documentBody() {
    const pid = $("proposal-id").value.trim();
    const features = state.features.map((f) => {
      const geometry = f.layer.toGeoJSON(15).geometry;
      const properties = Object.assign({ layer: f.kind }, f.props);
      return { type: "Feature", properties, geometry };
    });
    const proposal = { proposal_id: pid, land_use: $("land-use").value || null, exemption: $("exemption").value || null };
    Object.assign(proposal, state.extraAttributes || {}, { proposal_id: pid, land_use: proposal.land_use, exemption: proposal.exemption });
    return { type: "FeatureCollection", proposal, features };
  }
  app.documentBody = documentBody;

  function loadDocument(doc) {
    clearFeatures();
    state.loaded = true;
    const attrs = doc.proposal || {};
    $("proposal-id").value = attrs.proposal_id || "P-1";
    $("land-use").value = attrs.land_use || "";
    $("exemption").value = attrs.exemption || "";
    state.extraAttributes = {};
    for (const [k, v] of Object.entries(attrs)) {
      if (!["proposal_id", "land_use", "exemption"].includes(k) && v !== null) state.extraAttributes[k] = v;
    }
    let first = null;
    for (const feature of doc.features) {
      const props = Object.assign({}, feature.properties);
      const kind = props.layer;
      delete props.layer;
      if (feature.geometry.type === "Point") {
        const [lon, lat] = feature.geometry.coordinates;
        placeDevice(L.latLng(lat, lon), props);
        first = first || L.latLng(lat, lon);
      } else {
        const gj = geo(feature);
        gj.eachLayer((layer) => {
          const latlngs = layer.getLatLngs();
          addPolygon(kind, latlngs, props);
          first = first || layer.getBounds().getCenter();
        });
      }
    }
    select(null);
    if (first) pickAt(first);
  }

  // -- checking ---------------------------------------------------------------------------------

  function scheduleCheck(delay) {
    app.pending = true;
    state.fired = false;
    clearTimeout(state.timer);
    state.timer = setTimeout(() => { state.fired = true; runCheck(); }, delay);
  }

  async function runCheck() {
    if (!state.features.some((f) => f.kind === "disturbance" || f.kind === "devices")) {
      app.pending = false;
      renderFindings({ findings: [], geometries: { type: "FeatureCollection", features: [] } });
      $("check-time").textContent = "(draw a disturbance or place a device)";
      return;
    }
    if (state.inflight) { // one request at a time; the latest edit is sent when it returns
      state.dirty = true;
      return;
    }
    state.inflight = true;
    state.dirty = false;
    const started = performance.now();
    try {
      const data = await api("/api/check", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(documentBody()),
      });
      data.round_trip_ms = Math.round(performance.now() - started);
      app.lastCheck = data;
      app.checks += 1;
      renderFindings(data);
      $("check-time").textContent = "(" + data.server_ms + " ms server, " + data.round_trip_ms + " ms round trip)";
      setStatus("");
    } catch (e) {
      app.lastError = e.message;
      setStatus(e.message, true);
    } finally {
      state.inflight = false;
      if (state.dirty) runCheck();
      else if (!state.timer || state.fired) app.pending = false;
    }
  }

  function renderFindings(data) {
    const body = $("findings").querySelector("tbody");
    body.textContent = "";
    const counts = {};
    const rank = (f) => OUTCOMES.indexOf(f.outcome);
    const rows = data.findings.slice().sort((a, b) => rank(a) - rank(b) || a.rule_id.localeCompare(b.rule_id));
    for (const f of rows) {
      counts[f.outcome] = (counts[f.outcome] || 0) + 1;
      const tr = document.createElement("tr");
      tr.dataset.rule = f.rule_id;
      tr.dataset.subject = f.subject_id;
      tr.dataset.outcome = f.outcome;
      const rule = document.createElement("td");
      rule.appendChild(textNode(f.rule_id));
      rule.title = f.title;
      const outcome = document.createElement("td");
      outcome.appendChild(textNode(f.outcome + (f.waived ? " (waived)" : ""), "outcome o-" + f.outcome));
      const figures = document.createElement("td");
      const unit = f.unit ? " " + f.unit : "";
      figures.textContent = f.measured === null && f.threshold === null ? "" :
        (f.measured === null ? "?" : f.measured) + " / " + (f.threshold === null ? "?" : f.threshold) + unit;
      const text = document.createElement("td");
      text.appendChild(textNode(f.message));
      text.appendChild(document.createElement("br"));
      text.appendChild(textNode(f.citation, "muted small"));
      tr.append(rule, outcome, figures, text);
      body.appendChild(tr);
    }
    const c = $("counts");
    c.textContent = "";
    for (const o of OUTCOMES) if (counts[o]) c.appendChild(textNode(counts[o] + " " + o, "o-" + o));
    findingsLayer.clearLayers();
    // lines (device to the offending feature) always; areas only when they fail or need review
    const drawn = data.geometries.features.filter((f) =>
      f.geometry.type.includes("LineString") || ["fail", "review"].includes(f.properties.outcome));
    findingsLayer.addLayer(geo({ type: "FeatureCollection", features: drawn }, {
      pane: "findings", interactive: true,
      style: (f) => ({
        color: COLOURS[f.properties.outcome] || "#333", fill: false,
        weight: f.geometry.type.includes("LineString") ? 3 : 2,
        dashArray: f.geometry.type.includes("LineString") ? null : "5 4",
      }),
      onEachFeature: (f, layer) => layer.bindTooltip(textNode(f.properties.rule_id + ": " + f.properties.message)),
    }));
  }

  // -- tools -------------------------------------------------------------------------------------

  function setMode(mode) {
    state.mode = mode;
    for (const id of ["draw-disturbance", "draw-impervious", "place-device", "draw-device"]) {
      $(id).classList.toggle("active", id === mode);
    }
    map.pm.disableDraw();
    if (mode && mode !== "place-device") map.pm.enableDraw("Polygon", { pathOptions: STYLE.disturbance });
  }

  map.on("pm:create", (e) => {
    const kind = { "draw-disturbance": "disturbance", "draw-impervious": "impervious", "draw-device": "devices" }[state.mode] || "disturbance";
    const latlngs = e.layer.getLatLngs();
    map.removeLayer(e.layer);
    setMode(null);
    addPolygon(kind, latlngs);
  });

  async function pickAt(latlng) {
    try {
      const data = await api("/api/parcels/at?lon=" + latlng.lng + "&lat=" + latlng.lat);
      if (data.features.length) chooseFromFeature(data.features[0]);
    } catch (e) { setStatus(e.message, true); }
  }

  map.on("click", (e) => {
    if (state.mode === "place-device") {
      setMode(null);
      placeDevice(e.latlng);
      return;
    }
    if (state.mode) return;
    select(null);
    pickAt(e.latlng);
  });
  map.on("moveend", loadParcels);

  for (const id of ["draw-disturbance", "draw-impervious", "place-device", "draw-device"]) {
    $(id).addEventListener("click", () => setMode(state.mode === id ? null : id));
  }
  $("device-class").addEventListener("change", loadSiting);
  $("siting-depth").addEventListener("change", loadSiting);
  for (const id of ["proposal-id", "land-use", "exemption"]) $(id).addEventListener("change", () => scheduleCheck(0));

  $("search-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const list = $("search-results");
    list.textContent = "";
    try {
      const data = await api("/api/parcels/search?q=" + encodeURIComponent($("search").value));
      if (!data.features.length) list.appendChild(textNode("No parcel matches.", "muted"));
      for (const f of data.features) {
        const li = document.createElement("li");
        const b = document.createElement("button");
        b.type = "button";
        b.className = "result";
        b.dataset.parcel = f.properties.parcel_id;
        b.textContent = f.properties.parcel_id + (f.properties.address ? " " + f.properties.address : "");
        b.addEventListener("click", () => chooseFromFeature(f));
        li.appendChild(b);
        list.appendChild(li);
      }
    } catch (err) { setStatus(err.message, true); }
  });

  $("upload").addEventListener("change", async () => {
    const file = $("upload").files[0];
    if (!file) return;
    if (file.size > state.town.max_upload_bytes) {
      setStatus(file.name + " is " + file.size.toLocaleString("en-US") + " bytes; the limit is " + state.town.max_upload_bytes.toLocaleString("en-US") + " bytes.", true);
      return;
    }
    try {
      const data = await api("/api/upload?filename=" + encodeURIComponent(file.name), { method: "POST", body: file });
      if (!data.documents.length) { setStatus(file.name + ": no proposal in the file.", true); return; }
      offerDocuments(data.documents);
      setStatus("Opened " + data.filename + ": proposal " + data.documents[0].proposal.proposal_id +
        (data.documents.length > 1 ? " (first of " + data.documents.length + ")" : ""));
    } catch (e) { setStatus(e.message, true); }
    $("upload").value = "";
  });

  function offerDocuments(docs) {
    state.documents = docs;
    const list = $("documents");
    list.textContent = "";
    docs.forEach((doc, i) => {
      const o = document.createElement("option");
      o.value = String(i);
      o.textContent = doc.proposal.proposal_id + (doc.proposal.name ? " (" + doc.proposal.name + ")" : "");
      list.appendChild(o);
    });
    $("documents-label").hidden = docs.length < 2;
    state.lot = null;
    loadDocument(docs[0]);
  }
  $("documents").addEventListener("change", () => {
    state.lot = null;
    loadDocument(state.documents[Number($("documents").value)]);
  });

  // the file of a POST of the current proposal, saved under the name the server gives
  async function download(path, fallback) {
    const response = await fetch(path, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(documentBody()),
    });
    if (!response.ok) {
      let message = response.status + " " + response.statusText;
      if ((response.headers.get("content-type") || "").includes("json")) {
        const body = await response.json();
        if (body && body.error) message = body.error;
      }
      throw new Error(message);
    }
    const blob = await response.blob();
    const given = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") || "");
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = given ? given[1] : fallback;
    document.body.appendChild(a);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
    return a.download;
  }
  function stem() { return $("proposal-id").value.replace(/[^A-Za-z0-9_.-]/g, "_") || "proposal"; }
  async function exportAs(path, fallback, busy) {
    try {
      if (busy) setStatus(busy);
      app.lastExport = await download(path, fallback);
      setStatus("Exported " + app.lastExport);
    } catch (e) { setStatus(e.message, true); }
  }
  $("export-gpkg").addEventListener("click", () => exportAs("/api/export?format=gpkg", stem() + ".gpkg"));
  $("export-geojson").addEventListener("click", () => exportAs("/api/export?format=geojson", stem() + ".geojson"));
  $("export-findings-csv").addEventListener("click", () =>
    exportAs("/api/export/findings?format=csv", stem() + "-findings.csv"));
  $("export-findings-geojson").addEventListener("click", () =>
    exportAs("/api/export/findings?format=geojson", stem() + "-findings-geojson.zip"));
  $("export-sheet").addEventListener("click", () =>
    exportAs("/api/export/sheet", stem() + ".pdf", "Drawing the sheet..."));

  app.placeDevice = (lat, lon, props) => placeDevice(L.latLng(lat, lon), props);
  app.chooseLot = chooseLot;
  app.toPage = (lat, lon) => {
    const p = map.latLngToContainerPoint([lat, lon]);
    const r = $("map").getBoundingClientRect();
    return [p.x + r.left, p.y + r.top];
  };

  // -- start ---------------------------------------------------------------------------------

  (async function start() {
    try {
      const town = await api("/api/town");
      state.town = town;
      $("town-title").textContent = town.title;
      const lu = $("land-use");
      for (const v of ["", ...town.land_uses]) {
        const o = document.createElement("option");
        o.value = v; o.textContent = v || "(unknown)";
        lu.appendChild(o);
      }
      const ex = $("exemption");
      for (const [letter, text] of [["", "(none)"], ...Object.entries(town.exemptions)]) {
        const o = document.createElement("option");
        o.value = letter; o.textContent = letter ? letter + ": " + text : text;
        ex.appendChild(o);
      }
      const [w, s, e, n] = town.bounds;
      map.fitBounds([[s, w], [n, e]]);
      if (town.documents.length) offerDocuments(town.documents);
      app.ready = true;
    } catch (e) { setStatus(e.message, true); }
  })();
})();
