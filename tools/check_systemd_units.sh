#!/usr/bin/env bash
# tools/check_systemd_units.sh BINARY UNIT... — `systemd-analyze verify` on
# the shipped units (deploy/systemd/), failing on any warning: verify exits
# 0 on unknown keys and bad values and only prints them, so any output is a
# failure here. Each unit is copied to a temp folder with its ExecStart
# pointed at BINARY (the built fleetbench), since verify also checks that
# the executable exists. Then the same check must FAIL on a copy with an
# unknown key and a bad value, so that a check that cannot fail is caught.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BINARY UNIT..." >&2; exit 2; }
binary=$(realpath "$1"); shift
[ -x "$binary" ] || { echo "check_systemd_units: $binary is not an executable" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

verify() {  # verify UNIT...: 0 when systemd-analyze exits 0 and says nothing
  local out rc=0
  out=$(systemd-analyze verify "$@" 2>&1) || rc=$?
  if [ $rc -ne 0 ] || [ -n "$out" ]; then
    printf '%s\n' "$out"
    return 1
  fi
}

units=()
for unit in "$@"; do
  copy="$tmp/$(basename "$unit")"
  sed "s#/usr/local/bin/fleetbench#$binary#g" "$unit" > "$copy"
  for key in 'Restart=on-failure' 'StateDirectory=' 'NoNewPrivileges=yes' 'ProtectSystem=strict'; do
    grep -q "^$key" "$copy" || { echo "check_systemd_units: $unit lacks $key" >&2; exit 1; }
  done
  units+=("$copy")
done
if ! verify "${units[@]}"; then
  echo "check_systemd_units: systemd-analyze verify is not clean" >&2
  exit 1
fi

broken="$tmp/broken/$(basename "${units[0]}")"
mkdir -p "$tmp/broken"
{ cat "${units[0]}"; printf '[Service]\nRestartt=always\nRestart=sometimes\n'; } > "$broken"
if verify "$broken" >/dev/null; then
  echo "check_systemd_units: a unit with an unknown key passed: the check cannot fail" >&2
  exit 1
fi
echo "check_systemd_units: ${#units[@]} unit(s) clean"
