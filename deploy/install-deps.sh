#!/usr/bin/env bash
# Installs fleetbench's build and test dependencies from Debian packages.
# Used by README.md and .ci/run; safe to run again. Why each one is there:
# docs/dependencies.md.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libre2-dev libsqlite3-dev libopenblas-dev libssl-dev
  googletest libgtest-dev libgmock-dev
  liburing-dev libibverbs-dev
  iproute2 fio iperf3 sqlite3 sockperf
  python3-grpcio python3-protobuf
  libgloo-dev libcpp-httplib-dev prometheus curl
  libturbojpeg0-dev libnuma-dev libjpeg-turbo-progs
  chromium chromium-driver
  systemd slurm-wlm python3-jsonschema python3-yaml
  libpq-dev postgresql
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
