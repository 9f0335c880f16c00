/* gis-sw web map: draws the layers embedded in #gis-sw-data with Leaflet.
 * Every attribute value is put on the page with textContent, never as HTML. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("gis-sw-data").textContent);
  var FT_PER_M = 1 / 0.3048;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function safeColour(value, fallback) {
    return /^#[0-9a-fA-F]{3,8}$/.test(value || "") ? value : fallback;
  }

  function styleOf(layer, feature) {
    var s = layer.style;
    var p = feature && feature.properties ? feature.properties : {};
    var colour = safeColour(p._colour, s.color);
    var fill = safeColour(p._fill, s.fillColor);
    return {
      color: colour, weight: s.weight, opacity: 1, dashArray: s.dashArray || null,
      fillColor: fill, fillOpacity: s.fill ? s.fillOpacity : 0, fill: !!s.fill
    };
  }

  function popupFor(layer, feature) {
    var box = el("div", "gsw-popup");
    var p = feature.properties || {};
    box.appendChild(el("div", "gsw-popup-title", p._title || layer.title));
    if (p.message) { box.appendChild(el("p", "gsw-message", p.message)); }
    var table = el("table");
    Object.keys(p).forEach(function (key) {
      if (key.charAt(0) === "_" || key === "message") { return; }
      var value = p[key];
      if (value === null || value === undefined || value === "") { return; }
      var row = el("tr");
      row.appendChild(el("th", null, key));
      row.appendChild(el("td", null, value));
      table.appendChild(row);
    });
    box.appendChild(table);
    return box;
  }

  var SEVERITY = { fail: 0, review: 1, required: 2, info: 3, pass: 4 };
  var TOLERANCE_PX = 6;

  function isFindings(layer) { return layer.key.indexOf("findings_") === 0; }

  function segmentDistance(p, a, b) {
    var dx = b.x - a.x, dy = b.y - a.y;
    var t = dx || dy ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / (dx * dx + dy * dy) : 0;
    t = Math.max(0, Math.min(1, t));
    return Math.hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy));
  }

  function ringContains(p, ring) {
    var inside = false;
    for (var i = 0, j = ring.length - 1; i < ring.length; j = i, i += 1) {
      var a = ring[i], b = ring[j];
      if ((a.y > p.y) !== (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x) {
        inside = !inside;
      }
    }
    return inside;
  }

  function flatRings(latlngs) {
    /* Leaflet nests polygon rings one or two levels deep: return a list of rings of points */
    if (!latlngs.length) { return []; }
    if (latlngs[0] instanceof L.LatLng) {
      return [latlngs.map(function (ll) { return map.latLngToLayerPoint(ll); })];
    }
    return latlngs.reduce(function (all, part) { return all.concat(flatRings(part)); }, []);
  }

  function hits(item, latlng) {
    var p = map.latLngToLayerPoint(latlng);
    if (item instanceof L.CircleMarker) {
      return p.distanceTo(map.latLngToLayerPoint(item.getLatLng())) <= item.getRadius() + TOLERANCE_PX;
    }
    var rings = flatRings(item.getLatLngs());
    var near = rings.some(function (ring) {
      for (var i = 1; i < ring.length; i += 1) {
        if (segmentDistance(p, ring[i - 1], ring[i]) <= TOLERANCE_PX) { return true; }
      }
      return false;
    });
    if (near || !(item instanceof L.Polygon)) { return near; }
    var inside = 0;
    rings.forEach(function (ring) { if (ringContains(p, ring)) { inside += 1; } });
    return inside % 2 === 1;  /* inside an odd number of rings: not in a hole */
  }

  function findingsAt(latlng) {
    /* every visible finding under the click, most severe first */
    var found = [];
    data.layers.forEach(function (layer) {
      if (!isFindings(layer) || !map.hasLayer(groups[layer.key])) { return; }
      groups[layer.key].eachLayer(function (item) {
        if (hits(item, latlng)) { found.push({ layer: layer, feature: item.feature }); }
      });
    });
    if (found.length < 2) { return null; }
    found.sort(function (a, b) {
      var pa = a.feature.properties, pb = b.feature.properties;
      return (SEVERITY[pa.outcome] - SEVERITY[pb.outcome]) ||
        String(pa.rule_id).localeCompare(String(pb.rule_id));
    });
    var box = el("div", "gsw-popup");
    box.appendChild(el("div", "gsw-popup-title", found.length + " findings here, most severe first"));
    found.forEach(function (f) {
      var part = popupFor(f.layer, f.feature);
      part.className = "gsw-hit";
      box.appendChild(part);
    });
    return box;
  }

  var map = L.map("map", { zoomSnap: 0.25, preferCanvas: false });
  var measuring = false;
  var points = [];
  var overlays = {};
  var groups = {};
  var counts = {};

  data.layers.forEach(function (layer) {
    var group = L.geoJSON(layer.features, {
      style: function (feature) { return styleOf(layer, feature); },
      pointToLayer: function (feature, latlng) {
        var s = styleOf(layer, feature);
        s.radius = layer.style.radius || 5;
        s.fill = true;
        s.fillOpacity = layer.style.fillOpacity;
        return L.circleMarker(latlng, s);
      },
      onEachFeature: function (feature, item) {
        item.on("click", function (event) {
          L.DomEvent.stopPropagation(event);
          if (measuring) { addPoint(event.latlng); return; }
          var content = isFindings(layer) ? findingsAt(event.latlng) : null;
          L.popup({ maxWidth: 380, maxHeight: 420 }).setLatLng(event.latlng)
            .setContent(content || popupFor(layer, feature)).openOn(map);
        });
      }
    });
    groups[layer.key] = group;
    counts[layer.key] = group.getLayers().length;
    if (layer.visible) { group.addTo(map); }
    var label = el("span");
    var swatch = el("span", "gsw-swatch");
    swatch.style.background = layer.style.fill ? safeColour(layer.style.fillColor, "#ffffff") : "transparent";
    swatch.style.borderColor = safeColour(layer.style.color, "#000000");
    if (layer.style.dashArray) { swatch.style.borderStyle = "dashed"; }
    label.appendChild(swatch);
    label.appendChild(document.createTextNode(" " + layer.title + " (" + counts[layer.key] + ")"));
    overlays[label.outerHTML] = group;
  });

  L.control.layers(null, overlays, { collapsed: false, position: "topright" }).addTo(map);
  L.control.scale({ imperial: true, metric: false, maxWidth: 200 }).addTo(map);

  var b = data.bounds;
  map.fitBounds([[b[1], b[0]], [b[3], b[2]]], { padding: [20, 20], maxZoom: 21 });

  /* click-to-measure: each click adds a vertex; the total is shown in feet */
  var line = L.polyline([], { color: "#000000", weight: 2, dashArray: "6 4" });
  var Measure = L.Control.extend({
    options: { position: "topleft" },
    onAdd: function () {
      var box = el("div", "leaflet-bar gsw-measure");
      var button = el("a", null, "Measure");
      button.href = "#";
      button.setAttribute("role", "button");
      var readout = el("div", "gsw-readout", "");
      box.appendChild(button);
      box.appendChild(readout);
      L.DomEvent.disableClickPropagation(box);
      L.DomEvent.on(button, "click", function (event) {
        L.DomEvent.preventDefault(event);
        measuring = !measuring;
        points = [];
        line.setLatLngs([]);
        button.textContent = measuring ? "Stop measuring" : "Measure";
        readout.textContent = measuring ? "Click points on the map" : "";
        if (measuring) { line.addTo(map); } else { line.remove(); }
      });
      this.readout = readout;
      return box;
    }
  });
  var measure = new Measure();
  measure.addTo(map);

  function measuredFeet() {
    var total = 0;
    for (var i = 1; i < points.length; i += 1) { total += map.distance(points[i - 1], points[i]); }
    return total * FT_PER_M;
  }

  function addPoint(latlng) {
    points.push(latlng);
    line.setLatLngs(points);
    measure.readout.textContent = measuredFeet().toFixed(1) + " ft (great-circle)";
  }

  map.on("click", function (event) {
    if (measuring) { addPoint(event.latlng); }
  });

  var title = el("div", "gsw-title");
  title.appendChild(el("strong", null, data.title));
  title.appendChild(el("div", null, data.subtitle));
  title.appendChild(el("div", "gsw-disclaimer", data.disclaimer));
  var Title = L.Control.extend({
    options: { position: "bottomleft" },
    onAdd: function () { L.DomEvent.disableClickPropagation(title); return title; }
  });
  new Title().addTo(map);

  /* the applications: a searchable list (id, name, parcel id, address) and a label each */
  var applications = data.applications || [];
  var labels = [];
  applications.forEach(function (app) {
    var tip = el("span", null, app.id);
    labels.push(L.tooltip({ permanent: true, direction: "center", className: "gsw-label" })
      .setLatLng([app.label[1], app.label[0]]).setContent(tip).addTo(map));
  });
  function zoomTo(app) {
    var b = app.bounds;
    map.fitBounds([[b[1], b[0]], [b[3], b[2]]], { padding: [40, 40], maxZoom: 20 });
  }
  function matches(app, query) {
    if (!query) { return true; }
    var hay = [app.id, app.name].concat(app.parcels, app.addresses).join("\n").toLowerCase();
    return hay.indexOf(query) !== -1;
  }
  var Apps = L.Control.extend({
    options: { position: "topleft" },
    onAdd: function () {
      var box = el("div", "gsw-apps");
      box.appendChild(el("strong", null, "Applications (" + applications.length + ")"));
      var search = el("input");
      search.type = "search";
      search.placeholder = "Search id, parcel or address";
      box.appendChild(search);
      var list = el("div");
      box.appendChild(list);
      function draw() {
        var query = search.value.trim().toLowerCase();
        list.textContent = "";
        applications.filter(function (app) { return matches(app, query); }).forEach(function (app) {
          var cls = app.fail ? "gsw-app fail" : (app.review ? "gsw-app review" : "gsw-app");
          var row = el("div", cls);
          row.appendChild(el("div", null, app.id + (app.name ? " (" + app.name + ")" : "")));
          row.appendChild(el("div", "gsw-verdict", app.verdict));
          row.addEventListener("click", function () { zoomTo(app); });
          list.appendChild(row);
        });
      }
      search.addEventListener("input", draw);
      search.addEventListener("keydown", function (event) {
        if (event.key !== "Enter") { return; }
        var first = applications.filter(function (app) {
          return matches(app, search.value.trim().toLowerCase());
        })[0];
        if (first) { zoomTo(first); }
      });
      draw();
      L.DomEvent.disableClickPropagation(box);
      L.DomEvent.disableScrollPropagation(box);
      return box;
    }
  });
  new Apps().addTo(map);

  window.gisSw = {
    map: map, groups: groups, counts: counts, measuredFeet: measuredFeet,
    applications: applications, findingsAt: findingsAt, ready: true
  };
}());
