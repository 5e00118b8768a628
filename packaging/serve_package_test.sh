#!/usr/bin/env bash
# The shoal .deb's coordinator service as `dpkg -i` and `systemctl start
# shoal-serve` would use it, checked without a container or a running
# systemd: cpack builds the package from the full build, dpkg-deb unpacks
# it into a temporary root, systemd's own tools check the unit and create
# the user there, and the unit's ExecStart line, its paths moved into the
# root, runs as an unprivileged user under strace with the shipped
# serve.yaml (one key changed, to see it applied; flags for the port, to
# see them win), on a cluster of one worker, and answers infer-remote.
# Its log lines must each be a JSON object (the changed key), its system
# calls within the unit's filter, and bad config files must fail naming
# the file and the key.
#
# Usage: serve_package_test.sh FULL_BUILD_DIR
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP: needs root (setpriv to an unprivileged user, chown)"
  exit 77
fi
build=$1
shoal=$build/shoal
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/shoal-serve-package-test.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# --- the package: its files, conffile and maintainer scripts
(cd "$build" && cpack -G DEB -B "$tmp/cpack" > "$tmp/cpack.log" 2>&1) ||
  fail "cpack: $(cat "$tmp/cpack.log")"
deb=$(ls "$tmp"/cpack/shoal_*.deb)
[[ $(dpkg-deb -f "$deb" Package) == shoal ]] || fail "package name"
dpkg-deb -e "$deb" "$tmp/control"
grep -qx /etc/shoal/serve.yaml "$tmp/control/conffiles" ||
  fail "serve.yaml is not a conffile"
for s in postinst prerm postrm; do
  [[ -x "$tmp/control/$s" ]] || fail "no executable $s"
  sh -n "$tmp/control/$s" || fail "$s does not parse"
done
grep -q "systemd-sysusers shoal-serve.conf" "$tmp/control/postinst" ||
  fail "postinst does not create the user"
root=$tmp/root
dpkg-deb -x "$deb" "$root"
for f in usr/bin/shoal usr/lib/systemd/system/shoal-serve.service \
  etc/shoal/serve.yaml usr/lib/sysusers.d/shoal-serve.conf \
  usr/share/doc/shoal/serve.md; do
  [[ -e "$root/$f" ]] || fail "the package has no /$f"
done
unit=$root/usr/lib/systemd/system/shoal-serve.service

# --- systemd's checks, offline: the unit (its binary moved into the root)
# has no unknown key or bad value; the user the postinst makes
mkdir -p "$tmp/verify"
sed "s|/usr/bin/shoal |$root/usr/bin/shoal |" "$unit" \
  > "$tmp/verify/shoal-serve.service"
out=$(systemd-analyze verify "$tmp/verify/shoal-serve.service" 2>&1) ||
  fail "systemd-analyze verify: $out"
[[ -z "$out" ]] || fail "systemd-analyze verify warns: $out"
for line in "Restart=on-failure" "User=shoal" "ProtectSystem=strict" \
  "ExecReload=/bin/kill -HUP \$MAINPID"; do
  grep -qxF "$line" "$unit" || fail "no $line"
done
mkdir -p "$root/etc"
systemd-sysusers --root="$root" shoal-serve.conf > /dev/null 2>&1 ||
  fail "systemd-sysusers --root $root"
grep -q '^shoal:' "$root/etc/passwd" || fail "no shoal user created"

# --- a worker, and the cluster file the shipped config names (cluster.yaml
# beside it, a relative path)
: > "$tmp/worker.log"
"$shoal" worker --listen 127.0.0.1:0 --name packaged-worker \
  --cache-dir "$tmp/weights" > "$tmp/worker.log" 2>&1 &
pids+=($!)
wport=""
for _ in $(seq 100); do
  wport=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/worker.log")
  [[ -n "$wport" ]] && break
  sleep 0.1
done
[[ -n "$wport" ]] || fail "worker did not listen: $(cat "$tmp/worker.log")"
cat > "$root/etc/shoal/cluster.yaml" << EOF
devices:
  - {name: packaged-worker, address: 127.0.0.1:$wport, memory: 1GiB}
EOF

