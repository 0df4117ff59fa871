#!/usr/bin/env bash
# Installs what the operations side's tests need, from Debian's packages, when it is missing:
#   prometheus (prometheus, promtool), prometheus-alertmanager (prometheus-alertmanager, amtool),
#   with --chromium, chromium (the status page screenshot), and with --redis, redis-server (redis-server,
#   redis-cli: the Redis checkpoint store's tests and benchmark), and with --pushgateway,
#   prometheus-pushgateway (the canary's push test). With --redis alone only redis-server is checked;
#   flags combine (--redis --chromium --pushgateway).
# The packages' services do not start by themselves here; the tests start their own instances.
# Exit status: 0 when everything asked for is installed, 1 when it is not and cannot be.
set -euo pipefail

want=(prometheus prometheus-alertmanager)
for flag in "$@"; do
    case "$flag" in
        --chromium) want+=(chromium) ;;
        --redis) want+=(redis-server) ;;
        --pushgateway) want+=(prometheus-pushgateway) ;;
        *) echo "install-ops-servers: unknown flag $flag (use --chromium, --redis, --pushgateway)" >&2; exit 1 ;;
    esac
done
# --redis alone: only what the store's tests need.
if [[ "$*" == "--redis" ]]; then
    want=(redis-server)
fi
# --pushgateway alone: only the Pushgateway.
if [[ "$*" == "--pushgateway" ]]; then
    want=(prometheus-pushgateway)
fi

missing=()
for package in "${want[@]}"; do
    case "$package" in
        prometheus) command -v prometheus >/dev/null && command -v promtool >/dev/null || missing+=(prometheus) ;;
        prometheus-alertmanager) command -v prometheus-alertmanager >/dev/null || missing+=(prometheus-alertmanager) ;;
        chromium) command -v chromium >/dev/null || missing+=(chromium) ;;
        redis-server) command -v redis-server >/dev/null && command -v redis-cli >/dev/null || missing+=(redis-server) ;;
        prometheus-pushgateway) command -v prometheus-pushgateway >/dev/null || missing+=(prometheus-pushgateway) ;;
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
