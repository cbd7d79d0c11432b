#!/bin/sh
# SPDX-License-Identifier: MIT
# models-project.sh CMAKE BUILD SOURCE OUT: davinci-vp as a library and as an installed tool.
# It installs BUILD into OUT/prefix (every component), then:
#  - configures and builds tests/models-project, an outside SystemC program that instantiates an
#    AI Core, an L2 slice and a DRAM controller from find_package(davinci-vp) in its own sc_main,
#    and runs it (a vector add, checked element by element);
#  - runs the installed dvp on quickstart with no environment and no build tree on its paths:
#    presets and firmware come from OUT/prefix/share/davinci-vp;
#  - checks that both load the serial OpenBLAS, not the threaded one the system picks by default;
#  - configures a consumer against a copy whose serial OpenBLAS is missing: not found, and named.
set -u
cmake=$1; build=$2; src=$3; out=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$out"; mkdir -p "$out"
"$cmake" --install "$build" --prefix "$out/prefix" > "$out/install.log" 2>&1 || { cat "$out/install.log"; fail "cmake --install"; }
"$cmake" -S "$src/tests/models-project" -B "$out/project" -DCMAKE_PREFIX_PATH="$out/prefix" > "$out/project.log" 2>&1 &&
  "$cmake" --build "$out/project" -j2 >> "$out/project.log" 2>&1 || { cat "$out/project.log"; fail "building the outside project"; }
printf 'name: outside\nplatform: {preset: ascend310}\n' > "$out/outside.yaml"
"$out/project/vadd_on_models" "$out/outside.yaml" || fail "the outside program exited $?"
env -u DVP_PRESETS -u DVP_FIRMWARE "$out/prefix/bin/dvp" run "$src/scenarios/quickstart.yaml" --quiet --out "$out/run" ||
  fail "the installed dvp could not run quickstart (exit $?)"
grep -q "ok   kernel top5: 1280 elements within" "$out/run/summary.txt" || fail "quickstart's checks"
# The cube's BLAS is the serial OpenBLAS (cmake/openblas-serial.cmake), installed or not.
for b in "$out/prefix/bin/dvp" "$out/project/vadd_on_models"; do
  ldd "$b" | grep -q "openblas-serial/libopenblas" || fail "$b does not load the serial OpenBLAS: $(ldd "$b" | grep blas)"
done
# A consumer whose system lacks a dependency: find_package(davinci-vp QUIET) reports the package
# not found instead of ending the configure, and without QUIET it says what is missing. The
# installed package files, copied, are made to look for the serial OpenBLAS where it is not.
mkdir -p "$out/broken/share" && cp -r "$out/prefix/share/davinci-vp" "$out/broken/share/"
sed -i 's#/openblas-serial)#/openblas-serial-missing)#' "$out/broken/share/davinci-vp/cmake/openblas-serial.cmake"
mkdir -p "$out/consumer"
cat > "$out/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(consumer CXX)
find_package(davinci-vp QUIET)
if(davinci-vp_FOUND)
  message(FATAL_ERROR "found davinci-vp without its serial OpenBLAS")
endif()
find_package(davinci-vp)
CMAKE
"$cmake" -S "$out/consumer" -B "$out/consumer/build" -DCMAKE_PREFIX_PATH="$out/broken" > "$out/consumer.log" 2>&1 ||
  { cat "$out/consumer.log"; fail "configuring a consumer that finds davinci-vp QUIET without its dependencies"; }
grep -q "set davinci-vp_FOUND to FALSE" "$out/consumer.log" && grep -q "libopenblas-serial-dev" "$out/consumer.log" ||
  { cat "$out/consumer.log"; fail "find_package did not report the package not found, naming the missing serial OpenBLAS"; }
"$out/prefix/bin/dvp" --version
echo "ok: an outside project ran a kernel on the installed models; the installed dvp ran quickstart"
