#!/bin/bash
# Runs every benchmark in bench/ (`make bench`); each prints markdown.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for script in "$here"/*.sh; do
  [ "$(basename "$script")" = run_all.sh ] && continue
  echo "## $(basename "$script" .sh)"
  echo
  bash "$script" "$@"
  echo
done