# --- ExecStart, its paths in the root, as an unprivileged user
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
[[ "$exec_start" == "/usr/bin/shoal serve --config /etc/shoal/serve.yaml" ]] ||
  fail "unexpected ExecStart: $exec_start"
read -r -a cmd <<< "${exec_start//\/usr\//$root/usr/}"
cmd=("${cmd[@]//\/etc\//$root/etc/}")
run_as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
chmod 755 "$tmp" "$root"
grep -qx "log-format: text" "$root/etc/shoal/serve.yaml" ||
  fail "the shipped serve.yaml has no 'log-format: text'"
sed -i 's/^log-format: text$/log-format: json/' "$root/etc/shoal/serve.yaml"
mkdir -p "$tmp/trace"
chown nobody "$tmp/trace"
: > "$tmp/serve.log"
"${run_as[@]}" strace -f -qq -o "$tmp/trace/calls" "${cmd[@]}" \
  --listen 127.0.0.1:0 --strategy pipeline > "$tmp/serve.log" 2>&1 &
spid=$!
pids+=("$spid")
port=""
for _ in $(seq 300); do
  port=$(python3 "$here/serve_log_check.py" --port "$tmp/serve.log")
  [[ -n "$port" ]] && break
  kill -0 "$spid" 2> /dev/null || fail "serve exited: $(cat "$tmp/serve.log")"
  sleep 0.1
done
[[ -n "$port" ]] || fail "serve did not listen: $(cat "$tmp/serve.log")"
[[ "$port" != 7600 ]] || fail "--listen did not override the file"
timeout 60 "$shoal" infer-remote --server "127.0.0.1:$port" \
  > "$tmp/infer.log" 2>&1 || fail "infer-remote: $(cat "$tmp/infer.log")"
grep -q "answered by generation 1" "$tmp/infer.log" ||
  fail "infer-remote: $(cat "$tmp/infer.log")"
# SIGTERM to serve, strace's child, as systemctl stop sends it.
kill -TERM "$(pgrep -P "$spid")"
wait "$spid" || fail "serve did not stop cleanly on SIGTERM: $(cat "$tmp/serve.log")"

# Every line of its log is a JSON object with a time, a level and a
# message (log-format: json, from the file), and it logged its stop.
python3 "$here/serve_log_check.py" "$tmp/serve.log" ||
  fail "log: $(cat "$tmp/serve.log")"

# Its system calls (plan, deploy, answer, stop) against the unit's filter,
# whose groups systemd-analyze expands.
filter=$(sed -n 's/^SystemCallFilter=//p' "$unit")
systemd-analyze syscall-filter > "$tmp/groups" 2> /dev/null
missing=$(python3 "$here/syscalls_outside_filter.py" "$tmp/groups" \
  "$tmp/trace/calls" "$filter" /usr/bin/shoal)
[[ -z "${missing// /}" ]] ||
  fail "serve makes system calls SystemCallFilter=$filter forbids: $missing"

# --- a bad config: a clear error naming the file and the key, exit != 0
expect_error() {
  local want=$1
  shift
  local rc=0
  timeout 20 "${run_as[@]}" "${cmd[@]}" "$@" > "$tmp/bad.log" 2>&1 || rc=$?
  [[ $rc -ne 0 && $rc -ne 124 ]] || fail "exit $rc for a bad config: $(cat "$tmp/bad.log")"
  grep -qF -- "$want" "$tmp/bad.log" ||
    fail "expected '$want' in: $(cat "$tmp/bad.log")"
}
conf=$root/etc/shoal/serve.yaml
printf 'cluster: cluster.yaml\nmodel: lenet5\nimbalance: 1\n' > "$conf"
expect_error "$conf: imbalance: '1' must be above 1"
printf 'cluster: cluster.yaml\nmodle: lenet5\n' > "$conf"
expect_error "$conf: unknown key 'modle'"
printf 'cluster: nope.yaml\nmodel: lenet5\n' > "$conf"
expect_error "$root/etc/shoal/nope.yaml"
rm "$conf"
expect_error "--config $conf: cannot open"

echo "serve package: ok ($(basename "$deb"), $(du -k "$deb" | cut -f1) KiB)"
