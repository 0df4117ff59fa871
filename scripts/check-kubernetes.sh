#!/usr/bin/env bash
# Checks deploy/kubernetes offline, as CI does:
#   - Kubernetes' own kinds (StatefulSet, Service, NetworkPolicy, Secret, ConfigMap, Job, Namespace)
#     with kubernetes-validate's strict mode (PyPI), against the schemas of the Kubernetes version it
#     ships;
#   - the custom resources against the strict JSON schemas in deploy/kubernetes/schemas/ (Argo Rollouts'
#     AnalysisTemplate; prometheus-operator's PrometheusRule, PodMonitor and AlertmanagerConfig): a kind
#     with no schema there fails;
#   - every Prometheus query of the AnalysisTemplate and every rule of the PrometheusRule with promtool;
#     the PrometheusRule's rules must equal deploy/prometheus/anes-rules.yml's, and
#     deploy/prometheus/anes-rules.test.yml must pass against them;
#   - that the objects agree with each other and with the code: the coordinator's replica count and
#     its --replica-from-hostname, one Alertmanager route per replica to that replica's webhook URL,
#     the configuration's worker addresses and token files against the worker StatefulSets, Services
#     and mounted files, anti-affinity between the two worker roles, the NetworkPolicy's selectors,
#     the PodMonitor's selector, port and job, probe paths served by crates/anes-ops/src/http, Secrets
#     holding only REPLACE-... placeholders.
#
#   scripts/check-kubernetes.sh              check the repository's manifests
#   scripts/check-kubernetes.sh --self-test  break copies of them in known ways: each must fail
#
# Installs kubernetes-validate, jsonschema and PyYAML with pip when they are missing; promtool comes
# from scripts/install-ops-servers.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# (CI runs as root: pip's warning about that is expected, PIP_ROOT_USER_ACTION silences it.)
python3 -c "import kubernetes_validate, jsonschema, yaml, tomllib" 2>/dev/null ||
    PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q kubernetes-validate jsonschema PyYAML
command -v promtool >/dev/null || bash scripts/install-ops-servers.sh

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check ROOT WORKDIR: checks ROOT's deploy/ (and the HTTP routes in ROOT's crates/anes-ops); exit 1 on
# any failure.
check() {
    python3 - "$1" "$2" <<'PY'
import json, re, subprocess, sys, pathlib, tomllib
import jsonschema, kubernetes_validate, yaml
from kubernetes_validate.utils import SchemaNotFoundError, latest_version

root, tmp = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
folder = root / "deploy" / "kubernetes"
SCHEMAS = {
    ("argoproj.io/v1alpha1", "AnalysisTemplate"): "analysis-template.schema.json",
    ("monitoring.coreos.com/v1", "PrometheusRule"): "prometheusrule.schema.json",
    ("monitoring.coreos.com/v1", "PodMonitor"): "podmonitor.schema.json",
    ("monitoring.coreos.com/v1alpha1", "AlertmanagerConfig"): "alertmanagerconfig.schema.json",
}
failures = 0

def fail(where, message):
    global failures
    failures += 1
    print(f"ERROR {where}: {message}")

def ok(where, message):
    print(f"OK    {where}: {message}")

docs = []
for path in sorted(folder.glob("*.yaml")):
    try:
        loaded = list(yaml.safe_load_all(path.read_text()))
    except yaml.YAMLError as e:
        fail(path, f"not YAML: {e}")
        continue
    for i, doc in enumerate(loaded):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            fail(f"{path} document {i + 1}", "not a mapping")
            continue
        name = (doc.get("metadata") or {}).get("name")
        docs.append((f"{path.relative_to(root)} document {i + 1} ({doc.get('kind')} {name})", doc))

# ---- Each object against its schema ----------------------------------------------------------------
k8s_version = latest_version()
for where, doc in docs:
    schema_file = SCHEMAS.get((doc.get("apiVersion"), doc.get("kind")))
    if schema_file:
        schema = json.loads((folder / "schemas" / schema_file).read_text())
        errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=str)
        for e in errors:
            fail(where, f"{'/'.join(map(str, e.path)) or '(top)'}: {e.message}")
        if not errors:
            ok(where, f"schemas/{schema_file}")
        continue
    try:
        kubernetes_validate.validate(doc, k8s_version, strict=True)
        ok(where, f"kubernetes-validate --strict (Kubernetes {k8s_version})")
    except SchemaNotFoundError:
        fail(where, f"no schema for {doc.get('apiVersion')} {doc.get('kind')}: add one to deploy/kubernetes/schemas/")
    except jsonschema.ValidationError as e:
        fail(where, f"{'/'.join(map(str, e.path)) or '(top)'}: {e.message}")

