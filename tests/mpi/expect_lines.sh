#!/bin/sh
# Runs a command and checks its exit status and that its output holds the given lines:
# expect_lines.sh STATUS LINE... -- COMMAND...
# STATUS is a number, or "nonzero". Each LINE is an extended regex that must match one whole line
# of the combined stdout and stderr (it is anchored at both ends).
. "$(dirname "$0")/expect_run.sh"
want=$1
shift
n=0
for arg in "$@"; do
  [ "$arg" = "--" ] && break
  n=$((n + 1))
done
[ $n -lt $# ] || { echo "expect_lines.sh: no -- before the command"; exit 1; }
lines_file=$(mktemp)
trap 'rm -f "$lines_file"' EXIT
i=0
while [ $i -lt $n ]; do
  printf '%s\n' "$1" >> "$lines_file"
  shift
  i=$((i + 1))
done
shift  # the --
run_expecting expect_lines.sh "$want" "$@"
status=0
while IFS= read -r line; do
  printf '%s\n' "$out" | grep -Eq -- "^($line)\$" || { echo "expect_lines.sh: no line matches '$line'"; status=1; }
done < "$lines_file"
exit $status
