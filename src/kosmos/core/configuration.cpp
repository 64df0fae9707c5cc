#include <kosmos/config.hpp>
#include <kosmos/core/compat.hpp>
#include <kosmos/core/configuration.hpp>

#include <cstdlib>
#include <fstream>

namespace kosmos {
namespace {
std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

std::string device_name() {
#if defined(KOKKOS_ENABLE_CUDA)
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, Kokkos::Cuda().cuda_device()) == cudaSuccess)
    return std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
           std::to_string(prop.minor) + ", " + std::to_string(prop.multiProcessorCount) + " SMs)";
  return "unknown CUDA device";
#else
  return cpu_model();
#endif
}

// The optional parts of this build, from the generated kosmos/config.hpp.
std::string build_features() {
  std::string features;
  const auto add = [&features](bool present, const char* name) {
    if (!present) return;
    if (!features.empty()) features += ',';
    features += name;
  };
  add(KOSMOS_HAVE_CUDA_SPECIALIZATIONS, "cuda-specializations");
  add(KOSMOS_HAVE_HDF5, "hdf5");
  add(KOSMOS_HAVE_MPI, "mpi");
  add(KOSMOS_HAVE_PYTHON, "python");
  return features;
}
}  // namespace

std::vector<std::pair<std::string, std::string>> Configuration::entries() const {
  std::string spaces;
  for (const auto& s : enabled_spaces) spaces += (spaces.empty() ? "" : ",") + s;
  return {{"kosmos_version", kosmos_version},
          {"kokkos_version", kokkos_version},
          {"backend", backend},
          {"host_backend", host_backend},
          {"device", device},
          {"concurrency", std::to_string(concurrency)},
          {"host_threads", std::to_string(host_threads)},
          {"enabled_spaces", spaces},
          {"features", features.empty() ? "-" : features},
          {"openmp_binding", openmp_binding.empty() ? "-" : openmp_binding}};
}

Configuration current_configuration() {
  Configuration c;
  c.kosmos_version = KOSMOS_VERSION_STRING;
  c.kokkos_version = kokkos_version_string();
  c.backend = Kokkos::DefaultExecutionSpace::name();
  c.host_backend = Kokkos::DefaultHostExecutionSpace::name();
  c.device = device_name();
  c.concurrency = Kokkos::DefaultExecutionSpace().concurrency();
  c.host_threads = Kokkos::DefaultHostExecutionSpace().concurrency();
  c.features = build_features();
#if defined(KOKKOS_ENABLE_SERIAL)
  c.enabled_spaces.emplace_back(Kokkos::Serial::name());
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  c.enabled_spaces.emplace_back(Kokkos::OpenMP::name());
  const char* bind = std::getenv("OMP_PROC_BIND");
  const char* places = std::getenv("OMP_PLACES");
  c.openmp_binding = std::string("OMP_PROC_BIND=") + (bind ? bind : "(unset)") +
                     " OMP_PLACES=" + (places ? places : "(unset)");
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  c.enabled_spaces.emplace_back(Kokkos::Cuda::name());
#endif
  return c;
}
}  // namespace kosmos
