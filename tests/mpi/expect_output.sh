#!/bin/sh
# Runs a command and compares its exit status and its whole output with what was recorded:
# expect_output.sh STATUS FILE COMMAND... The combined stdout and stderr must equal FILE byte for byte
# (virtual time makes a run's output deterministic; a difference is shown as a diff).
want=$1 file=$2
shift 2
out=$("$@" 2>&1)
got=$?
status=0
[ $got -eq "$want" ] || { echo "expect_output.sh: exit status $got, wanted $want"; status=1; }
printf '%s\n' "$out" | diff -u "$file" - || { echo "expect_output.sh: output differs from $file"; status=1; }
exit $status
