#!/bin/sh
# check-config-doc.sh DVP DOC: docs/config-reference.md must be exactly what `dvp schema` prints.
if ! "$1" schema | diff -u "$2" -; then
  echo "docs/config-reference.md is out of date: regenerate it with: build/bin/dvp schema > docs/config-reference.md"
  exit 1
fi
