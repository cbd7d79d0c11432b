#!/bin/sh
# SPDX-License-Identifier: MIT
# Configures and builds everything into build/ (executables in build/bin). Two cores: -j2.
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2
