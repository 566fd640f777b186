# Races that matter and unsafe programs (docs/debugging.md, "Harmful and harmless races",
# "Infeasible schedules", "Checking for unsafe programs"). Each test asserts the exit status and
# whole lines of the report (expect_lines.sh). Virtual times are the model's: on mesh:2x2 and
# mesh:1x3 rank 1's 4-byte message reaches rank 0 at 11.68 us, rank 2's (one hop more) at 13.12 us.
foreach(t IN ITEMS races_harmless races_harmful races_deadlock races_feasible races_unsafe races_safe races_ring)
  touchstone_add_mpi_program(mpi_test_${t} ${t}.c)
  target_compile_options(mpi_test_${t} PRIVATE -Wall -Wextra -g)  # reports name the lines
endforeach()
set(lines ${here}/expect_lines.sh)
set(race1 "race: rank 0 receive #1: MPI_Recv\\(source=MPI_ANY_SOURCE, tag=0, MPI_COMM_WORLD\\) at races_[a-z]+\\.c:[0-9]+, posted t=0\\.000000 us, took the message from rank 1 \\(tag 0, arrived t=11\\.680000 us\\); it could also have matched:")
set(lost "  the message from rank 2 \\(tag 0, arrived t=13\\.120000 us\\), which lost by 1\\.440000 us")
# Rank 0 blocks in its second receive, the deadlock, when its first has cost it 10.04 us of CPU
# after the message it took arrived: 11.68 + 10.04 us after rank 1's, 13.12 + 10.04 us after rank 2's.
set(blocked "every VP still running is blocked and nothing is in flight")
set(deadlock_after_1 "application deadlock at t=21\\.72 us: ${blocked}")
set(deadlock_after_2 "application deadlock at t=23\\.16 us: ${blocked}")

# A sum over MPI_ANY_SOURCE: the race is harmless, --races=error exits 0; the other order
# receives other bytes, reported as information only.
add_test(NAME mpi.races.harmless COMMAND ${lines} 0 "races_harmless: sum 3; all checks passed" "${race1}" "${lost}"
         "explored 2 run\\(s\\) \\(at most 20\\), every choice; the original run completed"
         "every explored run had the original's outcome"
         "0 harmful race\\(s\\), 1 harmless, 0 not classified:"
         "  rank 0 receive #1: harmless: 1 run\\(s\\) forcing another match, each ending as the run it changed"
         "same outcome, other data received \\(information only\\): --schedule 0:1=2: rank\\(s\\) 0"
         -- ${ts} mpirun --machine mesh:2x2 -np 3 --races=error $<TARGET_FILE:mpi_test_races_harmless>)
# --races=error-all counts every race, harmless or not, as RaceCheck::error does.
add_test(NAME mpi.races.harmless_error_all COMMAND ${lines} 2 "the run has message races \\(RaceCheck::error\\):" "${race1}"
         -- ${ts} mpirun --machine mesh:2x2 -np 3 --races=error-all $<TARGET_FILE:mpi_test_races_harmless>)
# A difference taken in arrival order: the other match prints another line, the race is harmful.
add_test(NAME mpi.races.harmful COMMAND ${lines} 3 "races_harmful: first minus second is -1; all checks passed" "${race1}"
         "  --schedule 0:1=2: completed, other output, other data received at rank\\(s\\) 0 \\(trace_hash [0-9a-f]{16}\\)"
         "1 harmful race\\(s\\), 0 harmless, 0 not classified:"
         "  rank 0 receive #1: harmful: --schedule 0:1=2 ends otherwise: completed, other output"
         -- ${ts} mpirun --machine mesh:2x2 -np 3 --races=error $<TARGET_FILE:mpi_test_races_harmful>)
# --races alone only lists: nothing is classified, the run passes.
add_test(NAME mpi.races.harmful_listed COMMAND ${lines} 0 "${race1}"
         "1 race\\(s\\): 1 wildcard receive\\(s\\) or probe\\(s\\) could have matched 1 other message\\(s\\)"
         -- ${ts} mpirun --machine mesh:2x2 -np 3 --races $<TARGET_FILE:mpi_test_races_harmful>)
# The other match deadlocks: the race is named harmful with the deadlock.
add_test(NAME mpi.races.alternative_deadlocks COMMAND ${lines} 3 "races_deadlock: all checks passed"
         "  rank 0 receive #1: harmful: --schedule 0:1=2 ends otherwise: ${deadlock_after_2}, exit status 2, other output"
         -- ${ts} mpirun --machine mesh:1x3 --explore 20 $<TARGET_FILE:mpi_test_races_deadlock> 2)
# The run itself deadlocks: rank 2's message, never received, is the race's alternative, and
# exploring from the failed run finds the match that completes.
add_test(NAME mpi.races.unreceived_alternative COMMAND ${lines} 2 "${deadlock_after_1}\\." "Races up to the failure:"
         "${race1}" "${lost}"
         "explored 2 run\\(s\\) \\(at most 20\\), every choice; the original run failed: ${deadlock_after_1}\\."
         "  rank 0 receive #1: harmful: --schedule 0:1=2 ends otherwise: completed, exit status 0, other output"
         -- ${ts} mpirun --machine mesh:1x3 --races --explore 20 $<TARGET_FILE:mpi_test_races_deadlock> 1)
