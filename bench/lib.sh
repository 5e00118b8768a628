# Shared by the bench scripts that bring up emulated clusters (sourced, not
# run): a work directory removed at exit, clusters started by cluster_up and
# stopped at exit (Ctrl-C included), free ports from a base, and copies of
# the example cluster files on those ports.
#
#   shoal=$BUILD_DIR/shoal
#   . "$here/lib.sh"
#   bench_init NAME PORT_BASE         # sets $work; traps EXIT, INT, TERM
#   copy_cluster "$root/examples/pi3-4.yaml" 0 "$work/c.yaml" [MEMORY]
#   cluster_up "$work/c.yaml"
#
# A script with more to stop at exit (a server, say) defines
# bench_cleanup_extra; it runs before the clusters are stopped.

# MODE=netns (root): every copied cluster on addresses of its own in
# 10.77.N.0/24 (one N per file), brought up with `cluster up --mode netns`:
# real network stacks, bandwidth shaped by the kernel.
MODE=${MODE:-transport}
# DILATION=K: every cluster brought up with `cluster up --dilation K` (its
# boards' times stretched by K and reported in board time), for a host
# busy with other work; unset: cluster up's own choice.
DILATION=${DILATION:-}

bench_init() {  # NAME PORT_BASE
  work=$(mktemp -d "/tmp/shoal-bench-$1-XXXXXX")
  next_port=$2
  next_subnet=$((100 + RANDOM % 100))
  started=()
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

bench_cleanup() {
  if declare -F bench_cleanup_extra > /dev/null; then bench_cleanup_extra || true; fi
  local f
  # Every cluster file in the work directory too: a cluster brought up in a
  # subshell ($(...)) is not in `started`, and its state directory in /tmp
  # holds a weight cache of gigabytes (VGG16 on eight devices) that
  # `cluster down` without --purge keeps.
  for f in "${started[@]}" "$work"/*.yaml; do
    [ -f "$f" ] && "$shoal" cluster down --purge "$f" > /dev/null 2>&1 || true
  done
  rm -rf "$work"
}

# alloc_port: sets PORT, the next port from the base nothing listens on.
# Call it in this shell, not in $(...): the counter must advance.
alloc_port() {
  while (exec 3<> "/dev/tcp/127.0.0.1/$next_port") 2> /dev/null; do
    next_port=$((next_port + 1))
  done
  PORT=$next_port
  next_port=$((next_port + 1))
}

# copy_cluster SRC N OUT [MEMORY]: the first N devices of cluster file SRC
# (N = 0: all of them) written to OUT, each on a free port, with MEMORY in
# place of each device's memory if given.
copy_cluster() {
  local src=$1 n=$2 out=$3 mem=${4:-} i=0 line subnet=$next_subnet
  next_subnet=$((next_subnet + 1))
  : > "$out"
  while IFS= read -r line; do
    if [[ $line == *"- name:"* ]]; then
      i=$((i + 1))
      [ "$n" -gt 0 ] && [ "$i" -gt "$n" ] && break
      # MEMORY in place of the device's own (or its board's).
      if [ -n "$mem" ]; then
        printf '%s\n    memory: %s\n' "$line" "$mem" >> "$out"
        continue
      fi
    fi
    if [[ $line == *"memory:"* && -n $mem ]]; then
      continue
    elif [[ $line == *"address:"* && $MODE == netns ]]; then
      line="${line%%address:*}address: 10.77.$subnet.$((i + 1)):7000"
    elif [[ $line == *"address:"* ]]; then
      alloc_port
      line="${line%%address:*}address: 127.0.0.1:$PORT"
    fi
    printf '%s\n' "$line" >> "$out"
  done < "$src"
}

# cluster_up FILE: starts its workers (shoal cluster up) and stops them at
# exit; on failure prints cluster up's output and exits.
cluster_up() {
  "$shoal" cluster up --mode "$MODE" ${DILATION:+--dilation "$DILATION"} "$1" > "$work/up.log" 2>&1 || { cat "$work/up.log" >&2; exit 1; }
  note_dilation "$1"
  started+=("$1")
}

# note_dilation FILE: keeps the time dilation cluster up chose for FILE's
# devices (from its output), for dilation_note.
note_dilation() {
  local n k
  n=$(grep -cE -- "- (\{ *)?name:" "$1")
  k=$(sed -n 's/^time dilation \([0-9.]*\).*/\1/p' "$work/up.log" | head -1)
  echo "$n ${k:-1}" >> "$work/dilations"
}

# dilation_note: a sentence on the dilations the clusters ran at, for a
# section's header ("" when every cluster ran in real time and DILATION is
# unset).
dilation_note() {
  [ -f "$work/dilations" ] || return 0
  local parts
  parts=$(sort -n -u "$work/dilations" | awk '
    $2 != 1 { printf "%s%d devices x%s", sep, $1, $2; sep = ", " }
    $2 == 1 { real = 1 }
    END { if (sep != "" && real) printf ", the rest in real time" }')
  [ -z "$parts" ] && return 0
  if [ -n "$DILATION" ]; then
    echo " Time dilation: every cluster brought up dilated x$DILATION (\`DILATION=$DILATION\`), times in board time."
  else
    echo " Time dilation, \`cluster up\`'s own choice from this host's calibration (docs/cluster-format.md): $parts; times in board time."
  fi
}

# cluster_fresh FILE: restarts its workers (started by cluster_up), so that
# no plan runs on workers that still cache earlier plans' weights (several
# VGG16 deployments exceed a 1 GiB device's memory cgroup).
cluster_fresh() {
  "$shoal" cluster down "$1" > /dev/null 2>&1 || true
  "$shoal" cluster up --mode "$MODE" ${DILATION:+--dilation "$DILATION"} "$1" > "$work/up.log" 2>&1 || { cat "$work/up.log" >&2; exit 1; }
  note_dilation "$1"
}
