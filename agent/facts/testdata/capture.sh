#!/usr/bin/env bash
# Copies the files agent/facts reads from this node into OUT_DIR, a small tree
# that ReadNodeFacts() can read with FactsOptions.root = OUT_DIR.
# Usage: agent/facts/testdata/capture.sh OUT_DIR   (no root needed)
# sysfs symlinks are kept with their own (relative) targets, and the folders
# they point to are created, so path-based checks (virtual disks) still work.
# Review the result before checking it in: hostnames, mounts and cgroup paths
# may say more than a test needs.
set -euo pipefail
out=${1:?usage: capture.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# copy_file PATH: the file's content, when it can be read.
copy_file() {
  [[ -f $1 && -r $1 ]] || return 0
  mkdir -p "$out$(dirname "$1")"
  cat "$1" >"$out$1" 2>/dev/null || rm -f "$out$1"
}

# copy_link PATH: the symlink itself, plus an empty folder where it leads.
copy_link() {
  [[ -L $1 ]] || return 0
  mkdir -p "$out$(dirname "$1")"
  ln -sfn "$(readlink "$1")" "$out$1"
  local target
  target=$(readlink -f "$1") || return 0
  case $target in /sys/*) mkdir -p "$out$target" ;; esac
}

for f in /proc/cpuinfo /proc/meminfo /proc/sys/kernel/hostname \
         /proc/sys/kernel/osrelease /etc/os-release /usr/lib/os-release \
         /proc/1/cgroup /proc/self/cgroup /proc/self/mounts \
         /.dockerenv /run/.containerenv /run/systemd/container \
         /sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq; do
  copy_file "$f"
done
for d in /var/run/secrets/kubernetes.io /run/secrets/kubernetes.io; do
  [[ -e $d ]] && mkdir -p "$out$d" && touch "$out$d/.captured"
done

# NUMA nodes: a file inside each so git keeps the folder.
for n in /sys/devices/system/node/node[0-9]*; do
  [[ -d $n ]] && copy_file "$n/cpulist"
done

copy_link /sys/class/dmi/id
copy_file /sys/class/dmi/id/sys_vendor
copy_file /sys/class/dmi/id/product_name

for b in /sys/block/*; do
  copy_link "$b"
  copy_link "$b/device"
  copy_link "$b/device/driver"
  for f in size queue/rotational queue/scheduler device/model; do
    copy_file "$b/$f"
  done
done

for n in /sys/class/net/*; do
  [[ -d $n ]] || continue
  copy_link "$n"
  copy_link "$n/device"
  copy_link "$n/device/driver"
  copy_file "$n/speed"
  copy_file "$n/mtu"
done

for p in /sys/bus/pci/devices/*; do
  copy_link "$p"
  for f in class vendor device current_link_speed max_link_speed \
           current_link_width max_link_width; do
    copy_file "$p/$f"
  done
done
echo "captured into $out ($(du -sh "$out" | cut -f1))"
