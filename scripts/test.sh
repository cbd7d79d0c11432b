#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds, then runs the whole test suite: unit, cli and docs tests first, then the scenario
# tests (label "scenario", whole runs of scenarios/); then the sanitizer job (ASan + UBSan
# build, the suite again, fuzz smoke runs: scripts/test-sanitize.sh). SANITIZE=0 skips the
# sanitizer job. docs/testing.md says what each part checks.
set -eu
cd "$(dirname "$0")/.."
sh scripts/build.sh
cd build
ctest -j2 --output-on-failure -LE scenario
ctest -j2 --output-on-failure -L scenario
cd ..
if [ "${SANITIZE:-1}" != 0 ]; then
  sh scripts/test-sanitize.sh
fi
