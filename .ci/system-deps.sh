#!/usr/bin/env bash
# System packages some tests use (headless Chromium for the web map, PostGIS for the PostGIS
# reader, poppler's pdftoppm to look at report pages). Installed when missing and when apt is
# available; the tests that need them skip with a clear reason otherwise.
set -uo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v pdftoppm >/dev/null 2>&1 || need+=(poppler-utils)
[ -d /usr/share/postgresql/15/extension ] && ls /usr/share/postgresql/15/extension/postgis.control >/dev/null 2>&1 || need+=(postgresql-15-postgis-3)
if [ ${#need[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "ci: installing ${need[*]}" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}") >/tmp/gis_sw-apt.log 2>&1 \
        || { echo "ci: apt-get install failed (see /tmp/gis_sw-apt.log); dependent tests will skip" >&2; }
fi
exit 0
