#!/bin/sh
# Runs a command and checks its exit status and output: expect.sh STATUS REGEX COMMAND...
# STATUS is a number, or "nonzero". The combined stdout and stderr must match the extended REGEX;
# a REGEX with a newline in it is matched against the whole output at once, so it can pin down
# consecutive lines.
want=$1 regex=$2
shift 2
out=$("$@" 2>&1)
got=$?
printf '%s\n' "$out"
if [ "$want" = nonzero ]; then
  [ $got -ne 0 ] || { echo "expect.sh: exit status 0, wanted non-zero"; exit 1; }
else
  [ $got -eq "$want" ] || { echo "expect.sh: exit status $got, wanted $want"; exit 1; }
fi
case $regex in
  *'
'*) whole=-z ;;
  *) whole= ;;
esac
printf '%s\n' "$out" | grep -Eq $whole -- "$regex" || { echo "expect.sh: output does not match '$regex'"; exit 1; }
