#!/bin/sh
# Runs a command and compares its whole output (stdout, then stderr) with a file, and its exit
# status with STATUS: expect_output.sh STATUS FILE COMMAND...
want=$1 file=$2
shift 2
out=$("$@" 2>/tmp/expect_output.$$.err)
got=$?
all=$(printf '%s\n' "$out"; cat /tmp/expect_output.$$.err)
rm -f /tmp/expect_output.$$.err
printf '%s\n' "$all" | sed '/^$/d' > /tmp/expect_output.$$.got
status=0
[ "$got" -eq "$want" ] || { echo "expect_output.sh: exit status $got, wanted $want"; status=1; }
diff "$file" /tmp/expect_output.$$.got || { echo "expect_output.sh: output differs from $file"; status=1; }
rm -f /tmp/expect_output.$$.got
exit $status
