// How an MPI function runs (docs/mpi.md): it finds its rank's state, checks its arguments as MPI
// does, and hands an error to the communicator's error handler. Shared by every file of the MPI
// interface; internal to libtouchstone_mpi.so.
#pragma once
#include <climits>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "state.hpp"
#include "touchstone/error.hpp"

namespace touchstone::mpi {

/// The largest tag (MPI_TAG_UB).
inline constexpr int kTagUb = INT_MAX / 2;

/// MPI_ERR_ARG when a pointer argument the call reads or writes through is null: checked before
/// anything is posted, so that a call refused this way does nothing.
inline void check_out(const void* p, const char* what) {
  if (!p) throw MpiError{MPI_ERR_ARG, std::string(what) + " is a null pointer"};
}
/// The same for array arguments of n entries, which are read only when n > 0; each named as the
/// standard names it (array_of_blocklengths, sendcounts, ...).
struct ArrayArgument {
  const char* name;
  const void* array;
};
inline void check_arrays(std::int64_t n, std::initializer_list<ArrayArgument> arrays) {
  if (n > 0)
    for (const ArrayArgument& a : arrays)
      if (!a.array)
        throw MpiError{MPI_ERR_ARG,
                       std::string(a.name) + ", an array of " + std::to_string(n) + " entries, is a null pointer"};
}

/// The calling rank's state; ends the process with a message when called outside `touchstone
/// mpirun`, and refuses calls before MPI_Init or after MPI_Finalize when `need_init`.
RankState& state(const char* call, bool need_init = true);
/// The same for a call that touches only its rank's own state and never waits (MPI_Wtime,
/// MPI_Initialized): it takes no turn, so that a program timing its own computation keeps running
/// beside the other ranks' (Proc::await_turn; state() takes the turn first).
RankState& own_state(const char* call, bool need_init = true);
/// MPI_COMM_WORLD's and MPI_COMM_SELF's runtime groups, which MPI_Init leaves to the rank's first
/// call that takes its turn (RankState::world_groups_pending; env.cpp).
void make_world_groups(RankState& rs);
/// A process MPI_Comm_spawn started: tells the spawning root its world is up and makes the
/// intercommunicator to its parents (MPI_Comm_get_parent's), with them (dynamic.cpp).
void join_parents(RankState& rs);
/// --compute host: charges the rank's host CPU time since its burst began as computation (env.cpp).
void charge_host_compute(RankState& rs, double factor);
/// Adds the last outermost call's time, from its entry to its return, to RankState::mpi_time, if it
/// has not been (OutermostCall): the clock read now, holding the turn, before anything moves it
/// after that return (host compute time is charged after this).
inline void settle_call_time(RankState& rs) {
  if (!rs.call_unsettled) return;
  rs.call_unsettled = false;
  rs.mpi_time += rs.proc->now() - rs.call_began;
}
/// --compute host: the rank resumed, its next burst begins now (env.cpp).
void begin_burst(RankState& rs);
/// The text of an error class (MPI_Error_string).
const char* error_text(int code);

Comm* find_comm(RankState& rs, MPI_Comm c);  ///< nullptr when c is not a valid communicator
Comm& comm_of(RankState& rs, MPI_Comm c);    ///< MpiError MPI_ERR_COMM when c is not valid
const Type& type_of(RankState& rs, MPI_Datatype t);    ///< MpiError MPI_ERR_TYPE when t is not valid
const Type& committed(RankState& rs, MPI_Datatype t);  ///< type_of, and committed
const UserOp* user_op(RankState& rs, MPI_Op op);       ///< nullptr for predefined or unknown ops

void check_count(int count);
void check_peer(const Comm& c, int r, bool wildcard_ok, const char* what);
void check_tag(int tag, bool wildcard_ok);
void check_root(const Comm& c, int root);

MPI_Status empty_status();
MPI_Status proc_null_status();
void set_status(MPI_Status* out, const MPI_Status& s);  ///< unless out is MPI_STATUS_IGNORE
/// The status of a completed operation or probe, as a call returning one status gives it (unless out
/// is MPI_STATUS_IGNORE): its MPI_ERROR field changes only on failure.
void set_result_status(MPI_Status* out, const MPI_Status& s);

/// Hands an error to the communicator's error handler (the world's when the communicator is not
/// valid): MPI_ERRORS_ARE_FATAL ends the run with a report naming the rank and the call.
int raise(RankState& rs, MPI_Comm c, const char* call, const MpiError& e);
/// Whether error handler eh ends the run (MPI_ERRORS_ARE_FATAL) rather than returning the error to
/// the call (MPI_ERRORS_RETURN, a handler of the program's); errors_are_fatal: raise's, for a call on c.
bool ends_the_run(const RankState& rs, MPI_Errhandler eh);
bool errors_are_fatal(RankState& rs, MPI_Comm c);
/// The report of an error that MPI_ERRORS_ARE_FATAL ends the run with, `call` made by world rank `rank`.
std::string fatal_text(const RankState& rs, const char* call, int rank, const MpiError& e);
/// The words for an error code in reports: its class's text, or the class of a code the program added.
std::string error_kind(const RankState& rs, int code);
/// Keeps, for deadlock reports, an error about to be returned to the program (RankState::returned_error);
/// c is the communicator the call named, MPI_COMM_NULL for none or one that is not valid.
void remember_returned(RankState& rs, MPI_Comm c, const char* call, const MpiError& e);

/// The program's error handler behind handle eh (MPI_Comm_create_errhandler, MPI_Win_create_...),
/// or nullptr when eh is a predefined handler or no handle at all.
MPI_Comm_errhandler_function* user_errhandler(const RankState& rs, MPI_Errhandler eh);
/// A new error handler handle for the program's function f.
MPI_Errhandler add_errhandler(RankState& rs, MPI_Comm_errhandler_function* f);
/// MPI_ERR_ARG unless eh is MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN or a handler the program created.
void check_errhandler(const RankState& rs, MPI_Errhandler eh);

/// Hands error e of `call` to error handler eh of the object with handle `handle` (a communicator,
/// window, session or file: every handle is an int, and every handler takes its address and the
/// code). MPI_ERRORS_RETURN and a handler of the program's return e.code, which is remembered for
/// deadlock reports (`named`: the communicator, or MPI_COMM_NULL for the other objects);
/// MPI_ERRORS_ARE_FATAL ends the run with fatal()'s report.
template <class Fatal>
int hand_to(RankState& rs, MPI_Errhandler eh, int handle, MPI_Comm named, const char* call, const MpiError& e,
            Fatal fatal) {
  if (eh == MPI_ERRORS_RETURN) {
    remember_returned(rs, named, call, e);
    return e.code;
  }
  if (MPI_Comm_errhandler_function* f = user_errhandler(rs, eh)) {
    remember_returned(rs, named, call, e);
    int code = e.code;
    f(&handle, &code);
    return e.code;
  }
  throw UsageError(fatal());
}

/// True when `pc` is an address in this library's code (check.cpp).
bool in_mpi_library(const void* pc);
/// The innermost return address on the calling stack that is not in this library: where the program
/// called MPI (check.cpp). A backtrace, for the calls that reach call() through another function.
const void* program_caller();

/// Keeps RankState::caller, for check reports, at the program's call of the outermost MPI function
/// in progress: `pc` is call()'s return address, which is the program's when call() is inlined into
/// the MPI function the program called.
/// A call that holds the rank's turn (`timed`) counts its virtual time in RankState::mpi_time, from
/// its entry to its return; one that does not (Reach::own) takes no time, and reading would take the
/// turn. The clock is read at the entry, which holds the turn already, but not at the return:
/// reading it is a runtime call, which takes the turn, and a program that goes on past its wait on
/// another host core (docs/parallel.md) would stop right there, at its return from MPI_Waitall,
/// until the event loop reached it. The return's clock is read at the rank's next call that holds
/// the turn (settle_call_time), where it is still the same.
class OutermostCall {
 public:
  OutermostCall(RankState& rs, const void* pc, MPI_Comm comm, bool timed = true) : rs_(rs), timed_(timed) {
    if (rs.call_depth == 0) {
      if (timed_) rs.call_began = rs.proc->now();
      rs.caller = in_mpi_library(pc) ? program_caller() : pc;
      rs.call_comm = comm;
    }
    ++rs.call_depth;
  }
  ~OutermostCall() { --rs_.call_depth; }
  /// The call returns `rc`.
  int returns(int rc) {
    if (rs_.call_depth == 1 && timed_) rs_.call_unsettled = true;
    return rc;
  }
  OutermostCall(const OutermostCall&) = delete;
  OutermostCall& operator=(const OutermostCall&) = delete;

