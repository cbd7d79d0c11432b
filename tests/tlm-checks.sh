#!/bin/sh
# SPDX-License-Identifier: MIT
# tlm-checks.sh DVP SCENARIOS OUT: every shipped scenario (scenarios/faults/ excepted: they stop
# on purpose; scenarios/studies/ holds studies, not scenarios) runs clean with a TLM
# base-protocol checker on every binding: exit 0, no violation, and transactions checked.
dvp=$1; scenarios=$2; out=$3
status=0
for s in $(find "$scenarios" -name '*.yaml' -not -path '*/presets/*' -not -path '*/faults/*' -not -path '*/studies/*' | sort); do
  name=$(basename "$s" .yaml)
  if ! "$dvp" run "$s" --set debug.tlm_checks=true --quiet --no-trace --out "$out/$name" >"$out-$name.log" 2>&1; then
    echo "FAIL $s:"; cat "$out-$name.log"; status=1; continue
  fi
  python3 - "$out/$name/stats.json" "$s" <<'PY' || status=1
import json, sys
j = json.load(open(sys.argv[1]))["summary"]
if j["tlm_violations"] != 0 or j["tlm_transactions_checked"] == 0:
    print("FAIL %s: %d violations, %d transactions checked" % (sys.argv[2], j["tlm_violations"], j["tlm_transactions_checked"]))
    sys.exit(1)
print("ok   %s: %d transactions checked" % (sys.argv[2], j["tlm_transactions_checked"]))
PY
done
exit $status
