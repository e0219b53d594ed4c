#!/usr/bin/env bash
# Cohort tooling end to end (after scripts/setup-cohort.sh):
#  1. the Slurm array script run locally for every task index, merged with the
#     merge script, and compared with a single run (wall-clock fields aside);
#  2. summary and compare recomputed independently in Python;
#  3. the plots rendered to PNG (non-trivial size);
#  4. the Kubernetes manifest validated offline against the schema (strict).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
. scripts/drop7-bin.sh
export DROP7="$DROP7_BIN"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "-- slurm array, locally, 4 tasks"
export OUT_DIR="$work/cohort" GAMES=240 SEED_START=0xFFFFFFC0 POLICY=fair:d1s2 MAX_MOVES=300
for i in 1 2 3 4; do
  SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=4 SLURM_CPUS_PER_TASK=2 bash deploy/slurm/cohort.sbatch >/dev/null
done
# A restarted (preempted) task resumes and changes nothing.
SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=4 SLURM_CPUS_PER_TASK=1 bash deploy/slurm/cohort.sbatch | grep -q "played 0"
# Rerunning some tasks (sbatch --array=1,3): the task count (2) is not N, so
# the script refuses to run without SHARDS (no shard-1-of-2 file), and with
# SHARDS=4 resumes the right shard.
if SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=3 \
  bash deploy/slurm/cohort.sbatch 2>"$work/rerun.err" >/dev/null; then
  echo "cohort.sbatch ran shard 1/2 of a rerun of tasks 1,3" >&2; exit 1
fi
grep -q "set SHARDS" "$work/rerun.err"
test ! -e "$OUT_DIR/shard-1-of-2.jsonl"
SHARDS=4 SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=3 \
  SLURM_CPUS_PER_TASK=1 bash deploy/slurm/cohort.sbatch | grep -q "played 0"
# EXTRA's words reach drop7 as written: a `*` is not expanded to file names.
if (cd "$work" && touch a-file && SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=4 SLURM_CPUS_PER_TASK=1 \
  EXTRA='--table *' bash "$root/deploy/slurm/cohort.sbatch" 2>"$work/extra.err" >/dev/null); then
  echo "cohort.sbatch accepted EXTRA='--table *'" >&2; exit 1
fi
grep -q 'unknown table "\*"' "$work/extra.err"
# Every line of EXTRA counts: a bad flag on its second line is refused.
if SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=4 SLURM_CPUS_PER_TASK=1 EXTRA=$'--engine packed\n--no-such-flag' \
  bash deploy/slurm/cohort.sbatch 2>"$work/extra.err" >/dev/null; then
  echo "cohort.sbatch dropped the second line of EXTRA" >&2; exit 1
fi
grep -q -- '--no-such-flag' "$work/extra.err"
# Two flags in EXTRA: the finished shard resumes with nothing to play.
SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=4 SLURM_CPUS_PER_TASK=1 EXTRA=' --engine packed  --gravity portable ' \
  bash deploy/slurm/cohort.sbatch | grep -q "played 0"
SHARDS=4 bash deploy/slurm/merge.sbatch >/dev/null
"$DROP7" play --quiet --policy fair:d1s2 --games 240 --seed-start 0xFFFFFFC0 --max-moves 300 \
  --out "$work/single.jsonl" >/dev/null
"$DROP7" play --quiet --policy center --games 240 --seed-start 0xFFFFFFC0 --max-moves 300 \
  --out "$work/center.jsonl" >/dev/null

"$DROP7" summary --json "$OUT_DIR/cohort.jsonl" >"$work/summary.json"
"$DROP7" summary --plot "$work/summary.svg" "$OUT_DIR/cohort.jsonl" >/dev/null
"$DROP7" compare --json "$work/center.jsonl" "$OUT_DIR/cohort.jsonl" >"$work/compare.json"
"$DROP7" compare --plot "$work/compare.svg" "$work/center.jsonl" "$OUT_DIR/cohort.jsonl" >/dev/null

echo "-- python recomputation"
python3 - "$OUT_DIR/cohort.jsonl" "$work/single.jsonl" "$work/center.jsonl" \
  "$work/summary.json" "$work/compare.json" <<'PY'
import json, math, statistics, sys
merged, single, center, summ, comp = sys.argv[1:]
WALL = {"wallMs", "decisionMsP50", "decisionMsP95", "decisionMsP99", "engineVersion", "shard"}
def recs(p):
    return [json.loads(l) for l in open(p)]
def stable(rs):
    return [{k: v for k, v in r.items() if k not in WALL} for r in rs]
m, s, c = recs(merged), recs(single), recs(center)
assert len(m) == 240 and stable(m) == stable(s), "merged shards differ from the single run"
assert all("shard" not in r for r in m)
def q(xs, p):  # numpy's default (type 7)
    xs = sorted(xs); h = (len(xs) - 1) * p; lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])
