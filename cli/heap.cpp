// The heap of every program that runs emulations (the CLI, the paper programs, the benchmarks):
// jemalloc, linked in place of glibc's malloc (CMakeLists.txt, touchstone_heap), with the
// options below. Read by jemalloc at its start-up; MALLOC_CONF in the environment overrides them.
//
// Why jemalloc: a run of many VPs makes and drops millions of small objects of many sizes (requests,
// messages, the partitions of recursive collectives) on one host thread, far more than glibc's
// per-thread cache holds, so glibc served most of them from its bins: a third of the instructions
// of gather/logp-lev-sq on 65,536 VPs were malloc and free (docs/performance.md, "The heap").
//
// thp:always, metadata_thp:always: the heap in transparent huge pages (Debian's mode, "madvise",
// honours jemalloc's advice), so the VPs' state, the engine's queues and the algorithms' own
// allocations of a fresh process come 2 MiB per fault rather than 4 KiB, where a first touch is
// dear (10 to 25 us a page on the development host's VM on some days).
// dirty_decay_ms:-1, muzzy_decay_ms:-1: freed pages are never given back to the kernel. A sweep's
// next job reuses them instead of faulting its memory in again; when pages went back would depend
// on which job ends when. The process keeps its largest heap until it exits: the peak is unchanged.
// narenas:1: one arena for every thread, so that what one of a sweep's concurrent jobs freed serves
// the next job, whichever thread runs it. With an arena per thread each kept its own largest heap,
// and the README's sweep peaked at 4.8 GB instead of 4.4 (docs/performance.md, "The heap").
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "narenas:1,thp:always,metadata_thp:always,dirty_decay_ms:-1,muzzy_decay_ms:-1";
}
