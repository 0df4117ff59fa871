#!/usr/bin/env bash
# Installs what the operations side's tests need, from Debian's packages, when it is missing:
#   prometheus (prometheus, promtool), prometheus-alertmanager (prometheus-alertmanager, amtool),
#   with --chromium, chromium (the status page screenshot), and with --redis, redis-server (redis-server,
#   redis-cli: the Redis checkpoint store's tests and benchmark), and with --pushgateway,
#   prometheus-pushgateway (the canary's push test), with --postgres, postgresql (the PostgreSQL
#   checkpoint store's tests), and with --moto, moto's S3 server from PyPI (`moto[server]`, the S3
#   store's tests; pip, not Debian). A single --redis, --pushgateway, --postgres or --moto checks only
#   that; flags combine (--redis --chromium --pushgateway --postgres --moto).
# The packages' services do not start by themselves here; the tests start their own instances.
# Exit status: 0 when everything asked for is installed, 1 when it is not and cannot be.
set -euo pipefail

want=(prometheus prometheus-alertmanager)
for flag in "$@"; do
    case "$flag" in
        --chromium) want+=(chromium) ;;
        --redis) want+=(redis-server) ;;
        --pushgateway) want+=(prometheus-pushgateway) ;;
        --postgres) want+=(postgresql) ;;
        --moto) want+=(moto) ;;
        *) echo "install-ops-servers: unknown flag $flag (use --chromium, --redis, --pushgateway, --postgres, --moto)" >&2; exit 1 ;;
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
# --postgres or --moto alone: only that server.
if [[ "$*" == "--postgres" ]]; then
    want=(postgresql)
fi
if [[ "$*" == "--moto" ]]; then
    want=(moto)
fi

# moto comes from PyPI: installed here, apart from the Debian packages below.
if [[ " ${want[*]} " == *" moto "* ]]; then
    if ! python3 -c "import moto.server" 2>/dev/null; then
        echo "install-ops-servers: installing moto[server] (pip)" >&2
        if ! python3 -m pip --version >/dev/null 2>&1 && command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip >/dev/null ||
                { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip >/dev/null; }
        fi
        # Debian's own python3 refuses system-wide pip installs unless told (PEP 668). As root (CI),
        # pip's warning about running as root is expected: PIP_ROOT_USER_ACTION silences it.
        PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q "moto[server]" >/dev/null 2>&1 ||
            PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q --break-system-packages "moto[server]" >/dev/null
    fi
    python3 -c "import moto.server" 2>/dev/null || { echo "install-ops-servers: moto[server] cannot be installed" >&2; exit 1; }
    remaining=()
    for package in "${want[@]}"; do [[ $package == moto ]] || remaining+=("$package"); done
    want=("${remaining[@]}")
fi

missing=()
for package in "${want[@]}"; do
    case "$package" in
        prometheus) command -v prometheus >/dev/null && command -v promtool >/dev/null || missing+=(prometheus) ;;
        prometheus-alertmanager) command -v prometheus-alertmanager >/dev/null || missing+=(prometheus-alertmanager) ;;
        chromium) command -v chromium >/dev/null || missing+=(chromium) ;;
        redis-server) command -v redis-server >/dev/null && command -v redis-cli >/dev/null || missing+=(redis-server) ;;
        prometheus-pushgateway) command -v prometheus-pushgateway >/dev/null || missing+=(prometheus-pushgateway) ;;
        # The tests run initdb and pg_ctl from here (Debian keeps them off PATH).
        postgresql) compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql) ;;
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
