#!/bin/bash
# The fully-distributed paper's Table 1: YOLOv2 at 608x608 split by LOP alone
# against layer fusion (shoal's `fuse-ilp`), on 1-7 emulated devices at 10,
# 100 and 1000 Mbit/s (one device: one row, at 100 Mbit/s, as the paper
# has it; no link is used): each plan predicted by `shoal simulate` (from the
# cluster file's specs) and, for the pairs in MEASURE, measured by `shoal
# bench` on an emulated cluster (`shoal cluster up`), with the paper's
# figures beside them where it has that row. `auto` (shoal's own choice)
# is predicted and measured beside them. Devices: speed 1 (a Raspberry Pi 3,
# calibrated on the host by cluster up), 1 GiB, the link's bandwidth and
# LATENCY per message (the paper's devices were containers on one bridge).
# Prints markdown (bash bench/run_all.sh yolov2 writes it into
# docs/BENCHMARKS.md).
#
#   bash bench/yolov2_table1.sh                      # ~1 hour
#   SIZES=6 BANDWIDTHS=100 MEASURE="6@100" bash bench/yolov2_table1.sh
#   MEASURE="" bash bench/yolov2_table1.sh            # predictions only, minutes
#
# Env: BUILD_DIR (default build), SIZES (default "1 2 3 4 5 6 7", the
# paper's 1, 3, 5, 6 and 7 devices and the sizes between), BANDWIDTHS
# (Mbit/s, default "10 100 1000"), STRATEGIES (default "lop fuse-ilp
# fuse-ilp+bytes auto"; +bytes: fuse-ilp's objective the paper's total bytes,
# shoal plan --fuse-objective bytes), MEASURE (devices@Mbit pairs to
# measure, default the paper's rows that fall in SIZES: 6@10 6@100 6@1000
# and N@100 for every N, 2 and 4 too; on one device only the first
# strategy is measured), LATENCY (default 1ms), REQUESTS (timed requests per
# plan after a warm-up, default 2; 1 at 10 Mbit/s), PORT_BASE (default
# 7600).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
shoal=$BUILD_DIR/shoal
SIZES=${SIZES:-"1 2 3 4 5 6 7"}
BANDWIDTHS=${BANDWIDTHS:-"10 100 1000"}
STRATEGIES=${STRATEGIES:-"lop fuse-ilp fuse-ilp+bytes auto"}
LATENCY=${LATENCY:-1ms}
REQUESTS=${REQUESTS:-2}
PORT_BASE=${PORT_BASE:-7600}
# bandwidths_for N: the bandwidths of N devices' rows; one device uses no
# link, so it has one row, at 100 Mbit/s (the paper's) if that is asked for.
bandwidths_for() {
  if [ "$1" != 1 ]; then echo $BANDWIDTHS
  elif [[ " $BANDWIDTHS " == *" 100 "* ]]; then echo 100
  else echo "${BANDWIDTHS%% *}"; fi
}
if [ -z "${MEASURE+set}" ]; then
  MEASURE=""
  for n in $SIZES; do
    for bw in $(bandwidths_for "$n"); do
      if [ "$bw" = 100 ] || [ "$n" = 6 ]; then MEASURE="$MEASURE $n@$bw"; fi
    done
  done
fi
[ -x "$shoal" ] || { echo "no $shoal: build first (make build)" >&2; exit 1; }
model=yolov2
shape=1x3x608x608

. "$here/lib.sh"
bench_init yolo "$PORT_BASE"

# The paper's Table 1 (run time in s, LOP and FUSE) by devices@Mbit.
declare -A paper=([6@10]="74.2 64.2" [6@100]="11.6 10.1" [6@1000]="5.92 5.59"
                  [1@100]="13.1 13.3" [3@100]="8.64 8.26" [5@100]="10.5 9.35"
                  [7@100]="12.1 11.0")

# cluster N MBIT [MEMORY] -> path of a cluster file of N such devices.
cluster() {
  local f="$work/c$1-$2.yaml" i
  echo "devices:" > "$f"
  for ((i = 0; i < $1; i++)); do
    alloc_port
    printf '  - {name: d%d, address: 127.0.0.1:%d, memory: %s, cores: 4, speed: 1, link: {bandwidth: %sMbit, latency: %s}}\n' \
      "$i" "$PORT" "${3:-1GiB}" "$2" "$LATENCY" >> "$f"
  done
  echo "$f"
}

