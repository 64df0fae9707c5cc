// kosmos._kosmos: Kokkos' lifetime, the library's exceptions, and the per-module bindings.
#include "common.hpp"

#include <kosmos/core/configuration.hpp>
#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>

#include <cstdlib>

namespace kosmos_python {
namespace {
std::set<Resource*>& live_resources() {
  static std::set<Resource*> live;
  return live;
}
bool we_initialized = false;
}  // namespace

Resource::Resource() {
  live_resources().insert(this);
}
Resource::~Resource() {
  live_resources().erase(this);
}
void Resource::require_alive(const char* where) const {
  if (released_) throw std::runtime_error(std::string(where) + ": Kokkos was finalized");
}
void release_all_resources() {
  for (Resource* r : live_resources()) {
    r->release();
    r->mark_released();
  }
}

namespace {
// Kokkos is initialized once, on import, unless the process already did (then it is left to its
// owner to finalize). Arguments: Kokkos' own (e.g. "--kokkos-threads=4").
void initialize(const std::vector<std::string>& arguments) {
  if (Kokkos::is_initialized()) return;
  std::vector<std::string> args{"kosmos"};
  for (const auto& a : arguments) args.push_back(kosmos::Impl::kokkos_argument_spelling(a));
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = int(argv.size());
  Kokkos::initialize(argc, argv.data());
  we_initialized = true;
}

void finalize() {
  if (!we_initialized || !Kokkos::is_initialized()) return;
  release_all_resources();
  Kokkos::finalize();
  we_initialized = false;
}

py::dict configuration() {
  py::dict d;
  for (const auto& [key, value] : kosmos::current_configuration().entries())
    d[py::str(key)] = value;
  return d;
}
}  // namespace
}  // namespace kosmos_python

PYBIND11_MODULE(_kosmos, m) {
  namespace kp = kosmos_python;
  namespace py = pybind11;
  m.doc() = "Kosmos' C++ library (Kokkos) for Python: kepler, nbody, series, dust";
  // ValueError / OSError subclasses that carry the library's messages.
  py::register_exception<kosmos::invalid_input>(m, "InvalidInput", PyExc_ValueError);
  py::register_exception<kosmos::file_error>(m, "FileError", PyExc_OSError);
  m.def("initialize", &kp::initialize, py::arg("arguments") = std::vector<std::string>{},
        "Initializes Kokkos (done on import; no-op when Kokkos is already initialized).");
  m.def("finalize", &kp::finalize,
        "Releases every Kosmos object's Views and finalizes Kokkos if Kosmos initialized it "
        "(registered with atexit).");
  m.def("is_initialized", [] { return Kokkos::is_initialized(); });
  m.def("configuration", &kp::configuration,
        "What `kosmos info` prints: Kokkos version, backend, device, threads.");
  m.attr("backend") = Kokkos::DefaultExecutionSpace::name();
  m.attr("host_accessible") = kp::host_accessible;
  kp::bind_kepler(m);
  kp::bind_nbody(m);
  kp::bind_series(m);
  kp::bind_dust(m);
  kp::bind_io(m);
}
