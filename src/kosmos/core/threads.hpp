// Host threads that Kosmos starts beside Kokkos' own (file writers, pinned allocations).
#pragma once

#include <thread>
#include <utility>

namespace kosmos {
namespace Impl {

// Gives the calling thread the CPUs the process may run on (its OpenMP places, or its CPUs when
// Kosmos was loaded). The OpenMP binding Kokkos asks for (OMP_PROC_BIND; the kosmos tool sets
// spread) pins the initial thread to one core, and a thread it starts inherits that one core: the
// dust CLI's writer threads all ran on the core of the thread feeding the GPU. No-op where thread
// affinity is not supported.
void use_process_cpus();

// Marks the calling thread as background work (SCHED_IDLE on Linux): it runs on CPU time that no
// other thread of the machine wants, so it never delays the thread that drives the GPU or an
// OpenMP team. No-op elsewhere.
void run_as_background();

// A std::thread running f() on the process' CPUs (see use_process_cpus).
template <class F>
std::thread start_helper_thread(F&& f) {
  return std::thread([f = std::forward<F>(f)]() mutable {
    use_process_cpus();
    f();
  });
}
}  // namespace Impl
}  // namespace kosmos
