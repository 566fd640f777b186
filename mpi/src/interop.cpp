// Language interoperability (MPI-3.1 17.2.4): the Fortran form of a handle and of a status. Every
// handle of this MPI is an int and its Fortran integer is the same number, so each conversion is
// the identity; a Fortran status holds the C status's fields in MPI_STATUS_SIZE integers, the
// received byte count split in two. They may be called at any time, as the standard allows.
#include <cstdint>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#define TOUCHSTONE_HANDLE_CONVERSIONS(Name, Handle)                          \
  MPI_Fint MPI_##Name##_c2f(Handle h) { return static_cast<MPI_Fint>(h); } \
  Handle MPI_##Name##_f2c(MPI_Fint f) { return static_cast<Handle>(f); }

TOUCHSTONE_HANDLE_CONVERSIONS(Comm, MPI_Comm)
TOUCHSTONE_HANDLE_CONVERSIONS(Group, MPI_Group)
TOUCHSTONE_HANDLE_CONVERSIONS(Type, MPI_Datatype)
TOUCHSTONE_HANDLE_CONVERSIONS(Op, MPI_Op)
TOUCHSTONE_HANDLE_CONVERSIONS(Request, MPI_Request)
TOUCHSTONE_HANDLE_CONVERSIONS(Errhandler, MPI_Errhandler)
TOUCHSTONE_HANDLE_CONVERSIONS(Info, MPI_Info)
TOUCHSTONE_HANDLE_CONVERSIONS(Message, MPI_Message)
TOUCHSTONE_HANDLE_CONVERSIONS(Win, MPI_Win)

static_assert(MPI_STATUS_SIZE == 6, "source, tag, error, the byte count's two halves, cancelled");

int MPI_Status_c2f(const MPI_Status* c, MPI_Fint* f) {
  if (!c || !f) return MPI_ERR_ARG;
  const auto bytes = static_cast<std::uint64_t>(c->touchstone_bytes);
  f[0] = c->MPI_SOURCE;
  f[1] = c->MPI_TAG;
  f[2] = c->MPI_ERROR;
  f[3] = static_cast<MPI_Fint>(bytes & 0xffffffffu);
  f[4] = static_cast<MPI_Fint>(bytes >> 32);
  f[5] = c->touchstone_cancelled;
  return MPI_SUCCESS;
}

int MPI_Status_f2c(const MPI_Fint* f, MPI_Status* c) {
  if (!c || !f) return MPI_ERR_ARG;
  c->MPI_SOURCE = f[0];
  c->MPI_TAG = f[1];
  c->MPI_ERROR = f[2];
  c->touchstone_bytes = static_cast<std::size_t>(static_cast<std::uint32_t>(f[3]) |
                                                 static_cast<std::uint64_t>(static_cast<std::uint32_t>(f[4])) << 32);
  c->touchstone_cancelled = f[5];
  return MPI_SUCCESS;
}
