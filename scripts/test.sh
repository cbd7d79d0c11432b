#!/bin/sh
# Builds, then runs the whole test suite: unit, cli and docs tests first, then the scenario
# tests (label "scenario", whole runs of scenarios/).
set -eu
cd "$(dirname "$0")/.."
sh scripts/build.sh
cd build
ctest -j2 --output-on-failure -LE scenario
ctest -j2 --output-on-failure -L scenario
