// What Kosmos runs on: Kokkos version, backend, device and threads. Reported by `kosmos info`
// and stored in every benchmark's context.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kosmos {

struct Configuration {
  std::string kosmos_version;
  std::string kokkos_version;
  std::string backend;           // default execution space, e.g. "Cuda", "OpenMP"
  std::string host_backend;      // default host execution space
  std::string device;            // GPU name, or the CPU model for host backends
  int concurrency = 0;           // default execution space's concurrency
  int host_threads = 0;          // default host execution space's concurrency
  std::string openmp_binding;    // OMP_PROC_BIND/OMP_PLACES in effect (OpenMP builds)
  std::vector<std::string> enabled_spaces;
  std::string features;  // optional parts of the build (kosmos/config.hpp), comma-separated

  // (key, value) pairs in a stable order, for printing and benchmark contexts.
  std::vector<std::pair<std::string, std::string>> entries() const;
};

// Requires Kokkos to be initialized.
Configuration current_configuration();
}  // namespace kosmos
