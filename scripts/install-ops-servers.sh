#!/usr/bin/env bash
# Installs what the operations side's tests need, from Debian's packages, when it is missing:
#   prometheus (prometheus, promtool), prometheus-alertmanager (prometheus-alertmanager, amtool),
#   and with --chromium, chromium (the status page screenshot).
# The packages' services do not start by themselves here; the tests start their own instances.
# Exit status: 0 when everything asked for is installed, 1 when it is not and cannot be.
set -euo pipefail

want=(prometheus prometheus-alertmanager)
[[ "${1:-}" == "--chromium" ]] && want+=(chromium)

missing=()
for package in "${want[@]}"; do
    case "$package" in
        prometheus) command -v prometheus >/dev/null && command -v promtool >/dev/null || missing+=(prometheus) ;;
        prometheus-alertmanager) command -v prometheus-alertmanager >/dev/null || missing+=(prometheus-alertmanager) ;;
        chromium) command -v chromium >/dev/null || missing+=(chromium) ;;
    esac
done
if [[ ${#missing[@]} -eq 0 ]]; then
    exit 0
fi
if ! command -v apt-get >/dev/null || [[ $(id -u) != 0 ]]; then
    echo "install-ops-servers: missing ${missing[*]}, and apt-get as root is not available" >&2
    exit 1
fi
echo "install-ops-servers: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
