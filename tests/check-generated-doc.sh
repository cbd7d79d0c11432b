#!/bin/sh
# check-generated-doc.sh TOOL ARG DOC: DOC must be exactly what `TOOL ARG` prints.
if ! "$1" "$2" | diff -u "$3" -; then
  echo "$3 is out of date: regenerate it with: $1 $2 > $3"
  exit 1
fi
