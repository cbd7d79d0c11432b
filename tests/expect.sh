#!/bin/sh
# SPDX-License-Identifier: MIT
# expect.sh RC REGEX CMD...: runs CMD, passes if it exits with RC and its output matches REGEX.
want_rc=$1; regex=$2; shift 2
out=$("$@" 2>&1); rc=$?
if [ "$rc" != "$want_rc" ]; then
  echo "exit code $rc, expected $want_rc; output:"; echo "$out"; exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then
  echo "output does not match: $regex"; echo "output:"; echo "$out"; exit 1
fi
echo "ok: exit $rc, message matches"
