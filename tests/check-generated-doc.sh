#!/bin/sh
# SPDX-License-Identifier: MIT
# check-generated-doc.sh DOC TOOL ARG...: DOC must be exactly what `TOOL ARG...` prints.
doc=$1
shift
if ! "$@" | diff -u "$doc" -; then
  echo "$doc is out of date: regenerate it with: $* > $doc"
  exit 1
fi