close = lambda a, b: abs(a - b) <= 1e-9 * max(1.0, abs(b))
S = json.load(open(summ))
scores = [r["score"] for r in m]
assert S["games"] == 240 and S["censored"] == sum(r["censored"] for r in m)
sc = S["score"]
for key, want in [("mean", statistics.fmean(scores)), ("sd", statistics.stdev(scores)),
                  ("median", statistics.median(scores)), ("p25", q(scores, .25)),
                  ("p75", q(scores, .75)), ("min", min(scores)), ("max", max(scores))]:
    assert close(sc[key], want), (key, sc[key], want)
se = statistics.stdev(scores) / math.sqrt(len(scores))
assert sc["ci95Low"] < sc["mean"] < sc["ci95High"]
assert abs((sc["ci95High"] - sc["ci95Low"]) / 2 - 1.96 * se) < 0.2 * 1.96 * se
assert close(S["moves"]["mean"], statistics.fmean(r["moves"] for r in m))
assert close(S["work"]["median"], q([r["work"] for r in m], .5))
C = json.load(open(comp))
base = {r["seed"]: r["score"] for r in c}
d = [r["score"] - base[r["seed"]] for r in m]
assert C["pairs"] == 240 and C["unpaired"] == 0
assert close(C["meanDelta"], statistics.fmean(d)) and close(C["medianDelta"], statistics.median(d))
floor = 1.645 * statistics.stdev(d) / math.sqrt(len(d))
assert close(C["detectionFloor"], floor)
assert (C["wins"], C["ties"], C["losses"]) == (sum(x > 0 for x in d), sum(x == 0 for x in d), sum(x < 0 for x in d))
assert abs(statistics.fmean(d) - C["lowerBound95"] - floor) < 0.25 * floor
assert C["verdict"] == ("above the floor" if abs(statistics.fmean(d)) > floor else "not above the floor: not a measurement")
print("python recomputation agrees: mean %.1f, delta %.1f, floor %.1f" % (sc["mean"], C["meanDelta"], floor))
PY

echo "-- plots"
for f in summary compare; do
  rsvg-convert "$work/$f.svg" -o "$work/$f.png"
  size=$(stat -c %s "$work/$f.png")
  [ "$size" -gt 20000 ] || { echo "$f.png is only $size bytes"; exit 1; }
  python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); w,h=struct.unpack(">II",d[16:24]); assert d[:8]==b"\x89PNG\r\n\x1a\n" and (w,h)==(900,560), (w,h)' "$work/$f.png"
done

echo "-- kubernetes manifest (offline schema, strict)"
.venv-cohort/bin/kubernetes-validate --strict --quiet deploy/k8s/cohort-job.yaml
echo "-- kubernetes merge Job's script, locally (waits for shards, fails on a bad one)"
kdata="$work/k8s"
mkdir -p "$kdata/bin"
ln -s "$DROP7" "$kdata/bin/drop7"
.venv-cohort/bin/python - deploy/k8s/cohort-job.yaml >"$kdata/merge.sh" <<'PY'
import sys, yaml
merge = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d["metadata"]["name"] == "drop7-cohort-merge"][0]
print(merge["spec"]["template"]["spec"]["containers"][0]["args"][0])
PY
sed -i -e "s#/data/#$kdata/#g" -e 's/sleep 60/sleep 1/' "$kdata/merge.sh"
for i in 1 2 3 4; do : >"$kdata/shard-$i-of-4.jsonl"; done  # every shard started, none has a record
PATH="$kdata/bin:$PATH" SHARDS=4 timeout 60 sh "$kdata/merge.sh" >"$kdata/out" 2>"$kdata/err" &
merge_pid=$!
sleep 2.5
rm "$kdata/shard-3-of-4.jsonl"
cp "$OUT_DIR/shard-1-of-4.jsonl" "$OUT_DIR/shard-2-of-4.jsonl" "$kdata/"
head -c 100 "$OUT_DIR/shard-4-of-4.jsonl" >"$kdata/shard-4-of-4.tmp"  # mid-record
mv "$kdata/shard-4-of-4.tmp" "$kdata/shard-4-of-4.jsonl"
sleep 2.5
cp "$OUT_DIR/shard-3-of-4.jsonl" "$kdata/"
sleep 2.5
head -n 1 "$OUT_DIR/shard-4-of-4.jsonl" >"$kdata/shard-4-of-4.tmp"  # still being played
mv "$kdata/shard-4-of-4.tmp" "$kdata/shard-4-of-4.jsonl"
sleep 2.5
cp "$OUT_DIR/shard-4-of-4.jsonl" "$kdata/"
wait "$merge_pid"
grep -q "empty: no game records" "$kdata/err" && grep -q "incomplete last record" "$kdata/err" && grep -q "cannot open" "$kdata/err" && grep -q "missing games" "$kdata/err"
cmp "$kdata/cohort.jsonl" "$OUT_DIR/cohort.jsonl"
cp "$kdata/shard-1-of-4.jsonl" "$kdata/shard-2-of-4.jsonl"
if PATH="$kdata/bin:$PATH" SHARDS=4 timeout 60 sh "$kdata/merge.sh" 2>"$kdata/err2" >/dev/null; then
  echo "the merge Job's script merged overlapping shards" >&2; exit 1
fi
grep -q "overlapping shards" "$kdata/err2"
echo "cohort: ok"