# The checks below read the objects' fields: they need objects of the right shape.
if failures:
    print(f"{failures} object(s) do not validate: the rule and cross-object checks wait until they do")
    sys.exit(1)

# ---- Prometheus queries and rules --------------------------------------------------------------------
def promtool(*args):
    return subprocess.run(["promtool", *args], capture_output=True, text=True)

queries = []
for where, doc in docs:
    if doc.get("kind") != "AnalysisTemplate":
        continue
    spec = doc.get("spec") or {}
    args = {a["name"]: a.get("value", f"sample-{a['name']}") for a in spec.get("args", [])}
    for metric in spec.get("metrics", []):
        query = metric["provider"]["prometheus"]["query"]
        filled = re.sub(r"\{\{\s*args\.([A-Za-z0-9_-]+)\s*\}\}", lambda m: args.get(m.group(1), "sample"), query)
        queries.append((f"{where} metric {metric['name']}", filled))
if queries:
    rules = {"groups": [{"name": "analysis_queries", "rules": [
        {"record": f"anes:analysis_query_{i}", "expr": q} for i, (_, q) in enumerate(queries)]}]}
    (tmp / "queries.yml").write_text(yaml.safe_dump(rules))
    result = promtool("check", "rules", str(tmp / "queries.yml"))
    if result.returncode != 0:
        fail("promtool", f"{result.stdout}{result.stderr}")
    else:
        for where, q in queries:
            ok(where, f"promtool parses {q}")

reference = yaml.safe_load((root / "deploy/prometheus/anes-rules.yml").read_text())
prometheus_yml = yaml.safe_load((root / "deploy/prometheus/prometheus.yml").read_text())
evaluation_interval = prometheus_yml["global"]["evaluation_interval"]
prometheus_rules = [(w, d) for w, d in docs if d.get("kind") == "PrometheusRule"]
for where, doc in prometheus_rules:
    groups = (doc.get("spec") or {}).get("groups", [])
    for g in groups:
        if g.get("interval") != evaluation_interval:
            fail(where, f"group {g.get('name')}: interval {g.get('interval')!r}, but the rules are written for "
                 f"deploy/prometheus/prometheus.yml's evaluation_interval {evaluation_interval!r}")
    bare = [{k: v for k, v in g.items() if k != "interval"} for g in groups]
    before = failures
    if bare != reference["groups"]:
        names = lambda gs: [(g.get("name"), [r.get("alert") or r.get("record") for r in g.get("rules", [])]) for g in gs]
        if names(bare) != names(reference["groups"]):
            fail(where, f"groups and rules {names(bare)} differ from deploy/prometheus/anes-rules.yml's {names(reference['groups'])}")
        for mine, theirs in zip(bare, reference["groups"]):
            for r1, r2 in zip(mine.get("rules", []), theirs.get("rules", [])):
                if r1 != r2:
                    fields = sorted(k for k in set(r1) | set(r2) if r1.get(k) != r2.get(k))
                    fail(where, f"rule {r1.get('alert') or r1.get('record')}: {', '.join(fields)} differ from deploy/prometheus/anes-rules.yml")
        if failures == before:
            fail(where, "the groups differ from deploy/prometheus/anes-rules.yml")
    else:
        ok(where, "the same groups and rules as deploy/prometheus/anes-rules.yml")
    extracted = tmp / "prometheusrule.yml"
    extracted.write_text(yaml.safe_dump({"groups": groups}))
    result = promtool("check", "rules", str(extracted))
    if result.returncode != 0:
        fail(where, f"promtool check rules: {result.stdout}{result.stderr}")
    else:
        ok(where, "promtool check rules")
    tests = yaml.safe_load((root / "deploy/prometheus/anes-rules.test.yml").read_text())
    tests["rule_files"] = [str(extracted)]
    (tmp / "prometheusrule.test.yml").write_text(yaml.safe_dump(tests))
    result = promtool("test", "rules", str(tmp / "prometheusrule.test.yml"))
    if result.returncode != 0:
        fail(where, f"promtool test rules with deploy/prometheus/anes-rules.test.yml: {result.stdout}{result.stderr}")
    else:
        ok(where, "deploy/prometheus/anes-rules.test.yml passes against it")

