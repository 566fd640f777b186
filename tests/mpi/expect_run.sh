# Sourced by expect.sh and expect_lines.sh: run_expecting SCRIPT STATUS COMMAND... runs COMMAND,
# prints its combined stdout and stderr and leaves them in $out; it exits 1, naming SCRIPT, unless
# the exit status is STATUS (a number, or "nonzero").
run_expecting() {
  script=$1 want=$2
  shift 2
  out=$("$@" 2>&1)
  got=$?
  printf '%s\n' "$out"
  if [ "$want" = nonzero ]; then
    [ $got -ne 0 ] || { echo "$script: exit status 0, wanted non-zero"; exit 1; }
  else
    [ $got -eq "$want" ] || { echo "$script: exit status $got, wanted $want"; exit 1; }
  fi
}
