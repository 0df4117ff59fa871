#!/usr/bin/env bash
# Takes docs/status-page.png: headless Chromium's screenshot of the status page anes serve renders for
# two pipelines (p1, alert policy, read-only after a divergence, waiting for the alert; p2, immediate
# policy, normal), with the figures of a run of that setup. The page comes from anes-ops's test
# http::page::tests::docs_status_page_png_shows_todays_page, which then fails whenever the page renders
# differently from the picture: the PNG's anes-page-blake3 text chunk holds the hash of the HTML shown.
# Chromium from Debian's package (installed when missing). Nothing listens on a port.
#   bash scripts/status-page-screenshot.sh [OUT.png]   (default docs/status-page.png)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-docs/status-page.png}"
test_name=http::page::tests::docs_status_page_png_shows_todays_page

bash scripts/install-ops-servers.sh --chromium
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ANES_STATUS_PAGE_HTML="$tmp/page.html" cargo test -q -p anes-ops --lib "$test_name" -- --exact
timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/chromium" --hide-scrollbars --window-size=1400,400 \
    --screenshot="$tmp/page.png" "file://$tmp/page.html" 2>/dev/null
# The hash goes into a tEXt chunk before IEND (PNG: length, type, data, CRC-32 of type and data).
python3 - "$tmp/page.png" "$tmp/page.html.blake3" "$out" <<'PY'
import struct, sys, zlib
png, digest, out = open(sys.argv[1], "rb").read(), open(sys.argv[2]).read().strip(), sys.argv[3]
body = b"tEXt" + b"anes-page-blake3\0" + digest.encode()
chunk = struct.pack(">I", len(body) - 4) + body + struct.pack(">I", zlib.crc32(body))
iend = png.rindex(b"IEND") - 4
open(out, "wb").write(png[:iend] + chunk + png[iend:])
PY
echo "wrote $out ($(stat -c %s "$out") bytes)"
if [[ "$out" == docs/status-page.png ]]; then
    cargo test -q -p anes-ops --lib "$test_name" -- --exact
fi
