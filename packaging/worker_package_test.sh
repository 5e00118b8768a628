#!/usr/bin/env bash
# The shoal-worker .deb as `dpkg -i` and `systemctl start shoal-worker`
# would use it, checked without a container or a running systemd: cpack
# builds it from the worker-only tree, dpkg-deb unpacks it into a
# temporary root, systemd's own tools check the unit and create the user
# in that root, and the unit's ExecStart line, its paths moved into the
# root, runs as an unprivileged user and serves a deployment that `shoal
# run --check` verifies. A bad config file fails with the file and key
# named. Also: `cmake --install` of the full build.
#
# Usage: worker_package_test.sh WORKER_ONLY_BUILD_DIR FULL_BUILD_DIR
set -euo pipefail

worker_build=$1
# Runs the worker as an unprivileged user, as the service does: root only.
if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP: needs root (setpriv to an unprivileged user, chown)"
  exit 77
fi
full_build=$2
shoal=$full_build/shoal
tmp=$(mktemp -d /tmp/shoal-package-test.XXXXXX)
pid=""
cleanup() {
  if [[ -n "$pid" ]]; then kill "$pid" 2> /dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# --- the package
(cd "$worker_build" && cpack -G DEB > "$tmp/cpack.log") ||
  fail "cpack: $(cat "$tmp/cpack.log")"
deb=$(ls "$worker_build"/shoal-worker_*_amd64.deb)
[[ $(dpkg-deb -f "$deb" Package) == shoal-worker ]] || fail "package name"
dpkg-deb -f "$deb" Depends | grep -q libgrpc++1.51 || fail "Depends"
# Every dependency it names is a package this Debian has (installed here).
for p in $(dpkg-deb -f "$deb" Depends | tr -d ' ' | tr ',' ' '); do
  dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "ok installed" ||
    fail "Depends names $p, which is not installed here"
done
dpkg-deb -e "$deb" "$tmp/control"
dpkg-deb -x "$deb" "$tmp/deps"
# Every library the binary links comes from a package it depends on.
depends=" $(dpkg-deb -f "$deb" Depends | tr -d ' ' | tr ',' ' ') "
for lib in $(readelf -d "$tmp/deps/usr/bin/shoal-worker" |
  sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p'); do
  owner=$(dpkg -S "*/$(gcc -print-multiarch)/$lib" 2> /dev/null | head -1 | cut -d: -f1)
  [[ -n "$owner" && "$depends" == *" $owner "* ]] ||
    fail "shoal-worker links $lib (package '${owner:-none}'), which Depends does not name"
done
grep -qx /etc/shoal/worker.yaml "$tmp/control/conffiles" ||
  fail "worker.yaml is not a conffile"
for s in postinst prerm postrm; do
  sh -n "$tmp/control/$s" || fail "$s does not parse"
done

root=$tmp/root
dpkg-deb -x "$deb" "$root"
for f in usr/bin/shoal-worker usr/lib/systemd/system/shoal-worker.service \
  etc/shoal/worker.yaml usr/lib/sysusers.d/shoal-worker.conf \
  usr/share/doc/shoal-worker/packaging.md; do
  [[ -e "$root/$f" ]] || fail "the package has no /$f"
done
unit=$root/usr/lib/systemd/system/shoal-worker.service

# --- systemd's checks, offline: the unit (its binary moved into the root)
# has no unknown key or bad value; the user the postinst makes
mkdir -p "$tmp/verify"
sed "s|/usr/bin/shoal-worker|$root/usr/bin/shoal-worker|" "$unit" \
  > "$tmp/verify/shoal-worker.service"
out=$(systemd-analyze verify "$tmp/verify/shoal-worker.service" 2>&1) ||
  fail "systemd-analyze verify: $out"
[[ -z "$out" ]] || fail "systemd-analyze verify warns: $out"
grep -qx "Restart=on-failure" "$unit" || fail "no Restart=on-failure"
grep -qx "User=shoal" "$unit" || fail "no User=shoal"
mkdir -p "$root/etc"
systemd-sysusers --root="$root" shoal-worker.conf > /dev/null 2>&1 ||
  fail "systemd-sysusers --root $root"
grep -q '^shoal:' "$root/etc/passwd" || fail "no shoal user created"

# --- ExecStart, its paths in the root, as an unprivileged user
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
[[ "$exec_start" == "/usr/bin/shoal-worker --config /etc/shoal/worker.yaml" ]] ||
  fail "unexpected ExecStart: $exec_start"
read -r -a cmd <<< "${exec_start//\/usr\//$root/usr/}"
cmd=("${cmd[@]//\/etc\//$root/etc/}")
run_as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
chmod 755 "$tmp" "$root"

# The shipped config parses and its keys apply (threads here), while
# flags override the file (the test's own port, cache and name).
sed -i 's/^threads: 0$/threads: 3/' "$root/etc/shoal/worker.yaml"
# Under strace, to check below that every system call it makes is one
# the unit's SystemCallFilter=@system-service allows.
mkdir -p "$tmp/cache" "$tmp/trace"
chown nobody "$tmp/cache" "$tmp/trace"
# The log exists before the worker starts: the loop below reads it at once,
# perhaps before the background shell has opened it.
: > "$tmp/worker.log"
"${run_as[@]}" strace -f -qq -o "$tmp/trace/calls" "${cmd[@]}" \
  --listen 127.0.0.1:0 --cache-dir "$tmp/cache" \
  --name packaged > "$tmp/worker.log" 2>&1 &
pid=$!
port=""
for _ in $(seq 100); do
  port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/worker.log")
  [[ -n "$port" ]] && break
  kill -0 "$pid" 2> /dev/null || fail "worker exited: $(cat "$tmp/worker.log")"
  sleep 0.1
done
[[ -n "$port" ]] || fail "worker did not listen: $(cat "$tmp/worker.log")"
grep -q "worker packaged listening" "$tmp/worker.log" ||
  fail "--name did not override the file: $(cat "$tmp/worker.log")"
grep -q "3 kernel threads" "$tmp/worker.log" ||
  fail "threads: 3 of the file not applied: $(cat "$tmp/worker.log")"

cat > "$tmp/cluster.yaml" << EOF
devices:
  - {name: packaged, address: 127.0.0.1:$port, memory: 1GiB}
EOF
timeout 60 "$shoal" plan lenet5 --cluster "$tmp/cluster.yaml" \
  --strategy pipeline -o "$tmp/plan.json" > "$tmp/plan.log" 2>&1 ||
  fail "plan: $(cat "$tmp/plan.log")"
timeout 60 "$shoal" run --plan "$tmp/plan.json" --cluster "$tmp/cluster.yaml" \
  --check > "$tmp/run.log" 2>&1 ||
  fail "run on the packaged worker: $(cat "$tmp/run.log") $(cat "$tmp/worker.log")"
grep -q "(ok)" "$tmp/run.log" || fail "run --check: $(cat "$tmp/run.log")"
[[ -n "$(ls -A "$tmp/cache")" ]] || fail "no weights cached in $tmp/cache"
# SIGTERM to the worker, strace's child, as systemctl stop sends it.
kill -TERM "$(pgrep -P "$pid")"
wait "$pid" || fail "worker did not stop cleanly on SIGTERM"
pid=""
grep -q "worker packaged stopped" "$tmp/worker.log" || fail "no clean stop"

# Its system calls (deploy, run, stop) against the unit's filter, whose
# groups systemd-analyze expands.
filter=$(sed -n 's/^SystemCallFilter=//p' "$unit")
systemd-analyze syscall-filter > "$tmp/groups" 2> /dev/null
missing=$(python3 - "$tmp/groups" "$tmp/trace/calls" "$filter" << 'PY'
import re, sys
groups, cur = {}, None
for line in open(sys.argv[1]):
    if re.match(r"^@[\w-]+$", line.rstrip()):
        cur = line.strip()
        groups[cur] = []
    elif cur and line.strip() and not line.strip().startswith("#"):
        groups[cur].append(line.strip())
def expand(name, seen):
    out = set()
    for x in groups.get(name, []):
        if x.startswith("@"):
            if x not in seen:
                seen.add(x)
                out |= expand(x, seen)
        else:
            out.add(x)
    return out
allowed = set()
for f in sys.argv[3].split():
    allowed |= expand(f, set()) if f.startswith("@") else {f}
used = set()
seen_exec = False
for line in open(sys.argv[2]):
    m = re.match(r"^\d+ +(\w+)\(", line)
    if not m:
        continue
    # Calls from the worker's own execve on (not strace's setup).
    if m.group(1) == "execve" and "shoal-worker" in line:
        seen_exec = True
    if seen_exec:
        used.add(m.group(1))
if not allowed or len(used) < 20:
    print("(no filter groups or no calls traced)")
print(" ".join(sorted(used - allowed)))
PY
)
[[ -z "${missing// /}" ]] ||
  fail "the worker makes system calls SystemCallFilter=$filter forbids: $missing"

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
printf 'listen: 127.0.0.1:0\nthreads: four\n' > "$root/etc/shoal/worker.yaml"
expect_error "$root/etc/shoal/worker.yaml: threads: 'four' is not a count"
printf 'listen: 127.0.0.1:0\nmemroy: 1GiB\n' > "$root/etc/shoal/worker.yaml"
expect_error "unknown key 'memroy'"
printf 'listen: 127.0.0.1:0\ntls: {ca: nope.crt, cert: nope.crt, key: nope.key}\n' \
  > "$root/etc/shoal/worker.yaml"
expect_error "$root/etc/shoal/nope.crt"
rm "$root/etc/shoal/worker.yaml"
expect_error "--config $root/etc/shoal/worker.yaml: cannot open"

# --- the full tool: cmake --install puts the binary and its libtorch
# module where the binary finds it
DESTDIR=$tmp/full cmake --install "$full_build" --prefix /usr > /dev/null
[[ -x $tmp/full/usr/bin/shoal ]] || fail "no /usr/bin/shoal"
[[ -f $tmp/full/usr/lib/shoal/libshoal_torch.so ]] ||
  fail "no /usr/lib/shoal/libshoal_torch.so"
"$tmp/full/usr/bin/shoal" --version | grep -q "shoal 0.1.0" ||
  fail "installed shoal does not run"

echo "worker package: ok ($(basename "$deb"), $(du -k "$deb" | cut -f1) KiB)"
