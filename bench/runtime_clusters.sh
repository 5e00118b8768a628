#!/bin/bash
# The distributed runtime on emulated boards (examples/BOARD-N.yaml: by
# default pi3, Raspberry Pi 3B+ computing as fast as ncnn runs one, 1 GiB,
# 62 Mbit/s + 9 ms links; BOARD=pi4: Pi 4B on Gigabit Ethernet; BOARD=lcp-pi3:
# the LCP paper's Pi 3), copied onto free ports from PORT_BASE: latency in
# board time and speedup over one such board running shoal and over one
# running ncnn (its published time, `shoal boards`), of the pipeline, each
# exact model-parallel strategy, fuse-ilp, and LCP split4/split8 of the same
# model (the LCP paper's Fig. 12), with bytes on the wire. Prints markdown
# (bench/run_all.sh writes it into docs/BENCHMARKS.md).
#
#   bash bench/runtime_clusters.sh                 # everything (~25 min)
#   MODELS=alexnet SIZES=4 bash bench/runtime_clusters.sh
#
# Env: BUILD_DIR (default build), MODELS, SIZES, STRATEGIES (a strategy
# with +px: its input is an image, sent as 8-bit pixels; PIXELS=1 (the
# default, as `shoal plan` plans zoo image models): every plan's, the
# one-device baseline's too, PIXELS=0: float32 (--float-input); with +wait: spatial strips wait for
# their halo, shoal plan --halo-overlap off; with +hub: partial sums go to the
# input device, shoal plan --reduce hub; with +scatter or +tree: shoal plan
# --broadcast scatter or tree (LCP too: lcp8+scatter); with +strips or +2d: spatial chains
# only as strips of rows or only as 2-D tiles, shoal plan --tiles; with +int8: the model quantized,
# shoal plan --dtype int8, calibrated on 16 random inputs in the range of
# normalised images, so exact against the int8 model, not the f32 one), LCP (default "lcp4 lcp8"), REQUESTS
# (timed requests per plan, default 2), PORT_BASE (default 7400), MEDIA
# (default "links": each device's own link only; "shared": the devices also
# share one channel of MEDIUM_RATE, default 62Mbit, the cluster file's
# `network: {medium: shared}`; "links shared": both, one after the other),
# BOARD (default pi3: examples/pi3-N.yaml; pi4, lcp-pi3),
# ROUNDS (default 1: every baseline and plan measured that many times in
# turn, one round after the other; the tables give each latency's median
# over the rounds and each speedup's median over the rounds' speedups, each
# round's plan over the same round's one device, with their range).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
shoal=$BUILD_DIR/shoal
MODELS=${MODELS:-"alexnet vgg16 resnet18"}
SIZES=${SIZES:-"4 8"}
STRATEGIES=${STRATEGIES:-"pipeline lop lip channel filter spatial fuse fuse-ilp"}
REQUESTS=${REQUESTS:-2}
LCP=${LCP:-"lcp4 lcp8"}
PORT_BASE=${PORT_BASE:-7400}
PIXELS=${PIXELS:-1}
MEDIA=${MEDIA:-links}
MEDIUM_RATE=${MEDIUM_RATE:-62Mbit}
ROUNDS=${ROUNDS:-1}
BOARD=${BOARD:-pi3}
[ -x "$shoal" ] || { echo "no $shoal: build first (make build)" >&2; exit 1; }
# A model given as an .onnx path is named in the tables by its file name.
name() { local b=${1##*/}; echo "${b%.onnx}"; }

. "$here/lib.sh"
bench_init rt "$PORT_BASE"

# cluster_file N [MEMORY]: sets CLUSTER, a copy of examples/BOARD-N.yaml (N
# devices; its first device for N = 1) on free ports, with MEMORY if given.
cluster_file() {
  local src="$root/examples/$BOARD-$1.yaml"
  [ "$1" = 1 ] && src="$root/examples/$BOARD-4.yaml"
  CLUSTER="$work/$BOARD-$1-$RANDOM.yaml"
  copy_cluster "$src" "$1" "$CLUSTER" "${2:-}"
}

# ncnn_ms MODEL -> ncnn's published time on one board of the cluster's
# class (shoal boards), or "-" where it publishes none. NCNN_MS
# ("model=ms ...") gives figures ncnn publishes for a model the board
# classes are not fitted to (its ViT-B on a Pi 4B).
ncnn_ms() {
  local kv
  for kv in ${NCNN_MS:-}; do
    [ "${kv%%=*}" = "$1" ] && { echo "${kv#*=}"; return; }
  done
  "$shoal" boards --json | python3 -c '
import json, sys
board, model = sys.argv[1], sys.argv[2]
for b in json.load(sys.stdin):
    if b["name"] == board:
        for m in b.get("models", []):
            if m["model"] == model: print("%.0f" % m["published_ms"]); sys.exit()
print("-")' "$BOARD_CLASS" "$1"
}

up() { cluster_up "$1"
       grep -q "NOT limited" "$work/up.log" && echo "(cgroups unavailable: $(grep -m1 'NOT limited' "$work/up.log"))" || true; }
down() { "$shoal" cluster down "$1" > /dev/null; }

# bench_plan CLUSTER PLAN -> median latency ms, or "-" and the error
bench_plan() {
  local out
  if ! out=$("$shoal" bench --plan "$2" --cluster "$1" --requests "$REQUESTS" --json --timeout-ms 300000 2> "$work/err"); then
    echo "- $(tail -c 300 "$work/err" | tr '\n' ' ')"; return; fi
  python3 -c 'import json, sys; j = json.load(sys.stdin); print("%.0f %.0f" % (j["latency_ms"]["median"], j["bytes_per_request"]))' <<< "$out"
}

# plan_weights PLAN -> the most weight bytes one device holds (the worker
# keeps one copy of a slice that several of its tasks read).
plan_weights() {
  python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
def n(r):
    k = 1
    for b, e in zip(r["begin"], r["end"]): k *= e - b
    return k
per = {}
for t in p["tasks"]:
    for w in t["weights"]:
        key = (w["source"], tuple(w["region"]["begin"]), tuple(w["region"]["end"]))
        # An int8 weight (read by a DequantizeLinear) is a byte a value.
        dq = any(x["op"] == "DequantizeLinear" and w["name"] in x["inputs"]
                 for x in t["fragment"]["nodes"])
        for d in set(t["devices"]): per.setdefault(d, {})[key] = (1 if dq else 4) * n(w["region"])
print(max(sum(v.values()) for v in per.values()) if per else 0)' "$1"
}

# plan_and_bench CLUSTER MODEL STRATEGY [BRANCHES] -> "ms wire weights", or
# "- error..." (STRATEGY+px: the input is an image, sent as 8-bit pixels)
plan_and_bench() {
  local c=$1 m=$2 s=$3 k=${4:-0} p="$work/plan.json" extra=()
  [ "$k" != 0 ] && extra=(--branches "$k")
  if [[ $s == *+wait ]]; then s=${s%+wait}; extra+=(--halo-overlap off); fi
  if [[ $s == *+hub ]]; then s=${s%+hub}; extra+=(--reduce hub); fi
  if [[ $s == *+strips ]]; then s=${s%+strips}; extra+=(--tiles strips); fi
  if [[ $s == *+2d ]]; then s=${s%+2d}; extra+=(--tiles 2d); fi
  if [[ $s == *+scatter ]]; then s=${s%+scatter}; extra+=(--broadcast scatter); fi
  if [[ $s == *+tree ]]; then s=${s%+tree}; extra+=(--broadcast tree); fi
  if [[ $s == *+int8 ]]; then
    s=${s%+int8}
    extra+=(--dtype int8 --calibration "$(calibration "$m")")
  fi
  if [[ $s == *+px ]]; then s=${s%+px}; extra+=(--image-input);
  elif [ "$PIXELS" = 1 ]; then extra+=(--image-input);
  else extra+=(--float-input); fi
  if ! "$shoal" plan "$m" --cluster "$c" --strategy "$s" "${extra[@]}" -o "$p" > "$work/plan.out" 2> "$work/err"; then
    echo "- $(tail -c 200 "$work/err" | tr '\n' ' ')"; return; fi
  # Fresh workers for every plan: a worker builds a new deployment before it
  # drops the old one, and two large ones exceed a 1 GiB device's cgroup.
  local ms
  up "$c" >&2
  ms=$(bench_plan "$c" "$p")
  down "$c"
  if [[ $ms == -* ]]; then echo "$ms"; return; fi
  echo "$ms $(plan_weights "$p")"
}

# calibration MODEL -> a .npy of 16 inputs for MODEL, uniform in [-2, 2.5]
# (an image normalised with ImageNet's mean and std spans about that).
calibration() {
  local f="$work/cal-$1.npy"
  if [ ! -f "$f" ]; then
    local shape
    shape=$("$shoal" analyze "$1" --json | python3 -c 'import json,sys; print(",".join(map(str, json.load(sys.stdin)["layers"][0]["input_shapes"][0])))')
    /usr/bin/python3 -c "import numpy as np, sys; s = [int(v) for v in sys.argv[2].split(',')]; np.save(sys.argv[1], np.random.default_rng(1).uniform(-2, 2.5, [16] + s[1:]).astype(np.float32))" "$f" "$shape"
  fi
  echo "$f"
}

fmt_mib() { python3 -c "print('%.1f' % ($1 / 1048576))"; }

rounds_note=""
[ "$ROUNDS" -gt 1 ] && rounds_note=" Rounds: $ROUNDS, the one device and every plan measured in turn in each round; a latency is the median over the rounds, a speedup the median of the rounds' speedups (each round's one device over the same round's plan), with their lowest and highest in brackets."
BOARD_CLASS=$(sed -n 's/.*board: \([^,}]*\).*/\1/p' "$root/examples/$BOARD-4.yaml" | head -1)
echo "Devices: \`examples/$BOARD-N.yaml\` on free ports (\`board: $BOARD_CLASS\`: $("$shoal" boards --json | python3 -c 'import json,sys; b=[x for x in json.load(sys.stdin) if x["name"]==sys.argv[1]][0]; print("%s, %s, %.0f MiB, %g Mbit/s + %g ms links" % (b["title"], b["basis"], b["memory_bytes"]/2**20, b["link_bandwidth_bps"]/1e6, b["link_latency_s"]*1e3))' "$BOARD_CLASS"); MODE=$MODE)$([ "$PIXELS" = 1 ] && echo ", every plan's input, the one device's too, sent as 8-bit pixels"). Latency: median of $REQUESTS requests after a warm-up (\`shoal bench\`), one request in flight; speedup: one device's latency over the plan's, both from this run.$rounds_note"
echo "Wire: tensor bytes the devices sent per request as the workers measured them (relays of broadcasts included, LZ4-compressed messages at their compressed size; the coordinator's sends of the input counted on the input device). Weights: the most any one device holds."
echo

# median VALUES... -> the median (the lower middle of an even count).
median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }

# speedup BASES PLANS -> "5.51x", or with several rounds "5.51x (5.20-5.98)":
# the median of base_i / plan_i over the rounds i.
speedup() {
  python3 -c '
import sys
b = [float(v) for v in sys.argv[1].split()]; p = [float(v) for v in sys.argv[2].split()]
r = sorted(x / y for x, y in zip(b, p))
m = r[(len(r) - 1) // 2]
print("%.2fx" % m if len(r) == 1 else "%.2fx (%.2f-%.2f)" % (m, r[0], r[-1]))' "$1" "$2"
}

# One device: the same Pi-3 emulation with 2 GiB: VGG16 whole needs 944 MiB
# of a worker's budget (docs/cluster-format.md), and the process itself
# more, which a 1 GiB device holds with little to spare.
cluster_file 1 2GiB
one=$CLUSTER
declare -A clusters
for n in $SIZES; do
  for medium in $MEDIA; do
    cluster_file "$n"
    case $medium in
      links) ;;
      shared) sed -i "1i network: {medium: shared, bandwidth: $MEDIUM_RATE}" "$CLUSTER" ;;
      *) echo "MEDIA: '$medium' is neither links nor shared" >&2; exit 2 ;;
    esac
    clusters[$n|$medium]=$CLUSTER
  done
