# Cluster files cut from others, for the bench scripts (sourced, not run).

# The cluster file of device NAME alone: its block of CLUSTER's devices.
one_device_cluster() {  # CLUSTER NAME OUT
  awk -v want="$2" '
    /^devices:/ { print; inside = 1; next }
    inside && /^  - name:/ { keep = ($3 == want) }
    inside && /^[^ #]/ { inside = 0 }
    inside && keep { print }' "$1" > "$3"
}
