#!/bin/sh
# SPDX-License-Identifier: MIT
# dvas-roundtrip.sh DVAS DVDIS SOURCE OUTDIR: assemble, disassemble, reassemble; bytes must match.
set -e
mkdir -p "$4"
"$1" "$3" -o "$4/a.dvk"
"$2" "$4/a.dvk" > "$4/a.s"
"$1" "$4/a.s" -o "$4/b.dvk"
cmp "$4/a.dvk" "$4/b.dvk"
echo "ok: $(wc -c < "$4/a.dvk") bytes round-trip"
