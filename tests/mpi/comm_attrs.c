/* Attribute caching (MPI-3.1 section 6.7) on communicators and datatypes: copy callbacks on
 * MPI_Comm_dup and MPI_Comm_idup, delete callbacks on free, delete_attr and replacement, the
 * predefined callbacks, callbacks whose error fails the call, the MPI-1 names, and the deletion
 * of MPI_COMM_SELF's and MPI_COMM_WORLD's attributes at MPI_Finalize, last set first. The optional
 * argument is MPI_UNIVERSE_SIZE, the machine's VP count (the world's size when not given). */
#include <stdlib.h>

#include "check.h"

static int copies, deletes, last_deleted;

/* Copies a heap int, incremented, so each duplicate's value is told apart. */
static int copy_plus_one(MPI_Comm old, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)old, (void)keyval;
  CHECK_EQ(*(int*)extra, 42);
  int* v = malloc(sizeof *v);
  *v = *(int*)in + 1;
  *(void**)out = v;
  *flag = 1;
  ++copies;
  return MPI_SUCCESS;
}

static int delete_free(MPI_Comm c, int keyval, void* value, void* extra) {
  (void)c, (void)keyval, (void)extra;
  last_deleted = *(int*)value;
  free(value);
  ++deletes;
  return MPI_SUCCESS;
}

static int failing_copy(MPI_Comm old, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)old, (void)keyval, (void)extra, (void)in, (void)out, (void)flag;
  return MPI_ERR_OTHER;
}

static int failing_delete(MPI_Comm c, int keyval, void* value, void* extra) {
  (void)c, (void)keyval, (void)value, (void)extra;
  return MPI_ERR_ARG;
}

static int* heap_int(int v) {
  int* p = malloc(sizeof *p);
  *p = v;
  return p;
}

static int universe_given = 0;

static void comm_attributes(void) {
  int extra = 42, key = MPI_KEYVAL_INVALID, flag = 0;
  void* got = NULL;
  MPI_Comm_create_keyval(copy_plus_one, delete_free, &key, &extra);
  MPI_Comm c, d;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_get_attr(c, key, &got, &flag);
  CHECK(!flag);
  MPI_Comm_set_attr(c, key, heap_int(10));
  MPI_Comm_get_attr(c, key, &got, &flag);
  CHECK(flag);
  CHECK_EQ(*(int*)got, 10);

  /* MPI_Comm_dup and MPI_Comm_idup run the copy callback. */
  MPI_Comm_dup(c, &d);
  CHECK_EQ(copies, 1);
  MPI_Comm_get_attr(d, key, &got, &flag);
  CHECK(flag);
  CHECK_EQ(*(int*)got, 11);
  MPI_Request req;
  MPI_Comm e;
  MPI_Comm_idup(d, &e, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  MPI_Comm_get_attr(e, key, &got, &flag);
  CHECK_EQ(*(int*)got, 12);

  /* Replacing a value deletes the old one; delete_attr and free run the delete callback. */
  MPI_Comm_set_attr(c, key, heap_int(20));
  CHECK_EQ(deletes, 1);
  CHECK_EQ(last_deleted, 10);
  MPI_Comm_delete_attr(c, key);
  CHECK_EQ(deletes, 2);
  CHECK_EQ(last_deleted, 20);
  MPI_Comm_get_attr(c, key, &got, &flag);
  CHECK(!flag);
  MPI_Comm_free(&e);
  CHECK_EQ(last_deleted, 12);
  /* A freed keyval still deletes the attributes that use it. */
  MPI_Comm_free_keyval(&key);
  CHECK(key == MPI_KEYVAL_INVALID);
  MPI_Comm_free(&d);
  CHECK_EQ(deletes, 4);
  CHECK_EQ(last_deleted, 11);

  /* The predefined callbacks: MPI_COMM_NULL_COPY_FN copies nothing, MPI_COMM_DUP_FN the value. */
  int knull, kdup;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &knull, NULL);
  MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kdup, NULL);
  static int shared = 7;
  MPI_Comm_set_attr(c, knull, &shared);
  MPI_Comm_set_attr(c, kdup, &shared);
  MPI_Comm_dup(c, &d);
  MPI_Comm_get_attr(d, knull, &got, &flag);
  CHECK(!flag);
  MPI_Comm_get_attr(d, kdup, &got, &flag);
  CHECK(flag);
  CHECK(got == &shared);
  MPI_Comm_free(&d);

  /* A callback's error fails the call with its code; the communicator stays. */
  int kbad_copy, kbad_delete;
  MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &kbad_copy, NULL);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, failing_delete, &kbad_delete, NULL);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  MPI_Comm_set_attr(c, kbad_copy, &shared);
  d = MPI_COMM_NULL;
  CHECK_EQ(MPI_Comm_dup(c, &d), MPI_ERR_OTHER);
  MPI_Comm_delete_attr(c, kbad_copy);
  MPI_Comm_set_attr(c, kbad_delete, &shared);
  CHECK_EQ(MPI_Comm_delete_attr(c, kbad_delete), MPI_ERR_ARG);
  CHECK_EQ(MPI_Comm_set_attr(c, kbad_delete, &extra), MPI_ERR_ARG);
  MPI_Comm_get_attr(c, kbad_delete, &got, &flag);
  CHECK(flag && got == &shared); /* the failed replacement kept the old value */
  CHECK_EQ(MPI_Comm_free(&c), MPI_ERR_ARG);
  CHECK(c != MPI_COMM_NULL);

  /* Bad keyvals: predefined, freed, of another kind. */
  int tkey;
  MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tkey, NULL);
  CHECK_EQ(MPI_Comm_set_attr(c, MPI_TAG_UB, &shared), MPI_ERR_KEYVAL);
  CHECK_EQ(MPI_Comm_set_attr(c, tkey, &shared), MPI_ERR_KEYVAL);
  /* A freed keyval names the attributes that still use it, and no more once they are gone. */
  int freed = knull, unused;
  MPI_Comm_free_keyval(&knull);
  MPI_Comm_get_attr(c, freed, &got, &flag);
  CHECK(flag && got == &shared);
  MPI_Comm_delete_attr(c, freed);
  CHECK_EQ(MPI_Comm_get_attr(c, freed, &got, &flag), MPI_ERR_KEYVAL);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &unused, NULL);
  freed = unused;
  MPI_Comm_free_keyval(&unused);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* keyval calls report to the world */
  CHECK_EQ(MPI_Comm_free_keyval(&freed), MPI_ERR_KEYVAL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Type_free_keyval(&tkey);
  MPI_Comm_free_keyval(&kdup);
  MPI_Comm_free_keyval(&kbad_copy);
  MPI_Comm_free_keyval(&kbad_delete);

  /* Predefined attributes. */
  int* ip = NULL;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ip, &flag);
  CHECK(flag && *ip >= 32767);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &ip, &flag);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(flag);
  CHECK_EQ(*ip, universe_given ? universe_given : size);
}