# ---- The objects agree with each other and with the code ---------------------------------------------
def objects(kind):
    return [(w, d) for w, d in docs if d.get("kind") == kind]

def named(kind, name):
    found = [(w, d) for w, d in objects(kind) if (d.get("metadata") or {}).get("name") == name]
    if not found:
        fail(f"deploy/kubernetes", f"no {kind} {name}")
        return None, None
    return found[0]

def matches(selector, labels):
    selector = selector or {}
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        present, value = e["key"] in labels, labels.get(e["key"])
        op = e["operator"]
        if (op == "In" and value not in e.get("values", [])) or (op == "NotIn" and value in e.get("values", [])) \
                or (op == "Exists" and not present) or (op == "DoesNotExist" and present):
            return False
    return bool(selector.get("matchLabels") or selector.get("matchExpressions"))

def pod_labels(sts):
    return sts["spec"]["template"]["metadata"].get("labels", {})

def container(sts):
    return sts["spec"]["template"]["spec"]["containers"][0]

def port_named(sts, name):
    return next((p["containerPort"] for p in container(sts).get("ports", []) if p.get("name") == name), None)

def mounted_files(sts):
    """Every file a projected, secret or configMap volume puts into the first container."""
    volumes = {v["name"]: v for v in sts["spec"]["template"]["spec"].get("volumes", [])}
    files = set()
    for mount in container(sts).get("volumeMounts", []):
        volume = volumes.get(mount["name"], {})
        sources = volume.get("projected", {}).get("sources", [])
        sources += [{"secret": volume["secret"]}] if "secret" in volume else []
        sources += [{"configMap": volume["configMap"]}] if "configMap" in volume else []
        for source in sources:
            for item in next(iter(source.values())).get("items", []):
                files.add(f"{mount['mountPath'].rstrip('/')}/{item['path']}")
    return files

def flag(args, name):
    return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else None

namespaces = [(d.get("metadata") or {}).get("name") for _, d in objects("Namespace")]
for where, doc in docs:
    ns = (doc.get("metadata") or {}).get("namespace")
    if ns is not None and ns not in namespaces:
        fail(where, f"namespace {ns!r} is not the Namespace of deploy/kubernetes ({namespaces})")

for where, secret in objects("Secret"):
    if "data" in secret:
        fail(where, "has data: keep Secrets here as templates (stringData with REPLACE-... placeholders)")
    for key, value in (secret.get("stringData") or {}).items():
        if not str(value).startswith("REPLACE-"):
            fail(where, f"stringData.{key} is not a REPLACE-... placeholder: no real secrets in the repository")
secrets = {d["metadata"]["name"]: d for _, d in objects("Secret")}

routes_rs = (root / "crates/anes-ops/src/http/mod.rs").read_text()
served_paths = set(re.findall(r'\.route\("([^"]+)"', routes_rs))

