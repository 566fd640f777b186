/* Error classes, codes and strings the program adds, MPI_Comm_call_errhandler with a user handler,
 * MPI_Pcontrol and MPI_Type_match_size. With the argument "fatal", rank 1 raises an added code on
 * MPI_COMM_WORLD under the default handler, which ends the run. */
#include <string.h>

#include "check.h"

static int handled_code = 0, handled_calls = 0;

static void handler(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  handled_code = *code;
  ++handled_calls;
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  int klass, code, code2;
  CHECK_EQ(MPI_Add_error_class(&klass), MPI_SUCCESS);
  CHECK(klass > MPI_ERR_LASTCODE);
  CHECK_EQ(MPI_Add_error_code(klass, &code), MPI_SUCCESS);
  CHECK_EQ(MPI_Add_error_code(MPI_ERR_OTHER, &code2), MPI_SUCCESS);
  CHECK(code > klass && code2 > code);
  int* last = NULL;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
  CHECK(flag);
  CHECK_EQ(*last, code2);
  int got;
  CHECK_EQ(MPI_Error_class(code, &got), MPI_SUCCESS);
  CHECK_EQ(got, klass);
  CHECK_EQ(MPI_Error_class(code2, &got), MPI_SUCCESS);
  CHECK_EQ(got, MPI_ERR_OTHER);
  CHECK_EQ(MPI_Error_class(klass, &got), MPI_SUCCESS);
  CHECK_EQ(got, klass);
  char text[MPI_MAX_ERROR_STRING];
  int len;
  CHECK_EQ(MPI_Add_error_string(code, "the disk is on fire"), MPI_SUCCESS);
  CHECK_EQ(MPI_Error_string(code, text, &len), MPI_SUCCESS);
  CHECK(strcmp(text, "the disk is on fire") == 0);
  CHECK_EQ(len, (int)strlen("the disk is on fire"));

  /* Misuse, returned: a predefined class's string, a code used as a class, an unknown code. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_EQ(MPI_Add_error_string(MPI_ERR_COUNT, "no"), MPI_ERR_ARG);
  CHECK_EQ(MPI_Add_error_code(code, &code2), MPI_ERR_ARG);
  CHECK_EQ(MPI_Error_class(code2 + 1000, &got), MPI_ERR_ARG);

  /* A user handler is called with the added code; the call returns MPI_SUCCESS. */
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(handler, &eh);
  MPI_Comm_set_errhandler(dup, eh);
  CHECK_EQ(MPI_Comm_call_errhandler(dup, code), MPI_SUCCESS);
  CHECK_EQ(handled_calls, 1);
  CHECK_EQ(handled_code, code);
  /* Under MPI_ERRORS_RETURN the handler returns: MPI_SUCCESS as well. */
  CHECK_EQ(MPI_Comm_call_errhandler(MPI_COMM_WORLD, code), MPI_SUCCESS);
  MPI_Comm_free(&dup);
  MPI_Errhandler_free(&eh);

  /* MPI-1's names, removed by MPI-3.0, for older programs: the same handlers, the same effect. */
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  CHECK_EQ(MPI_Errhandler_create(handler, &eh), MPI_SUCCESS);
  CHECK_EQ(MPI_Errhandler_set(dup, eh), MPI_SUCCESS);
  MPI_Errhandler got_eh = MPI_ERRHANDLER_NULL;
  CHECK_EQ(MPI_Errhandler_get(dup, &got_eh), MPI_SUCCESS);
  CHECK(got_eh == eh);
  int r = -1; /* a negative count: the handler is called with MPI_ERR_COUNT, and the call returns it */
  CHECK_EQ(MPI_Send(&r, -1, MPI_INT, 0, 0, dup), MPI_ERR_COUNT);
  CHECK_EQ(handled_calls, 2);
  CHECK_EQ(handled_code, MPI_ERR_COUNT);
  CHECK_EQ(MPI_Errhandler_set(dup, MPI_ERRORS_RETURN), MPI_SUCCESS);
  CHECK_EQ(MPI_Errhandler_get(dup, &got_eh), MPI_SUCCESS);
  CHECK(got_eh == MPI_ERRORS_RETURN);
  CHECK_EQ(MPI_Errhandler_set(dup, (MPI_Errhandler)12345), MPI_ERR_ARG);
  MPI_Comm_free(&dup);
  MPI_Errhandler_free(&eh);

  CHECK_EQ(MPI_Pcontrol(1), MPI_SUCCESS);
  CHECK_EQ(MPI_Pcontrol(0), MPI_SUCCESS);
  MPI_Datatype t;
  int tsize;
  CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t), MPI_SUCCESS);
  CHECK_EQ(t, MPI_DOUBLE);
  CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t), MPI_SUCCESS);
  MPI_Type_size(t, &tsize);
  CHECK_EQ(tsize, 4);
  CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t), MPI_SUCCESS);
  CHECK_EQ(t, MPI_C_DOUBLE_COMPLEX);
  CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t), MPI_ERR_ARG);
  CHECK_EQ(MPI_Type_match_size(42, 4, &t), MPI_ERR_ARG);

  /* MPI-4.1's removals: a class goes only once its codes have gone, a string only if set, and what
   * went is no code or class any more; values are not given out again. */
  int k2, c2, c3, last_before = *last;
  CHECK_EQ(MPI_Add_error_class(&k2), MPI_SUCCESS);
  CHECK_EQ(MPI_Add_error_code(k2, &c2), MPI_SUCCESS);
  CHECK_EQ(MPI_Remove_error_class(k2), MPI_ERR_ARG); /* c2 is in it */
  CHECK_EQ(MPI_Remove_error_class(c2), MPI_ERR_ARG); /* a code, not a class */
  CHECK_EQ(MPI_Remove_error_code(k2), MPI_ERR_ARG);  /* a class, not a code */
  CHECK_EQ(MPI_Remove_error_code(MPI_ERR_COUNT), MPI_ERR_ARG);
  CHECK_EQ(MPI_Remove_error_string(c2), MPI_ERR_ARG); /* none set */
  CHECK_EQ(MPI_Add_error_string(c2, "gone soon"), MPI_SUCCESS);
  CHECK_EQ(MPI_Remove_error_string(c2), MPI_SUCCESS);
  CHECK_EQ(MPI_Error_string(c2, text, &len), MPI_SUCCESS);
  CHECK_EQ(len, 0);
  CHECK_EQ(MPI_Remove_error_code(c2), MPI_SUCCESS);
  CHECK_EQ(MPI_Error_class(c2, &got), MPI_ERR_ARG);
  CHECK_EQ(MPI_Remove_error_class(k2), MPI_SUCCESS);
  CHECK_EQ(MPI_Error_class(k2, &got), MPI_ERR_ARG);
  CHECK_EQ(MPI_Remove_error_class(k2), MPI_ERR_ARG);
  CHECK_EQ(MPI_Add_error_class(&c3), MPI_SUCCESS);
  CHECK_EQ(c3, last_before + 3);
  CHECK_EQ(MPI_Error_class(code, &got), MPI_SUCCESS); /* the others stay */
  CHECK_EQ(got, klass);

  if (argc > 1 && strcmp(argv[1], "fatal") == 0 && rank == 1) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
    CHECK(0); /* not reached: the default handler ends the run */
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 0) printf("error_classes: all checks passed on %d ranks\n", size);
  return 0;
}