/* The MPI-1 names over the same machinery. */
static void mpi1_names(void) {
  int key, flag = 0;
  void* got;
  MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &key, NULL);
  static int v = 5;
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Attr_put(c, key, &v);
  MPI_Comm d;
  MPI_Comm_dup(c, &d);
  MPI_Attr_get(d, key, &got, &flag);
  CHECK(flag && got == &v);
  MPI_Attr_delete(d, key);
  MPI_Attr_get(d, key, &got, &flag);
  CHECK(!flag);
  MPI_Keyval_free(&key);
  MPI_Comm_free(&d);
  MPI_Comm_free(&c);
}

static int type_deletes;
static int type_delete(MPI_Datatype t, int keyval, void* value, void* extra) {
  (void)t, (void)keyval, (void)extra;
  type_deletes += *(int*)value;
  return MPI_SUCCESS;
}

static void type_attributes(void) {
  int key, flag = 0;
  void* got;
  MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete, &key, NULL);
  MPI_Datatype vec;
  MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
  static int one = 1, ten = 10;
  MPI_Type_set_attr(vec, key, &one);
  MPI_Type_get_attr(vec, key, &got, &flag);
  CHECK(flag && got == &one);
  MPI_Type_set_attr(MPI_DOUBLE, key, &ten); /* predefined datatypes hold attributes too */
  MPI_Type_get_attr(MPI_DOUBLE, key, &got, &flag);
  CHECK(flag && got == &ten);
  MPI_Type_set_attr(vec, key, &ten);
  CHECK_EQ(type_deletes, 1);
  MPI_Type_delete_attr(vec, key);
  CHECK_EQ(type_deletes, 11);
  MPI_Type_delete_attr(MPI_DOUBLE, key);
  CHECK_EQ(type_deletes, 21);
  MPI_Type_get_attr(vec, key, &got, &flag);
  CHECK(!flag);
  MPI_Type_free_keyval(&key);
  MPI_Type_free(&vec);
  int wkey;
  MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &wkey, NULL);
  MPI_Win_free_keyval(&wkey);
  CHECK(wkey == MPI_KEYVAL_INVALID);
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes, then MPI_COMM_WORLD's, each last set first. */
static int order[6], called;
static int record(MPI_Comm c, int keyval, void* value, void* extra) {
  (void)keyval, (void)extra;
  int finalized = 1;
  MPI_Finalized(&finalized);
  order[called++] = (finalized ? 100 : 0) + (c == MPI_COMM_SELF ? 10 : 20) + (int)(long)value;
  return MPI_SUCCESS;
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  if (argc > 1) universe_given = atoi(argv[1]);
  comm_attributes();
  mpi1_names();
  type_attributes();
  int keys[3];
  for (int i = 0; i < 3; ++i) MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record, &keys[i], NULL);
  MPI_Comm_set_attr(MPI_COMM_WORLD, keys[0], (void*)1L);
  MPI_Comm_set_attr(MPI_COMM_SELF, keys[1], (void*)2L);
  MPI_Comm_set_attr(MPI_COMM_WORLD, keys[2], (void*)3L);
  MPI_Comm_set_attr(MPI_COMM_SELF, keys[0], (void*)4L);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  const int expected[4] = {14, 12, 23, 21};
  int ok = called == 4;
  for (int i = 0; ok && i < 4; ++i) ok = order[i] == expected[i];
  if (!ok) {
    fprintf(stderr, "rank %d: finalize deleted %d attribute(s) in the order %d %d %d %d\n", rank, called, order[0],
            order[1], order[2], order[3]);
    return 3;
  }
  if (rank == 0) printf("comm_attrs: all checks passed on %d ranks\n", size);
  return 0;
}
