#include <kosmos/core/threads.hpp>

#if defined(__linux__)
#include <sched.h>

#include <vector>
#endif
#if defined(_OPENMP)
#include <omp.h>
#endif

namespace kosmos {
namespace Impl {

#if defined(__linux__)
namespace {
// Read when Kosmos is loaded, before main. The OpenMP runtime may have bound the thread already
// (it binds at its own load when OMP_PROC_BIND is set); its places then name the CPUs instead.
struct LoadTimeCpus {
  cpu_set_t set;
  bool known;
  LoadTimeCpus() { known = ::sched_getaffinity(0, sizeof(set), &set) == 0; }
};
const LoadTimeCpus load_time_cpus;

// The CPUs of every OpenMP place (built by the runtime from the process' CPUs before it bound
// anything); false when no places are defined (no binding).
bool openmp_place_cpus([[maybe_unused]] cpu_set_t& set) {
  bool any = false;
#if defined(_OPENMP)
  CPU_ZERO(&set);
  for (int place = 0; place < omp_get_num_places(); ++place) {
    std::vector<int> ids(std::size_t(omp_get_place_num_procs(place)));
    omp_get_place_proc_ids(place, ids.data());
    for (int id : ids) {
      if (id < 0 || id >= CPU_SETSIZE) continue;
      CPU_SET(id, &set);
      any = true;
    }
  }
#endif
  return any;
}
}  // namespace

void use_process_cpus() {
  cpu_set_t set;
  if (openmp_place_cpus(set))
    ::sched_setaffinity(0, sizeof(set), &set);
  else if (load_time_cpus.known)
    ::sched_setaffinity(0, sizeof(load_time_cpus.set), &load_time_cpus.set);
}

void run_as_background() {
  const sched_param none{};
  ::sched_setscheduler(0, SCHED_IDLE, &none);
}
#else
void use_process_cpus() {}
void run_as_background() {}
#endif
}  // namespace Impl
}  // namespace kosmos
