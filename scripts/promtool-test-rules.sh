#!/usr/bin/env bash
# Checks the alerting side's configuration with the real tools and runs the rules' unit tests:
#   promtool check rules / test rules deploy/prometheus/anes-rules*.yml,
#   promtool check config deploy/prometheus/prometheus.yml,
#   amtool check-config deploy/alertmanager.yml (with the token file pointed at a temporary file).
# Installs prometheus and prometheus-alertmanager first when they are missing (scripts/install-ops-servers.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-ops-servers.sh
promtool check rules deploy/prometheus/anes-rules.yml
promtool test rules deploy/prometheus/anes-rules.test.yml
promtool check config deploy/prometheus/prometheus.yml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "token" >"$tmp/token"
sed "s|/etc/anes/token|$tmp/token|" deploy/alertmanager.yml >"$tmp/alertmanager.yml"
amtool check-config "$tmp/alertmanager.yml"