 private:
  RankState& rs_;
  bool timed_;
};

/// mpirun --check (Session::synchronizing_collectives): when `name` is a blocking collective on an
/// intracommunicator, its members first meet in a barrier, so that the call completes on no member
/// before every member has entered it, as any conforming MPI may do. Otherwise nothing.
void synchronize_collective(RankState& rs, const char* name, MPI_Comm c);

/// What an MPI function's own code reaches: `shared` (most) takes the rank's turn first
/// (state()); `own` is for functions that read or write only the calling rank's state and never
/// wait (MPI_Comm_rank), so that a program calling them keeps running beside other ranks' (own_state()).
enum class Reach { shared, own };

/// Runs body(rank state) as the MPI function `name` on communicator `c`; `need_init` false for the
/// functions MPI lets a program call before MPI_Init and after MPI_Finalize (MPI_Info_*, MPI-4.0).
/// Always inlined, so that its return address is the program's call of the MPI function.
template <class Body>
[[gnu::always_inline]] inline int call(const char* name, MPI_Comm c, Body&& body, bool need_init = true,
                                       Reach reach = Reach::shared) {
  RankState& rs = reach == Reach::own ? own_state(name, need_init) : state(name, need_init);
  OutermostCall outermost(rs, __builtin_return_address(0), c, reach == Reach::shared);
  try {
    synchronize_collective(rs, name, c);
    body(rs);
    return outermost.returns(MPI_SUCCESS);
  } catch (const MpiError& e) {
    return outermost.returns(raise(rs, c, name, e));
  } catch (const AbortRequested&) {
    throw;
  } catch (const UsageError& e) {  // the runtime refused: the message says why
    return outermost.returns(raise(rs, c, name, MpiError{MPI_ERR_OTHER, e.what()}));
  }
}

/// Runs body(rank state) as the MPI function `name` on an object that is not a communicator (a
/// window, a session): its errors go to raise_on(rank state, error), the object's error handler.
/// Always inlined, with its callers, so that its return address is the program's call.
template <class Raise, class Body>
[[gnu::always_inline]] inline int object_call(const char* name, bool need_init, Raise&& raise_on, Body&& body) {
  RankState& rs = state(name, need_init);
  OutermostCall outermost(rs, __builtin_return_address(0), MPI_COMM_NULL);
  try {
    body(rs);
    return outermost.returns(MPI_SUCCESS);
  } catch (const MpiError& e) {
    return outermost.returns(raise_on(rs, e));
  } catch (const AbortRequested&) {
    throw;
  } catch (const UsageError& e) {
    return outermost.returns(raise_on(rs, MpiError{MPI_ERR_OTHER, e.what()}));
  }
}

}  // namespace touchstone::mpi
