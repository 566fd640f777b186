#!/bin/sh
# Runs a command and checks its exit status and output: expect.sh STATUS REGEX COMMAND...
# STATUS is a number, or "nonzero". The combined stdout and stderr must match the extended REGEX;
# a REGEX with a newline in it is matched against the whole output at once, so it can pin down
# consecutive lines (grep would take each of its lines as a pattern of its own, and any one
# matching would do: perl, in every Debian system, matches it whole; `.` stops at a line's end).
. "$(dirname "$0")/expect_run.sh"
want=$1 regex=$2
shift 2
run_expecting expect.sh "$want" "$@"
case $regex in
  *'
'*) printf '%s\n' "$out" | perl -0777 -ne 'BEGIN { $re = shift } exit(/$re/ ? 0 : 1)' -- "$regex" ;;
  *) printf '%s\n' "$out" | grep -Eq -- "$regex" ;;
esac || { echo "expect.sh: output does not match '$regex'"; exit 1; }
