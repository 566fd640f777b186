#!/bin/sh
# Runs a command and checks its exit status and output: expect.sh STATUS REGEX COMMAND...
# STATUS is a number, or "nonzero". The combined stdout and stderr must match the extended REGEX;
# a REGEX with a newline in it is matched against the whole output at once, so it can pin down
# consecutive lines.
. "$(dirname "$0")/expect_run.sh"
want=$1 regex=$2
shift 2
run_expecting expect.sh "$want" "$@"
case $regex in
  *'
'*) whole=-z ;;
  *) whole= ;;
esac
printf '%s\n' "$out" | grep -Eq $whole -- "$regex" || { echo "expect.sh: output does not match '$regex'"; exit 1; }