done

# Every measurement, ROUNDS times in turn: base[m] and res[n|medium|m|s]
# collect one value a round ("ms bytes weights", or "- error").
declare -A base res
for _ in $(seq "$ROUNDS"); do
  for m in $MODELS; do
    read -r ms rest <<< "$(plan_and_bench "$one" "$m" pipeline)"
    # Nothing at all: the cluster did not come up (its output is above).
    [ -z "$ms" ] && ms=- && rest="the one-device cluster did not come up"
    [ "$ms" = - ] && echo "one device, $m: $rest" >&2
    base[$m]="${base[$m]:-} $ms"
  done
  for n in $SIZES; do
    for medium in $MEDIA; do
      c=${clusters[$n|$medium]}
      for m in $MODELS; do
        for s in $STRATEGIES $LCP; do
          case $s in
            lcp*) k=${s#lcp}; sfx=""
                  if [[ $k == *+* ]]; then sfx="+${k#*+}"; k=${k%%+*}; fi
                  r=$(plan_and_bench "$c" "$m" "lcp$sfx" "$k") ;;
            *) r=$(plan_and_bench "$c" "$m" "$s") ;;
          esac
          [ -z "$r" ] && r="- the cluster did not come up (its output is above)"
          # A failure in any round is the row's result.
          if [[ $r == -* ]] || [[ ${res[$n|$medium|$m|$s]:-} == -* ]]; then
            [[ ${res[$n|$medium|$m|$s]:-} == -* ]] || res[$n|$medium|$m|$s]=$r
          else
            res[$n|$medium|$m|$s]="${res[$n|$medium|$m|$s]:-}|$r"
          fi
        done
      done
    done
  done
