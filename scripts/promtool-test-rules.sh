#!/usr/bin/env bash
# Checks the alerting side's configuration with the real tools and runs the rules' unit tests:
#   promtool check rules / test rules deploy/prometheus/anes-rules*.yml,
#   promtool check config deploy/prometheus/prometheus.yml,
#   amtool check-config deploy/alertmanager.yml (with the token file pointed at a temporary file),
#   amtool config routes test: where the divergence alert of a production pipeline and of a canary
#   run pushed to a Pushgateway (job or exported_job anes_canary) are sent.
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
# The production alert reaches the webhook and the people; a canary's, scraped from a Pushgateway with
# honor_labels (job) or without (exported_job), reaches neither.
routes() {
    amtool config routes test --config.file="$tmp/alertmanager.yml" --verify.receivers="$1" "${@:2}" 2>/dev/null
}
divergence="alertname=DualWorkerStateDivergence severity=critical"
routes anes-remediation,operators $divergence job=anes pipeline_id=p1
routes anes-canary $divergence job=anes_canary pipeline_id=canary-42
routes anes-canary $divergence job=pushgateway exported_job=anes_canary pipeline_id=canary-42
routes operators alertname=AnesPipelineStalled severity=critical job=anes pipeline_id=p1
