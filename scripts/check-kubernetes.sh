#!/usr/bin/env bash
# Checks deploy/kubernetes offline, as CI does:
#   - Kubernetes' own kinds (Job, ConfigMap) with kubernetes-validate --strict (PyPI), against the
#     schemas of the Kubernetes version it ships;
#   - Argo Rollouts' AnalysisTemplate against deploy/kubernetes/analysis-template.schema.json (strict;
#     kubernetes-validate has no schemas for custom resources);
#   - every Prometheus query of the AnalysisTemplate with promtool (its {{args.*}} replaced by samples),
#     by wrapping them in a throwaway rule file.
# Installs kubernetes-validate, jsonschema and PyYAML with pip when they are missing; promtool comes
# from scripts/install-ops-servers.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

python3 -c "import kubernetes_validate, jsonschema, yaml" 2>/dev/null ||
    python3 -m pip install -q kubernetes-validate jsonschema PyYAML
command -v promtool >/dev/null || bash scripts/install-ops-servers.sh

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$tmp" <<'PY'
import json, re, subprocess, sys, pathlib
import jsonschema, yaml

tmp = pathlib.Path(sys.argv[1])
folder = pathlib.Path("deploy/kubernetes")
schema = json.loads((folder / "analysis-template.schema.json").read_text())
core, queries, failures = [], [], 0
for path in sorted(folder.glob("*.yaml")):
    for i, doc in enumerate(yaml.safe_load_all(path.read_text())):
        if doc is None:
            continue
        where = f"{path} document {i + 1} ({doc.get('kind')})"
        if doc.get("apiVersion", "").startswith("argoproj.io/"):
            errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=str)
            for e in errors:
                print(f"ERROR {where}: {'/'.join(map(str, e.path))}: {e.message}")
            failures += len(errors)
            if not errors:
                print(f"OK    {where}: AnalysisTemplate schema")
            args = {a["name"]: a.get("value", f"sample-{a['name']}") for a in doc["spec"].get("args", [])}
            for metric in doc["spec"]["metrics"]:
                query = metric["provider"]["prometheus"]["query"]
                filled = re.sub(r"\{\{\s*args\.([A-Za-z0-9_-]+)\s*\}\}", lambda m: args.get(m.group(1), "sample"), query)
                queries.append((f"{where} metric {metric['name']}", filled))
        else:
            out = tmp / f"core-{len(core)}.yaml"
            out.write_text(yaml.safe_dump(doc))
            core.append((where, out))
for where, out in core:
    result = subprocess.run(["kubernetes-validate", "--strict", "--quiet", str(out)], capture_output=True, text=True)
    if result.returncode != 0 or "ERROR" in result.stdout:
        print(f"ERROR {where}: {result.stdout.strip() or result.stderr.strip()}")
        failures += 1
    else:
        print(f"OK    {where}: kubernetes-validate --strict")
rules = {"groups": [{"name": "analysis_queries", "rules": [
    {"record": f"anes:analysis_query_{i}", "expr": q} for i, (_, q) in enumerate(queries)]}]}
(tmp / "queries.yml").write_text(yaml.safe_dump(rules))
result = subprocess.run(["promtool", "check", "rules", str(tmp / "queries.yml")], capture_output=True, text=True)
if result.returncode != 0:
    print(f"ERROR promtool: {result.stdout}{result.stderr}")
    failures += 1
else:
    for where, q in queries:
        print(f"OK    {where}: promtool parses {q}")
if not core or not queries:
    print("ERROR nothing was checked: deploy/kubernetes holds no Kubernetes kinds or no queries")
    failures += 1
sys.exit(1 if failures else 0)
PY
echo "deploy/kubernetes: every manifest and query checks"
