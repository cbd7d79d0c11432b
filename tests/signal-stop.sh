#!/bin/sh
# signal-stop.sh DVP SCENARIO OUT SIGNAL CODE: a run that SIGNAL (INT or TERM) stops while it
# simulates ends with exit CODE, its outputs written and the stop named in summary.txt. The
# signal is sent once the firmware has printed (the simulation is under way).
dvp=$1; scenario=$2; out=$3; sig=$4; want=$5
rm -rf "$out"
"$dvp" run "$scenario" --set run.max_sim_ns=1e13 --quiet --out "$out" 2>"$out.err" &
pid=$!
i=0
while [ ! -s "$out/uart-cpu0.txt" ]; do
  i=$((i + 1))
  if [ $i -gt 1200 ]; then echo "the firmware never printed"; kill -KILL $pid; exit 1; fi
  sleep 0.1
done
kill -"$sig" $pid
wait $pid
rc=$?
if [ "$rc" != "$want" ]; then echo "exit code $rc, expected $want"; cat "$out.err"; exit 1; fi
grep -q "^result    STOPPED: stopped by SIG$sig at simulated" "$out/summary.txt" || { echo "summary.txt:"; cat "$out/summary.txt"; exit 1; }
grep -q "stopped by SIG$sig" "$out.err" || { echo "stderr:"; cat "$out.err"; exit 1; }
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['summary']['simulated_ns'] > 0" "$out/stats.json" || exit 1
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$out/trace.json" || exit 1
echo "ok: SIG$sig -> exit $rc, outputs written, the stop named"
