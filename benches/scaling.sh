#!/usr/bin/env bash
# Throughput across cores: frames per second, and per core, of the two parallel workloads with 1 and
# with 2 jobs, whole-process wall time in one run (the only honest clock for a parallel job):
#   conformance: `anes conformance --manifest M --jobs J` (every ROM runs until its result or budget;
#                frames = the sum of the frames each ROM ran, from --json)
#   canary:      `anes canary --corpus tests/canary/golden.toml --jobs J` (each of the 9 bundled ROMs'
#                5,000 frames checked against its golden log; frames = the frames agreed, from --json;
#                with an odd number of cases on 2 jobs the last one runs alone, which the efficiency shows)
# Scaling efficiency = fps(2 jobs) / (2 x fps(1 job)): 1.00 is perfect; on a 2-core machine the
# operating system and the other work of the machine take some of the second core.
#
# bash benches/scaling.sh [--quick] [--json]
#   --quick  conformance on the ROMs whose path contains "rom_singles" (the single-test ROMs of the
#            blargg suites, many of a similar length, so 2 jobs share them evenly): what .ci/run runs.
#   --json   one JSON object on stdout instead of the table.
# The conformance ROMs come from ../shared/conformance (or ANES_CONFORMANCE_DIR); without them only
# the canary runs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

quick=0
json=0
for arg in "$@"; do
    case "$arg" in
        --quick) quick=1 ;;
        --json) json=1 ;;
        *) echo "scaling: unknown argument $arg (use --quick, --json)" >&2; exit 2 ;;
    esac
done
cores=$(nproc)
if ((cores < 2)); then
    echo "scaling: this machine has $cores core; 2 jobs would measure nothing" >&2
    exit 1
fi

bash scripts/release-build.sh --quiet
anes="${CARGO_TARGET_DIR:-target}/release/anes"
conformance_dir="${ANES_CONFORMANCE_DIR:-../shared/conformance}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

corpus=tests/canary/golden.toml

# Runs one workload with J jobs; prints "frames seconds".
run() {
    local what=$1 jobs=$2 out="$work/$1-$2.json" started ended
    started=$(date +%s.%N)
    case "$what" in
        conformance)
            local filter=()
            ((quick)) && filter=(--filter rom_singles)
            # Exit 1 only means some ROM did not pass (the baseline is .ci/run's business).
            "$anes" conformance --manifest "$conformance_dir/manifest.toml" --jobs "$jobs" "${filter[@]}" \
                --json >"$out" || [[ $? -eq 1 ]]
            ;;
        canary)
            "$anes" canary --corpus "$corpus" --jobs "$jobs" --json >"$out"
            ;;
    esac
    ended=$(date +%s.%N)
    python3 - "$what" "$out" "$started" "$ended" <<'EOF'
import json, sys
what, path, started, ended = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
report = json.load(open(path))
if what == "conformance":
    frames = sum(r["frames"] for r in report["results"])
else:
    # A case that failed has no summary; the assertion below (same frames at 1 and 2 jobs) catches it.
    frames = sum(c["summary"]["frames_agreed"] for c in report["cases"] if c.get("summary"))
print(frames, round(ended - started, 3))
EOF
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
workloads=(canary)
[[ -f "$conformance_dir/manifest.toml" ]] && workloads=(conformance canary)
rows=()
for what in "${workloads[@]}"; do
    read -r frames1 seconds1 < <(run "$what" 1)
    read -r frames2 seconds2 < <(run "$what" 2)
    rows+=("$what $frames1 $seconds1 $frames2 $seconds2")
done

python3 - "$json" "$cores" "$load_before" "${rows[@]}" <<'EOF'
import json, sys
as_json, cores, load = sys.argv[1] == "1", int(sys.argv[2]), sys.argv[3]
results = []
for row in sys.argv[4:]:
    what, f1, s1, f2, s2 = row.split()
    f1, s1, f2, s2 = int(f1), float(s1), int(f2), float(s2)
    assert f1 == f2, f"{what}: 1 and 2 jobs ran different frames ({f1}, {f2})"
    fps1, fps2 = f1 / s1, f2 / s2
    results.append({
        "workload": what, "frames": f1,
        "jobs_1": {"seconds": s1, "frames_per_second": round(fps1), "per_core": round(fps1)},
        "jobs_2": {"seconds": s2, "frames_per_second": round(fps2), "per_core": round(fps2 / 2)},
        "speedup": round(fps2 / fps1, 3), "efficiency": round(fps2 / (2 * fps1), 3),
    })
if as_json:
    print(json.dumps({"cores": cores, "load_average": load, "results": results}, indent=2))
else:
    print(f"scaling: {cores} cores, load average {load} (before the runs)")
    print(f"{'workload':<12} {'frames':>8} {'1 job fps':>10} {'2 jobs fps':>11} {'per core':>9} {'speedup':>8} {'efficiency':>10}")
    for r in results:
        print(f"{r['workload']:<12} {r['frames']:>8} {r['jobs_1']['frames_per_second']:>10} "
              f"{r['jobs_2']['frames_per_second']:>11} {r['jobs_2']['per_core']:>9} {r['speedup']:>8.2f} "
              f"{r['efficiency']:>10.2f}")
EOF