# plan_for CLUSTER STRATEGY OUT: shoal plan, or fails with its message.
plan_for() {
  local s=$2 extra=()
  if [[ $s == *+bytes ]]; then s=${s%+bytes}; extra+=(--fuse-objective bytes); fi
  "$shoal" plan "$model" --input-shape "$shape" --cluster "$1" --strategy "$s" \
    "${extra[@]}" -o "$3" > "$work/plan.out" 2> "$work/err"
}

# predict CLUSTER PLAN -> predicted median latency, s
predict() {
  "$shoal" simulate --plan "$2" --cluster "$1" --requests 3 --json 2> "$work/err" |
    python3 -c 'import json, sys; print("%.2f" % (json.load(sys.stdin)["latency_ms"]["median"] / 1000))'
}

# measure CLUSTER PLAN REQUESTS -> "median_s wire_MB", or "- error"
measure() {
  local out
  "$shoal" cluster up --mode "$MODE" "$1" > "$work/up.log" 2>&1 || { echo "- $(tail -c 200 "$work/up.log" | tr '\n' ' ')"; return; }
  started+=("$1")
  if ! out=$("$shoal" bench --plan "$2" --cluster "$1" --requests "$3" --json --timeout-ms 900000 2> "$work/err"); then
    "$shoal" cluster down "$1" > /dev/null 2>&1 || true
    echo "- $(tail -c 300 "$work/err" | tr '\n' ' ')"; return; fi
  "$shoal" cluster down "$1" > /dev/null 2>&1 || true
  python3 -c 'import json, sys; j = json.load(sys.stdin); print("%.2f %.1f" % (j["latency_ms"]["median"] / 1000, j["bytes_per_request"] / 1e6))' <<< "$out"
}

measured() { [[ " $MEASURE " == *" $1 "* ]]; }
ratio() { python3 -c "import sys; a, b = sys.argv[1:]; print('%.2fx' % (float(a) / float(b)) if a not in ('', '-') and b not in ('', '-') else '')" "$1" "$2"; }

