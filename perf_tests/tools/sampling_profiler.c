// A sampling profiler for machines without perf (the GPU machine). Preloaded, it records the
// call stack (up to kFrames return addresses) of the interrupted thread every millisecond and at
// exit writes the stacks with their weights and /proc/self/maps to $KOSMOS_PROFILE
// (perf_tests/tools/symbolize_profile.py names the functions).
// - Default: every thread, per millisecond of the process' CPU time (CLOCK_PROCESS_CPUTIME_ID;
//   the kernel checks the timer at its tick, so a sample weighs its overrun count plus one).
// - KOSMOS_PROFILE_MAIN=1: the main thread only, per millisecond of wall time (CLOCK_MONOTONIC):
//   where the thread that drives the GPU waits or works, the critical path of a host loop.
//
//   gcc -O2 -shared -fPIC -o sampling_profiler.so perf_tests/tools/sampling_profiler.c
//   KOSMOS_PROFILE=run.prof LD_PRELOAD=$PWD/sampling_profiler.so kosmos rv --batch ...
//
// The timer outlives an exec without its handler: set OMP_PROC_BIND and OMP_PLACES so that the
// kosmos tool does not run itself again with them.
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

enum { kMaxSamples = 1 << 20, kFrames = 24 };
struct sample {
  size_t milliseconds;
  int depth;
  uintptr_t frame[kFrames];  // frame[0]: the interrupted instruction
};
static struct sample* samples;
static atomic_size_t taken;
static timer_t timer;

static void on_profile_tick(int sig, siginfo_t* info, void* context) {
  (void)sig;
  const size_t i = atomic_fetch_add_explicit(&taken, 1, memory_order_relaxed);
  if (i >= kMaxSamples) return;
  struct sample* s = &samples[i];
  s->milliseconds = 1 + (size_t)(info->si_overrun > 0 ? info->si_overrun : 0);
  s->frame[0] = (uintptr_t)((ucontext_t*)context)->uc_mcontext.gregs[REG_RIP];
  // backtrace() starts in this handler and the signal frame: keep what lies beyond them.
  void* stack[kFrames + 3];
  const int n = backtrace(stack, kFrames + 3);
  int skip = 0;
  while (skip < n && (uintptr_t)stack[skip] != s->frame[0]) ++skip;
  s->depth = 1;
  for (int k = skip + 1; k < n && s->depth < kFrames; ++k)
    s->frame[s->depth++] = (uintptr_t)stack[k];
}

__attribute__((constructor)) static void start_profile(void) {
  if (!getenv("KOSMOS_PROFILE")) return;
  samples = calloc(kMaxSamples, sizeof *samples);
  if (!samples) return;
  void* warm[2];
  backtrace(warm, 2);  // loads the unwinder now, not inside the first signal
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_profile_tick;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGPROF, &action, NULL);
  const int main_only = getenv("KOSMOS_PROFILE_MAIN") != NULL;
  struct sigevent event;
  memset(&event, 0, sizeof event);
  event.sigev_signo = SIGPROF;
  event.sigev_notify = main_only ? SIGEV_THREAD_ID : SIGEV_SIGNAL;
  event._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  if (timer_create(main_only ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID, &event, &timer) != 0)
    return;
  const struct itimerspec every_ms = {{0, 1000000}, {0, 1000000}};
  timer_settime(timer, 0, &every_ms, NULL);
}

__attribute__((destructor)) static void write_profile(void) {
  const char* path = getenv("KOSMOS_PROFILE");
  if (!path || !samples) return;
  timer_delete(timer);
  size_t n = atomic_load(&taken);
  if (n > kMaxSamples) n = kMaxSamples;
  FILE* out = fopen(path, "w");
  if (!out) return;
  fprintf(out, "# milliseconds frames... (%zu samples)\n", n);
  for (size_t i = 0; i < n; ++i) {
    fprintf(out, "%zu", samples[i].milliseconds);
    for (int k = 0; k < samples[i].depth; ++k)
      fprintf(out, " %lx", (unsigned long)samples[i].frame[k]);
    fputc('\n', out);
  }
  fprintf(out, "# maps\n");
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps) {
    char line[4096];
    while (fgets(line, sizeof line, maps)) fputs(line, out);
    fclose(maps);
  }
  fclose(out);
}
