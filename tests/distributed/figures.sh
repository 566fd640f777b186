# Sourced by the split-run tests: figures() keeps the fields of `--format json` output that the run
# decides (not the host's), one per line, without the comma JSON puts after every field but the last.
figures() { grep -E '^ *"(blocked_us|events|makespan_us|messages|packets|trace_hash|vps)"' | sed 's/,$//'; }