done

declare -A best best_name best_sp best_ncnn lat base_ms
for m in $MODELS; do
  # shellcheck disable=SC2086
  if [[ ${base[$m]} == *-* ]]; then base_ms[$m]=-; else base_ms[$m]=$(median ${base[$m]}); fi
done
declare -A ncnn
for m in $MODELS; do ncnn[$m]=$(ncnn_ms "$(name "$m")"); done
echo "One board: emulated, running shoal (2 GiB, so that VGG16 whole fits beside the process), and a real one running ncnn (its published time; \`-\`: none published):"
echo
echo "| model | one emulated $BOARD_CLASS, shoal, ms | one $BOARD_CLASS, ncnn (published), ms |"
echo "|---|---:|---:|"
for m in $MODELS; do echo "| $(name "$m") | ${base_ms[$m]} | ${ncnn[$m]} |"; done
echo

for n in $SIZES; do
 for medium in $MEDIA; do
  case $medium in
    links) echo "### $n emulated $BOARD_CLASS" ;;
    shared) echo "### $n emulated $BOARD_CLASS on one shared channel of $MEDIUM_RATE" ;;
  esac
  echo
  echo "| model | plan | latency ms | speedup over one board (shoal) | over one board (ncnn) | wire KiB/req | weights MiB/device (max) |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  for m in $MODELS; do
    best[$m]=""; best_name[$m]=""
    for s in $STRATEGIES $LCP; do
      case $s in
        lcp*) k=${s#lcp}; sfx=""
              if [[ $k == *+* ]]; then sfx="+${k#*+}"; k=${k%%+*}; fi
              label="LCP split$k$sfx" ;;
        *) label=$s ;;
      esac
      r=${res[$n|$medium|$m|$s]}
      if [[ $r == -* ]]; then
        echo "| $(name "$m") | $label | failed: ${r#- } | | | | |"; continue; fi
      if [ "${base_ms[$m]}" = - ]; then
        echo "| $(name "$m") | $label | failed: the one device failed | | | | |"; continue; fi
      # Rounds' "ms bytes weights", '|'-separated: bytes and weights are the
      # plan's, the same each round; the latency is the median.
      mss=$(tr '|' '\n' <<< "${r#|}" | awk '{print $1}' | tr '\n' ' ')
      read -r _ bytes w <<< "$(tr '|' '\n' <<< "${r#|}" | tail -1)"
      # shellcheck disable=SC2086
      ms=$(median $mss)
      sp=$(speedup "${base[$m]}" "$mss")
      vs_ncnn=-
      [ "${ncnn[$m]}" != - ] && vs_ncnn=$(python3 -c "print('%.2fx' % (${ncnn[$m]} / $ms))")
      echo "| $(name "$m") | $label | $ms | $sp | $vs_ncnn | $(python3 -c "print('%.1f' % ($bytes / 1024))") | $(fmt_mib "$w") |"
      lat[$m|$s]=$ms
      # int8 plans are exact against the int8 model only: not "exact" here.
      if [[ $s != lcp* && $s != pipeline && $s != *+int8 ]] && { [ -z "${best[$m]}" ] || [ "$ms" -lt "${best[$m]}" ]; }; then
        best[$m]=$ms; best_name[$m]=$s; best_sp[$m]=$sp; best_ncnn[$m]=$vs_ncnn
      fi
    done
  done
  echo
  int8_rows=""
  for m in $MODELS; do
    for s in $STRATEGIES; do
      [[ $s == *+int8 ]] || continue
      f=${lat[$m|${s%+int8}]:-}; q=${lat[$m|$s]:-}
      [ -n "$f" ] && [ -n "$q" ] && int8_rows+="$m ${s%+int8} $(python3 -c "print('%.2fx' % ($f / $q))"), "
    done
  done
  tile_rows=""
  for m in $MODELS; do
    for s in $STRATEGIES; do
      [[ $s == *+2d ]] || continue
      f=${lat[$m|${s%+2d}]:-}; q=${lat[$m|$s]:-}
      [ -n "$f" ] && [ -n "$q" ] && tile_rows+="$m ${s%+2d} $(python3 -c "print('%.2fx' % ($q / $f))"), "
    done
  done
  hub_rows=""
  for m in $MODELS; do
    for s in $STRATEGIES; do
      [[ $s == *+hub ]] || continue
      f=${lat[$m|${s%+hub}]:-}; q=${lat[$m|$s]:-}
      [ -n "$f" ] && [ -n "$q" ] && hub_rows+="$m ${s%+hub} $(python3 -c "print('%.2fx' % ($q / $f))"), "
    done
  done
  if [ -n "$hub_rows" ]; then
    echo "Partial sums reduced among the devices (\`shoal plan --reduce peers\`, the default: each device that holds them sums one slice, and a next layer split by input features reads its slice where it is) against all sent to the input device (\`+hub\`, \`--reduce hub\`, as the papers do); latency with the hub over latency with peers, above 1: the hub slower: ${hub_rows%, }."
    echo
  fi
  if [ -n "$tile_rows" ]; then
    echo "2-D tiles against strips, the same strategy (latency on tiles over latency on strips; above 1: tiles slower): ${tile_rows%, }."
    echo
  fi
  if [ -n "$int8_rows" ]; then
    echo "int8 against f32, the same strategy (f32 latency over int8): ${int8_rows%, }."
    echo
    echo "The +int8 rows plan the model quantized (\`shoal plan --dtype int8\`, calibrated on 16 random inputs in the range of normalised images): exact against the int8 model on one device, not the f32 one, so they are not in the fastest exact plan below; their weights travel and are held as int8, their quantized activations as one byte a value. An emulated board prices an int8 layer's arithmetic at its class's f32 rates (the classes have no int8 rates: ncnn publishes int8 times for ResNet-18, ResNet-50 and VGG16 only, in ../shared/reference/ncnn-boards.md), and its weights at a byte each, so here int8 gains from the wire and from memory-bound layers alone; ncnn's int8 kernels run ResNet-18 1.7x faster than f32 on a Pi 3B+."
    echo
  fi
  reading=$(for m in $MODELS; do [ -n "${best[$m]}" ] && printf '%s %s (%s over one emulated board, %s over one running ncnn), ' "$(name "$m")" "${best_name[$m]}" "${best_sp[$m]%% (*}" "${best_ncnn[$m]}"; done | sed 's/, $//')
  if [ -n "$reading" ]; then
    echo "Reading ($n devices, $medium): the fastest exact plan is $reading."
    echo
  fi
 done
done
echo "The one-device latency moves with the host between runs (10-20 % on this shared VM), and every speedup with it: compare plans within a run. LCP rows run another model, narrower branches (docs/lcp.md), and are not exact.$(dilation_note)"
