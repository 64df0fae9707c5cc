// A Kokkos profiling tool that times every kernel, deep copy and region to completion, for a
// machine without Nsight Systems (the GPU machine). It synchronizes the CUDA context (driver API,
// so it needs no CUDA headers) before and after each kernel and copy: kernels then run one at a
// time, and each one's wall is its own, launch included. Host kernels are timed the same way.
// At exit it prints, per name, the count and total seconds, largest first, to $KOSMOS_KERNEL_TIMES
// (default stderr).
//
//   gcc -O2 -shared -fPIC -o kernel_timer.so perf_tests/tools/kernel_timer.c -ldl -lpthread
//   KOKKOS_PROFILE_LIBRARY=$PWD/kernel_timer.so kosmos rv --batch ...   (Kokkos 3.x)
//   KOKKOS_TOOLS_LIBS=$PWD/kernel_timer.so ...                           (Kokkos 4.x)
//
// The serialization slows a program whose kernels overlap (several streams or host threads):
// read the table as where the device's time goes, not as the program's wall.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kMaxNames = 4096, kMaxOpen = 1 << 16, kMaxDepth = 64 };
struct entry {
  char name[192];
  long long count;
  double seconds;
};
static struct entry entries[kMaxNames];
static int n_entries;
static double open_start[kMaxOpen];  // per kernel id, its start
static int open_entry[kMaxOpen];
static uint64_t next_id;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread double region_start[kMaxDepth];
static __thread int region_entry[kMaxDepth];
static __thread int region_depth;
static __thread double copy_start;
static __thread int copy_entry;
static int (*synchronize_context)(void);  // cuCtxSynchronize, where libcuda is loaded

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void synchronize(void) {
  if (synchronize_context) synchronize_context();  // no context on this thread: an error, ignored
}

// The entry of `prefix` + `name`, made on first use (the caller holds the lock).
static int entry_of(const char* prefix, const char* name) {
  char key[192];
  snprintf(key, sizeof key, "%s%s", prefix, name);
  for (int i = 0; i < n_entries; ++i)
    if (strcmp(entries[i].name, key) == 0) return i;
  if (n_entries == kMaxNames) return kMaxNames - 1;  // the last entry takes the overflow
  strcpy(entries[n_entries].name, key);
  return n_entries++;
}

static void add(int e, double seconds) {
  pthread_mutex_lock(&lock);
  entries[e].count += 1;
  entries[e].seconds += seconds;
  pthread_mutex_unlock(&lock);
}

static void begin_kernel(const char* kind, const char* name, uint64_t* id) {
  synchronize();
  pthread_mutex_lock(&lock);
  *id = next_id++ % kMaxOpen;
  open_entry[*id] = entry_of(kind, name);
  pthread_mutex_unlock(&lock);
  open_start[*id] = now();
}

static void end_kernel(uint64_t id) {
  synchronize();
  add(open_entry[id], now() - open_start[id]);
}

void kokkosp_init_library(int load_sequence, uint64_t interface_version, uint32_t device_count,
                          void* device_info) {
  (void)load_sequence, (void)interface_version, (void)device_count, (void)device_info;
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!cuda) cuda = dlopen("libcuda.so.1", RTLD_NOW);
  if (cuda) *(void**)&synchronize_context = dlsym(cuda, "cuCtxSynchronize");
}

static int by_seconds(const void* a, const void* b) {
  const double x = ((const struct entry*)a)->seconds, y = ((const struct entry*)b)->seconds;
  return (x < y) - (x > y);
}

void kokkosp_finalize_library(void) {
  const char* path = getenv("KOSMOS_KERNEL_TIMES");
  FILE* out = path ? fopen(path, "w") : NULL;
  if (!out) out = stderr;
  qsort(entries, (size_t)n_entries, sizeof entries[0], by_seconds);
  fprintf(out, "%12s %12s  %s\n", "seconds", "count", "name");
  for (int i = 0; i < n_entries; ++i)
    fprintf(out, "%12.4f %12lld  %s\n", entries[i].seconds, entries[i].count, entries[i].name);
  if (out != stderr) fclose(out);
}

void kokkosp_begin_parallel_for(const char* name, uint32_t device, uint64_t* id) {
  (void)device;
  begin_kernel("for ", name, id);
}
void kokkosp_end_parallel_for(uint64_t id) {
  end_kernel(id);
}
void kokkosp_begin_parallel_reduce(const char* name, uint32_t device, uint64_t* id) {
  (void)device;
  begin_kernel("reduce ", name, id);
}
void kokkosp_end_parallel_reduce(uint64_t id) {
  end_kernel(id);
}
void kokkosp_begin_parallel_scan(const char* name, uint32_t device, uint64_t* id) {
  (void)device;
  begin_kernel("scan ", name, id);
}
void kokkosp_end_parallel_scan(uint64_t id) {
  end_kernel(id);
}

// Regions are not synchronized: their wall is what the calling thread saw.
void kokkosp_push_profile_region(const char* name) {
  if (region_depth >= kMaxDepth) return;
  pthread_mutex_lock(&lock);
  region_entry[region_depth] = entry_of("region ", name);
  pthread_mutex_unlock(&lock);
  region_start[region_depth++] = now();
}
void kokkosp_pop_profile_region(void) {
  if (region_depth == 0) return;
  --region_depth;
  add(region_entry[region_depth], now() - region_start[region_depth]);
}

struct space_handle {
  char name[64];
};
void kokkosp_begin_deep_copy(struct space_handle dst, const char* dst_name, const void* dst_ptr,
                             struct space_handle src, const char* src_name, const void* src_ptr,
                             uint64_t size) {
  (void)dst_ptr, (void)src_ptr, (void)size, (void)src_name;
  char key[160];
  snprintf(key, sizeof key, "%s <- %s (%s)", dst.name, src.name, dst_name);
  synchronize();
  pthread_mutex_lock(&lock);
  copy_entry = entry_of("copy ", key);
  pthread_mutex_unlock(&lock);
  copy_start = now();
}
void kokkosp_end_deep_copy(void) {
  synchronize();
  add(copy_entry, now() - copy_start);
}