# Four wildcard receives of two messages from each of two ranks: exploring drops the choices an
# earlier change made impossible, so every run completes and every race is harmless ...
add_test(NAME mpi.races.feasible_schedules COMMAND ${lines} 0
         "explored 6 run\\(s\\) \\(at most 30\\), every choice; the original run completed"
         "every explored run had the original's outcome" "0 harmful race\\(s\\), 3 harmless, 0 not classified:"
         -- ${ts} mpirun --machine mesh:1x3 --races=error --explore 30 $<TARGET_FILE:mpi_test_races_feasible>)
# ... and a schedule that keeps such a choice is infeasible, not a deadlock of the program.
add_test(NAME mpi.races.infeasible_schedule COMMAND ${lines} 2
         "infeasible schedule at t=34\\.64 us: --schedule 0:3=2 forces rank 0's receive #3 to take a message from rank 2, and none comes; no run of the program makes that match after the choices before it, so this is not a run the program can make \\(drop that choice from the schedule\\)"
         -- ${ts} mpirun --machine mesh:1x3 --schedule 0:1=2,0:2=2,0:3=2 $<TARGET_FILE:mpi_test_races_feasible>)
add_test(NAME mpi.determinism.races_feasible COMMAND ${here}/determinism.sh ${ts}
         $<TARGET_FILE:mpi_test_races_feasible> mesh:3x5 -np 7)

# A pattern of races_unsafe (its first argument) passes with eager sends and deadlocks under --check
# when run on np ranks; ARGN: the lines the report must hold.
function(races_unsafe_under_check pattern np)
  add_test(NAME mpi.races.${pattern}_eager COMMAND ${lines} 0 "races_unsafe ${pattern}: all checks passed"
           -- ${ts} mpirun --machine mesh:2x2 -np 3 $<TARGET_FILE:mpi_test_races_unsafe> ${pattern})
  add_test(NAME mpi.races.check_${pattern} COMMAND ${lines} 2 ${ARGN}
           -- ${ts} mpirun --machine mesh:2x2 -np ${np} --check $<TARGET_FILE:mpi_test_races_unsafe> ${pattern})
endfunction()
# --check: MPI_Send then MPI_Recv on both sides passes with eager sends, deadlocks when sends are
# synchronous; the report names both MPI_Send calls and counts the ranks, not the idle VPs.
races_unsafe_under_check(exchange 2
  "  rank 0 blocked since t=10 us in MPI_Send\\(dest=1, tag=0, MPI_COMM_WORLD\\) at races_unsafe.c:17"
  "  rank 1 blocked since t=10 us in MPI_Send\\(dest=0, tag=0, MPI_COMM_WORLD\\) at races_unsafe.c:17"
  "0 of 2 ranks finished \\(2 more VP\\(s\\) of the machine run no rank\\)\\."
  "  rank 0 waits in MPI_Send\\(dest=1, tag=0, MPI_COMM_WORLD\\) at races_unsafe.c:17 for rank 1"
  "touchstone mpirun --check: standard-mode sends were synchronous and blocking collectives synchronizing, as a conforming MPI may make them: a deadlock reported above can happen on such an MPI")
# A broadcast's root that leaves before the others entered: a synchronizing MPI_Bcast waits for
# rank 1, which waits in a synchronous MPI_Send for rank 0's receive after the broadcast.
races_unsafe_under_check(collective 3
  "  rank 0 blocked since t=32\\.76 us in MPI_Bcast on MPI_COMM_WORLD at races_unsafe.c:22"
  "  rank 1 blocked since t=10 us in MPI_Send\\(dest=0, tag=0, MPI_COMM_WORLD\\) at races_unsafe.c:26"
  "  rank 2 blocked since t=10 us in MPI_Bcast on MPI_COMM_WORLD at races_unsafe.c:27"
  "0 of 3 ranks finished \\(1 more VP\\(s\\) of the machine run no rank\\)\\.")
mpi_test(races.check_safe races_safe --machine mesh:2x3 -np 5 --check)
mpi_test(races.check_safe_torus races_safe --machine torus:3x3 --check)
add_test(NAME mpi.races.check_with_eager_limit COMMAND ${lines} 1
         "error: --check runs every standard-mode send synchronously \\(eager limit 0\\): drop --eager-limit"
         -- ${ts} mpirun --machine mesh:2x2 --check --eager-limit 64 $<TARGET_FILE:mpi_test_races_safe>)
# Races at every rank, one per round (the second receive of a round has no alternative: the next
# round's messages are sent after a barrier its receives came before), with the dissemination
# barrier's messages and with a hardware barrier.
foreach(machine mesh:2x3 mesh:2x4,barrier=hardware)
  string(REGEX MATCH "[0-9]+x[0-9]+" shape ${machine})
  string(REPLACE "x" "*" ranks ${shape})
  math(EXPR ranks "${ranks}")
  math(EXPR races "2 * ${ranks}")
  string(REGEX REPLACE "[:,=]" "_" name ${machine})
  add_test(NAME mpi.races.every_rank.${name} COMMAND ${lines} 0 "races_ring: all checks passed on ${ranks} ranks"
           "${races} race\\(s\\): ${races} wildcard receive\\(s\\) or probe\\(s\\) could have matched ${races} other message\\(s\\)"
           -- ${ts} mpirun --machine ${machine} --races $<TARGET_FILE:mpi_test_races_ring>)
endforeach()
