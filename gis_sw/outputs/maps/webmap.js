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
          L.popup({ maxWidth: 360 }).setLatLng(event.latlng)
            .setContent(popupFor(layer, feature)).openOn(map);
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

  window.gisSw = {
    map: map, groups: groups, counts: counts, measuredFeet: measuredFeet,
    ready: true
  };
}());
