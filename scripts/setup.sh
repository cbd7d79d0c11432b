#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the Debian packages davinci-vp needs to build and test. Idempotent: when every
# package is present it changes nothing; as root on a fresh Debian 12 it runs apt-get update
# once and installs only what is missing.
set -eu

PACKAGES="
  build-essential cmake pkg-config
  libsystemc-dev
  libyaml-cpp-dev
  libboost-dev libboost-program-options-dev
  nlohmann-json3-dev
  libgtest-dev libgmock-dev
  libbenchmark-dev
  libopenblas-dev libopenblas-serial-dev
  libunicorn-dev
  gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu
  python3 python3-numpy python3-pil python3-matplotlib
  parallel
  libjpeg62-turbo-dev libturbojpeg0-dev libpng-dev libswscale-dev libavutil-dev libavcodec-dev libavformat-dev
  ffmpeg
  verilator
  libonnx-dev libprotobuf-dev libonnx-testdata python3-onnx
  clang libclang-rt-14-dev
  clang-format clang-tidy
  git
"

missing=""
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done

if [ -z "$missing" ]; then
  echo "setup: all packages present"
  exit 0
fi

echo "setup: installing:$missing"
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "setup: not root and no sudo; as root run: apt-get update && apt-get install -y$missing" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
