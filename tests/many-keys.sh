#!/bin/sh
# SPDX-License-Identifier: MIT
# many-keys.sh EXPECT DVP DIR: a scenario of 200,000 unknown top-level keys is refused with a
# short list of problems, in linear time (a quadratic merge took minutes; the test's timeout
# catches that).
expect=$1; dvp=$2; dir=$3
mkdir -p "$dir"
awk 'BEGIN { print "name: many"; for (i = 0; i < 200000; i++) print "k" i ": 1" }' > "$dir/many-keys.yaml"
exec "$expect" 2 "many-keys.yaml:3:1: key 'k0': unknown key 'k0'.*
  \.\.\. and 1999[0-9][0-9] more" "$dvp" config "$dir/many-keys.yaml"
