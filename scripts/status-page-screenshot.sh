#!/usr/bin/env bash
# Takes the screenshot of anes serve's status page in docs/: two pipelines, p1 (alert policy) just after
# an injected divergence (read-only, waiting for the alert: no Alertmanager runs here) and p2 (immediate
# policy, process workers) in normal mode. Headless Chromium from Debian's package (installed when
# missing). Everything on 127.0.0.1; the service is stopped by PID on exit.
#   bash scripts/status-page-screenshot.sh [OUT.png]   (default docs/status-page.png)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-docs/status-page.png}"

bash scripts/install-ops-servers.sh --chromium
cargo build --release -p anes-cli
tmp=$(mktemp -d)
serve_pid=""
cleanup() {
    if [[ -n "$serve_pid" ]]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "screenshot-token" >"$tmp/token"
cat >"$tmp/anes.toml" <<TOML
[server]
listen = "127.0.0.1:$port"
token_file = "token"
evidence_dir = "evidence"
drill = true

[[pipeline]]
id = "p1"
rollback = "alert"

[[pipeline]]
id = "p2"
rollback = "immediate"
workers = "process"
TOML
target/release/anes serve --config "$tmp/anes.toml" 2>"$tmp/serve.log" >/dev/null &
serve_pid=$!
for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
    sleep 0.1
done
sleep 3
curl -sf -X POST -H "Authorization: Bearer screenshot-token" -H "Content-Type: application/json" \
    -d '{"worker": "b", "fault": "flip:ram:0x07f0:3"}' "http://127.0.0.1:$port/v1/pipelines/p1/drill" >/dev/null
sleep 2
timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/chromium" --hide-scrollbars --window-size=1400,400 \
    --screenshot="$tmp/page.png" "http://127.0.0.1:$port/" 2>/dev/null
cp "$tmp/page.png" "$out"
echo "wrote $out ($(stat -c %s "$out") bytes)"
