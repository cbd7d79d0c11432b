#!/bin/sh
# SPDX-License-Identifier: MIT
# rtl-example.sh SRC DVP FST_INFO OUT: the worked example of RTL co-simulation, end to end.
# scripts/rtl-compare runs scenarios/rtl/vecacc.yaml with vecacc as its TLM model and as its
# Verilog: both pass, both operations' outputs are identical, the times are reported side by
# side; then GTKWave's reader (fst-info) opens the RTL run's waveform and finds the engine's
# AXI traffic and its interrupt in it.
src=$1; dvp=$2; fst_info=$3; out=$4
rm -rf "$out"
if ! python3 "$src/scripts/rtl-compare" --dvp "$dvp" --out "$out" >"$out.log" 2>&1; then
  echo "FAIL rtl-compare:"; cat "$out.log"; exit 1
fi
cat "$out.log"
[ "$(grep -c ' identical$' "$out.log")" = 2 ] || { echo "FAIL: expected two identical outputs"; exit 1; }
# The TLM model times each bus phase as the Verilog makes it: the engine's cycles agree exactly,
# the operations' times (register accesses included) within 1%.
awk '$1 == "add" || $1 == "scale" {
       if ($6 != $7) { print "FAIL: " $1 ": the TLM model took " $6 " cycles, the RTL " $7; bad = 1 }
       if ($5 < 0.99 || $5 > 1.01) { print "FAIL: " $1 ": rtl/tlm time " $5; bad = 1 } }
     END { exit bad }' "$out.log" || exit 1
"$fst_info" "$out/rtl/vecacc.fst" soc.vecacc.m_axi_arvalid soc.vecacc.m_axi_wvalid soc.vecacc.irq >"$out.fst" || {
  echo "FAIL: the waveform"; cat "$out.fst"; exit 1; }
cat "$out.fst"
for s in m_axi_arvalid m_axi_wvalid irq; do
  grep -Eq "^soc.vecacc.$s: [1-9][0-9]* changes" "$out.fst" || { echo "FAIL: no activity on $s in the waveform"; exit 1; }
done
echo "ok"