coord_where, coord = named("StatefulSet", "anes-coordinator")
primary_where, primary = named("StatefulSet", "dual-worker-primary")
secondary_where, secondary = named("StatefulSet", "dual-worker-secondary")
if coord and primary and secondary:
    replicas = coord["spec"].get("replicas", 1)
    args = container(coord).get("args", [])
    count = flag(args, "--replica-from-hostname")
    if count != str(replicas):
        fail(coord_where, f"--replica-from-hostname {count} but replicas {replicas}: every replica must be told the real count")
    else:
        ok(coord_where, f"{replicas} replicas, each told so by --replica-from-hostname")
    services = {d["metadata"]["name"]: (w, d) for w, d in objects("Service")}
    namespace = coord["metadata"].get("namespace", "default")
    for sts_where, sts in [(coord_where, coord), (primary_where, primary), (secondary_where, secondary)]:
        svc_where, svc = services.get(sts["spec"].get("serviceName"), (None, None))
        if svc is None:
            fail(sts_where, f"serviceName {sts['spec'].get('serviceName')!r}: no such Service")
            continue
        if svc["spec"].get("clusterIP") != "None" or not svc["spec"].get("publishNotReadyAddresses"):
            fail(svc_where, "must be headless (clusterIP None) and publish not-ready pods, for stable per-pod names")
        if not matches({"matchLabels": svc["spec"].get("selector", {})}, pod_labels(sts)):
            fail(svc_where, f"its selector does not select {sts['metadata']['name']}'s pods")
        for port in svc["spec"].get("ports", []):
            if port_named(sts, port.get("targetPort")) != port["port"]:
                fail(svc_where, f"port {port['port']} -> {port.get('targetPort')!r}: not the same port of the container")
    for kind in ["startupProbe", "livenessProbe", "readinessProbe"]:
        probe = container(coord).get(kind)
        if probe is None:
            fail(coord_where, f"no {kind}")
        elif probe["httpGet"]["path"] not in served_paths:
            fail(coord_where, f"{kind} {probe['httpGet']['path']}: not an endpoint of crates/anes-ops/src/http ({sorted(served_paths)})")
        elif port_named(coord, probe["httpGet"]["port"]) is None:
            fail(coord_where, f"{kind}: no container port named {probe['httpGet']['port']!r}")
        else:
            ok(coord_where, f"{kind} on {probe['httpGet']['path']}, an endpoint the service has")

    # The configuration in the ConfigMap against the mounts and the workers.
    config_path = flag(args, "--config")
    coord_files = mounted_files(coord)
    if config_path not in coord_files:
        fail(coord_where, f"--config {config_path}: not a mounted file ({sorted(coord_files)})")
    cm_where, cm = named("ConfigMap", "anes-coordinator")
    if cm:
        try:
            config = tomllib.loads(cm["data"]["anes.toml"])
        except (KeyError, tomllib.TOMLDecodeError) as e:
            fail(cm_where, f"anes.toml: {e}")
            config = {}
        server = config.get("server", {})
        if server.get("token_file") not in coord_files:
            fail(cm_where, f"server.token_file {server.get('token_file')!r}: not a mounted file")
        workers = {"a": ("dual-worker-primary", primary, primary_where),
                   "b": ("dual-worker-secondary", secondary, secondary_where)}
        used = {}
        for p in config.get("pipeline", []):
            remote = p.get("remote")
            if p.get("workers") != "remote" or remote is None:
                continue
            if remote.get("token_file") not in coord_files:
                fail(cm_where, f"pipeline {p['id']}: remote.token_file {remote.get('token_file')!r}: not a mounted file")
            for side, (name, sts, sts_where) in workers.items():
                address = remote.get(side, "")
                m = re.fullmatch(rf"{re.escape(name)}-(\d+)\.{re.escape(sts['spec']['serviceName'])}(\.{re.escape(namespace)}(\.svc(\.cluster\.local)?)?)?:(\d+)", address)
                if not m:
                    fail(cm_where, f"pipeline {p['id']}: remote.{side} {address!r} is not a pod of {name} (NAME-K.{sts['spec']['serviceName']}:PORT)")
                    continue
                ordinal, port = int(m.group(1)), int(m.group(5))
                if ordinal >= sts["spec"].get("replicas", 1):
                    fail(cm_where, f"pipeline {p['id']}: remote.{side} {address}: {name} has {sts['spec'].get('replicas', 1)} replicas")
                if port != port_named(sts, "worker"):
                    fail(cm_where, f"pipeline {p['id']}: remote.{side} {address}: the workers listen on {port_named(sts, 'worker')}")
                if (name, ordinal) in used:
                    fail(cm_where, f"pipeline {p['id']}: {name}-{ordinal} already serves pipeline {used[(name, ordinal)]}")
                used[(name, ordinal)] = p["id"]
        if used:
            ok(cm_where, f"{len(used)} worker addresses, each a distinct pod of its StatefulSet on its worker port")
    for name, sts, sts_where in [("primary", primary, primary_where), ("secondary", secondary, secondary_where)]:
        worker_args = container(sts).get("args", [])
        token = flag(worker_args, "--token-file")
        if token not in mounted_files(sts):
            fail(sts_where, f"--token-file {token}: not a mounted file")
        listen = flag(worker_args, "--listen") or ""
        if not listen.endswith(f":{port_named(sts, 'worker')}"):
            fail(sts_where, f"--listen {listen}: not the container port named worker")
        other = secondary if sts is primary else primary
        terms = (sts["spec"]["template"]["spec"].get("affinity", {}).get("podAntiAffinity", {})
                 .get("requiredDuringSchedulingIgnoredDuringExecution", []))
        if not any(t.get("topologyKey") == "kubernetes.io/hostname" and matches(t.get("labelSelector"), pod_labels(other))
                   and not matches(t.get("labelSelector"), pod_labels(sts)) for t in terms):
            fail(sts_where, "no required podAntiAffinity (topologyKey kubernetes.io/hostname) against the other role's pods")
        else:
            ok(sts_where, "never scheduled on a node with the other role's workers")

    for where, policy in objects("NetworkPolicy"):
        spec = policy["spec"]
        if not (matches(spec.get("podSelector"), pod_labels(primary)) and matches(spec.get("podSelector"), pod_labels(secondary))):
            fail(where, "podSelector does not select both worker StatefulSets' pods")
        rules = spec.get("ingress", [])
        peers = [peer for rule in rules for peer in rule.get("from", [])]
        ports = {port.get("port") for rule in rules for port in rule.get("ports", [])}
        if "Ingress" not in spec.get("policyTypes", []) or not peers or any(
                set(peer) != {"podSelector"} or not matches(peer["podSelector"], pod_labels(coord))
                or matches(peer["podSelector"], pod_labels(primary)) for peer in peers):
            fail(where, "ingress must come only from the coordinator's pods")
        elif ports != {port_named(primary, "worker")} or ports != {port_named(secondary, "worker")}:
            fail(where, f"ports {ports}: not just the worker port")
        else:
            ok(where, "only the coordinator's pods reach the workers, on the worker port only")

    job = prometheus_yml["scrape_configs"][0]["job_name"]
    for where, monitor in objects("PodMonitor"):
        before = failures
        spec = monitor["spec"]
        if not matches(spec.get("selector"), pod_labels(coord)) or matches(spec.get("selector"), pod_labels(primary)):
            fail(where, "its selector must select the coordinator's pods and no worker's")
        if pod_labels(coord).get(spec.get("jobLabel")) != job:
            fail(where, f"jobLabel {spec.get('jobLabel')!r} does not give job {job!r}, the job the alert rules name")
        for endpoint in spec.get("podMetricsEndpoints", []):
            if port_named(coord, endpoint.get("port")) is None:
                fail(where, f"port {endpoint.get('port')!r}: no such container port")
            if endpoint.get("path") not in served_paths:
                fail(where, f"path {endpoint.get('path')!r}: not an endpoint of the service")
        if failures == before:
            ok(where, f"scrapes the coordinator's {spec['podMetricsEndpoints'][0].get('path')} as job {job}")

    coord_name, coord_svc = coord["metadata"]["name"], coord["spec"]["serviceName"]
    for where, amc in objects("AlertmanagerConfig"):
        before = failures
        spec = amc["spec"]
        receivers = {r["name"]: r for r in spec.get("receivers", [])}
        children = spec.get("route", {}).get("routes", [])
        wanted = {f"{coord_name}-{k}" for k in range(replicas)}
        got = {}
        for route in children:
            pods = [m.get("value") for m in route.get("matchers", []) if m.get("name") == "pod" and m.get("matchType", "=") == "="]
            receiver = receivers.get(route.get("receiver"), {})
            urls = [w.get("url") for w in receiver.get("webhookConfigs", [])]
            for pod in pods:
                got[pod] = urls
        for pod in sorted(wanted | set(got)):
            expected = f"http://{pod}.{coord_svc}.{namespace}.svc:{port_named(coord, 'http')}/v1/alertmanager"
            if pod not in wanted:
                fail(where, f"a route for {pod}, which is not a replica ({replicas} replicas)")
            elif got.get(pod) != [expected]:
                fail(where, f"{pod}: its route must send to {expected}, not {got.get(pod)}")
        if "/v1/alertmanager" not in served_paths:
            fail(where, "/v1/alertmanager is not an endpoint of the service")
        for receiver in receivers.values():
            for hook in receiver.get("webhookConfigs", []):
                cred = hook.get("httpConfig", {}).get("authorization", {}).get("credentials", {})
                if cred.get("key") not in (secrets.get(cred.get("name")) or {}).get("stringData", {}):
                    fail(where, f"receiver {receiver['name']}: credentials {cred}: no such Secret key in deploy/kubernetes")
        if failures == before:
            ok(where, f"one route per replica ({replicas}) to that replica's webhook, with the bearer token")