cat <<TXT
YOLOv2 at 608x608 split by LOP alone, by layer fusion (\`fuse-ilp\`, with its
default link-time objective and with the paper's total bytes,
\`fuse-ilp+bytes\` = \`--fuse-objective bytes\`, docs/fuse-ilp.md) and by
\`auto\`, on $(echo $SIZES | sed 's/ /, /g') emulated devices at $(echo $BANDWIDTHS | sed 's/ /, /g') Mbit/s (one device: one row, no link used): every plan predicted
by \`shoal simulate\` from the cluster file's specs, and the pairs ${MEASURE:-(none)} measured
by \`shoal bench\` (MODE=$MODE). Devices: \`speed: 1\` (a Raspberry Pi 3,
calibrated on the host by \`cluster up\`), 1 GiB, $LATENCY per message (the
paper's devices were containers on one bridge). Wire: what the workers
measured they sent, per request. F_n: the most weight bytes one device
holds under LOP.

TXT

echo "Times in s (predicted by shoal simulate from the cluster's specs / measured by shoal bench, median of its requests). fuse/lop: LOP's time over FUSE's (above 1: FUSE faster)."
echo
hdr="| devices | Mbit/s |"; sep="|---:|---:|"
for s in $STRATEGIES; do hdr="$hdr $s predicted | $s measured |"; sep="$sep---:|---:|"; done
hdr="$hdr fuse/lop predicted | fuse/lop measured | paper LOP | paper FUSE | paper fuse/lop | wire MB/req measured (${STRATEGIES// //}) | F_n MB |"
sep="$sep---:|---:|---:|---:|---:|---|---:|"
echo "$hdr"; echo "$sep"
for n in $SIZES; do
  for bw in $(bandwidths_for "$n"); do
    c=$(cluster "$n" "$bw")
    key="$n@$bw"
    row="| $n | $bw |"
    declare -A pred=() meas=()
    wires=""; fn=""
    for s in $STRATEGIES; do
      p="$work/$n-$bw-$s.json"
      if ! plan_for "$c" "$s" "$p"; then
        echo "$key $s: $(tail -c 200 "$work/err" | tr '\n' ' ')" >&2
        row="$row - | - |"; wires="$wires -/"; continue
      fi
      pred[$s]=$(predict "$c" "$p")
      meas[$s]=""
      # one device: every strategy runs the same whole model; measure one
      if measured "$key" && { [ "$n" != 1 ] || [ "$s" = "${STRATEGIES%% *}" ]; }; then
        local_requests=$REQUESTS; [ "$bw" -le 10 ] && local_requests=1
        read -r ms wire <<< "$(measure "$c" "$p" "$local_requests")"
        if [ "$ms" = - ]; then echo "$key $s: $wire" >&2; wire="-"; fi
        meas[$s]=$ms; wires="$wires$wire/"
      fi
      if [ "$s" = lop ]; then  # the paper's F_n: weights per device, even split
        fn=$(python3 -c 'import json, sys
p = json.load(open(sys.argv[1])); per = {}
for t in p["tasks"]:
    for w in t["weights"]:
        k = 1
        for b, e in zip(w["region"]["begin"], w["region"]["end"]): k *= e - b
        key = (w["source"], tuple(w["region"]["begin"]), tuple(w["region"]["end"]))
        for d in set(t["devices"]): per.setdefault(d, {})[key] = 4 * k
print("%.0f" % (max(sum(v.values()) for v in per.values()) / 1e6))' "$p")
      fi
      row="$row ${pred[$s]} | ${meas[$s]:-} |"
    done
    read -r pl pf <<< "${paper[$key]:-}"
    row="$row $(ratio "${pred[lop]:-}" "${pred[fuse-ilp]:-}") | $(ratio "${meas[lop]:-}" "${meas[fuse-ilp]:-}") | ${pl:-} | ${pf:-} | $(ratio "${pl:-}" "${pf:-}") | ${wires%/} | $fn |"
    echo "$row" | tee -a "$work/rows"
  done
done
echo
python3 - "$work/rows" "$STRATEGIES" <<'PY'
import sys
strategies = sys.argv[2].split()
n = len(strategies)
faster, slower, auto_best = [], [], []
measured = 0
one = ""
for line in open(sys.argv[1]):
    c = [x.strip() for x in line.split("|")[1:-1]]
    key = f"{c[0]} devices at {c[1]} Mbit/s"
    meas = {s: c[3 + 2 * i] for i, s in enumerate(strategies)}
    if c[0] == "1":  # every strategy is the whole model there: the baseline
        ok = lambda v: v not in ("", "-")
        p1 = next((c[2 + 2 * i] for i in range(n) if ok(c[2 + 2 * i])), "")
        m1 = next((v for v in meas.values() if ok(v)), "")
        one = ("One device runs the whole model whatever the strategy: "
               + f"predicted {p1} s" + (f", measured {m1} s" if m1 else "")
               + (f" (paper: LOP {c[2 + 2 * n + 2]} s, FUSE {c[2 + 2 * n + 3]} s)" if c[2 + 2 * n + 2] else "")
               + ". ") if p1 else ""
        continue
    fl = c[2 + 2 * n + 1].rstrip("x")
    paper = c[2 + 2 * n + 4].rstrip("x")
    if fl:
        (faster if float(fl) >= 1 else slower).append(f"{key} {fl}x" + (f" (paper {paper}x)" if paper else ""))
    try:
        m = {s: float(v) for s, v in meas.items() if v not in ("", "-")}
        if m:
            measured += 1
        if "auto" in m and len(m) > 1 and m["auto"] <= min(m.values()):
            auto_best.append(key)
    except ValueError:
        pass
print("Reading: " + one + "Measured, fusion (`fuse-ilp`) is faster than LOP on "
      + (", ".join(faster) if faster else "no measured row")
      + (("; slower on " + ", ".join(slower)) if slower else "") + ". "
      + (f"`auto` is the fastest measured plan on {len(auto_best)} of {measured} measured rows "
         "(it keeps the early, activation-heavy layers in strips). " if "auto" in strategies else "")
      + "Where the measurement is well above the prediction at high bandwidth,"
      " hundreds of MB per request cross the host's loopback between worker"
      " processes held to a Pi 3's share of a core: the CPU cost of moving the"
      " bytes, which the model prices per message.")
PY