if not docs or not prometheus_rules or not queries:
    fail("deploy/kubernetes", "nothing was checked: no manifests, no PrometheusRule or no AnalysisTemplate queries")
sys.exit(1 if failures else 0)
PY
}

if [[ "${1:-}" == "--self-test" ]]; then
    # Each case breaks a copy of the manifests in one way and expects the check to fail naming it; the
    # untouched copy must pass.
    copy() {
        rm -rf "$tmp/root" && mkdir -p "$tmp/root/crates/anes-ops/src/http" "$tmp/work"
        cp -r deploy "$tmp/root/deploy"
        cp crates/anes-ops/src/http/mod.rs "$tmp/root/crates/anes-ops/src/http/mod.rs"
    }
    failed=0
    copy
    if ! check "$tmp/root" "$tmp/work" >"$tmp/out" 2>&1; then
        cat "$tmp/out"
        echo "self-test: the untouched copy fails"
        exit 1
    fi
    cases=(
        "a misspelt StatefulSet field|coordinator.yaml|  serviceName: anes-coordinator|  servicename: anes-coordinator|servicename"
        "an unknown PrometheusRule field|monitoring.yaml|      interval: 1s|      intervall: 1s|intervall"
        "a PrometheusRule expression that drifted|monitoring.yaml|worker_drift_offset_records > 50|worker_drift_offset_records > 60|expr differ"
        "a PromQL syntax error|monitoring.yaml|expr: anes_pipeline_stalled == 1|expr: anes_pipeline_stalled == = 1|promtool check rules: "
        "an unknown AlertmanagerConfig field|monitoring.yaml|    groupWait: 0s|    groupWaitt: 0s|groupWaitt"
        "a replica count out of step|coordinator.yaml|  replicas: 2|  replicas: 3|--replica-from-hostname 2 but replicas 3"
        "a probe on a missing endpoint|coordinator.yaml|              path: /readyz|              path: /ready|readinessProbe /ready"
        "a worker address beyond its StatefulSet|coordinator.yaml|dual-worker-secondary-1.dual-worker-secondary:9660|dual-worker-secondary-2.dual-worker-secondary:9660|has 2 replicas"
        "a real-looking secret|secrets.yaml|token: REPLACE-with-a-random-token-of-letters-and-digits|token: 0123456789abcdef|not a REPLACE-"
        "workers allowed on one node|workers.yaml|              topologyKey: kubernetes.io/hostname|              topologyKey: topology.kubernetes.io/zone|podAntiAffinity"
        "a custom resource without a schema|monitoring.yaml|kind: PodMonitor|kind: ServiceMonitor|no schema for monitoring.coreos.com/v1 ServiceMonitor"
        "a NetworkPolicy open to every pod|workers.yaml|        - podSelector:|        - namespaceSelector: {}\n          podSelector:|only from the coordinator"
    )
    for case in "${cases[@]}"; do
        IFS='|' read -r what file from to expect <<<"$case"
        copy
        python3 - "$tmp/root/deploy/kubernetes/$file" "$from" "$to" <<'PY'
import sys
path, old, new = sys.argv[1], sys.argv[2], sys.argv[3].replace("\\n", "\n")
text = open(path).read()
if old not in text:
    sys.exit(f"self-test: {old!r} is not in {path}: update the case")
open(path, "w").write(text.replace(old, new, 1))
PY
        if check "$tmp/root" "$tmp/work" >"$tmp/out" 2>&1; then
            echo "FAIL  $what: the check passed"
            failed=1
        elif ! grep -q -- "$expect" "$tmp/out"; then
            echo "FAIL  $what: the check failed without saying '$expect':"
            grep ERROR "$tmp/out" || cat "$tmp/out"
            failed=1
        else
            echo "OK    $what: $(grep -m1 ERROR "$tmp/out")"
        fi
    done
    [[ $failed == 0 ]] || exit 1
    echo "check-kubernetes self-test: every broken copy fails, the untouched one passes"
    exit 0
fi

check . "$tmp"
echo "deploy/kubernetes: every manifest, schema, rule and query checks"
