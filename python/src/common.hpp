// Shared pieces of the Python bindings: the execution space, numpy arrays seen as Kokkos Views
// (wrapped without a copy where the execution space can read host memory, copied to and from
// device Views only where it cannot), argument checks that name the argument, and the registry of
// binding objects that hold Views (released before Kokkos::finalize).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace kosmos_python {
namespace py = pybind11;

using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;
// True on host backends (OpenMP, Serial): numpy memory is used in place.
constexpr bool host_accessible = Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible;

// "<where>: <argument> must be ...": the TypeError / ValueError raised for a bad array.
[[noreturn]] inline void bad_type(const std::string& where, const char* name,
                                  const std::string& what) {
  throw py::type_error(where + ": " + name + " " + what);
}
[[noreturn]] inline void bad_value(const std::string& where, const char* name,
                                   const std::string& what) {
  throw py::value_error(where + ": " + name + " " + what);
}

template <class T>
const char* dtype_name() {
  if (std::is_same<T, double>::value) return "float64";
  if (std::is_same<T, float>::value) return "float32";
  if (std::is_same<T, int>::value) return "int32";
  if (std::is_same<T, std::uint8_t>::value) return "uint8";
  return "?";
}

// A numpy array of T with `ndim` dimensions (any extents: -1) in C order, used as it is. Python
// sequences and scalars are converted (a new array); a numpy array of another dtype, rank or
// memory order is an error, never a silent copy.
// With `fortran`, Fortran order (column-major: a LayoutLeft View) instead.
template <class T>
py::array_t<T> as_array(py::handle obj, const std::string& where, const char* name, int ndim,
                        std::vector<py::ssize_t> shape = {}, bool fortran = false) {
  py::array_t<T> a;
  if (py::isinstance<py::array>(obj)) {
    auto arr = py::reinterpret_borrow<py::array>(obj);
    if (!arr.dtype().is(py::dtype::of<T>()))
      bad_type(where, name,
               std::string("must have dtype ") + dtype_name<T>() + ", not " +
                   std::string(py::str(arr.dtype())) + " (convert it with .astype(np." +
                   dtype_name<T>() + "))");
    if (!fortran && !(arr.flags() & py::array::c_style))
      bad_value(where, name, "must be C-contiguous (use np.ascontiguousarray)");
    if (fortran && !(arr.flags() & py::array::f_style))
      bad_value(where, name, "must be Fortran-ordered (use np.asfortranarray)");
    a = py::reinterpret_borrow<py::array_t<T>>(obj);
  } else {
    a = fortran
            ? py::array_t<T>(py::array_t<T, py::array::f_style | py::array::forcecast>::ensure(obj))
            : py::array_t<T>(
                  py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(obj));
    if (!a) bad_type(where, name, std::string("must be an array of ") + dtype_name<T>());
  }
  if (a.ndim() != ndim)
    bad_value(
        where, name,
        "must have " + std::to_string(ndim) + " dimension(s), not " + std::to_string(a.ndim()));
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (shape[d] >= 0 && a.shape(py::ssize_t(d)) != shape[d])
      bad_value(where, name,
                "has extent " + std::to_string(a.shape(py::ssize_t(d))) + " in dimension " +
                    std::to_string(d) + ", expected " + std::to_string(shape[d]));
  return a;
}

// A numpy array seen from the execution space: the array's own memory on host backends, a device
// copy elsewhere (filled from the array when `copy_in`; written back by to_host()).
template <class DataType, class Layout = Kokkos::LayoutRight>
struct Bound {
  using host_view = Kokkos::View<DataType, Layout, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
  using device_view = Kokkos::View<DataType, Layout, Memory>;
  host_view host;
  device_view device;

  template <class T>
  Bound(py::array_t<T>& a, bool copy_in) : host(make_host(a)) {
    if (host_accessible) {
      device = device_view(host.data(), host.layout());
    } else {
      using writable = Kokkos::View<typename device_view::non_const_data_type, Layout, Memory>;
      const writable copy(
          Kokkos::view_alloc(std::string("kosmos::python::array"), Kokkos::WithoutInitializing),
          host.layout());
      if (copy_in) Kokkos::deep_copy(copy, host);
      device = copy;
    }
  }
  // Outputs only (non-const DataType).
  void to_host() const {
    if (!host_accessible) Kokkos::deep_copy(host, device);
  }

 private:
  template <class T>
  static host_view make_host(py::array_t<T>& a) {
    static_assert(std::is_same<T, typename host_view::non_const_value_type>::value,
                  "kosmos_python::Bound: array and View value types differ");
    std::size_t n[8] = {KOKKOS_INVALID_INDEX, KOKKOS_INVALID_INDEX, KOKKOS_INVALID_INDEX,
                        KOKKOS_INVALID_INDEX, KOKKOS_INVALID_INDEX, KOKKOS_INVALID_INDEX,
                        KOKKOS_INVALID_INDEX, KOKKOS_INVALID_INDEX};
    for (py::ssize_t d = 0; d < a.ndim(); ++d) n[d] = std::size_t(a.shape(d));
    return host_view(a.mutable_data(), Layout(n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]));
  }
};

// A binding object that holds Views: released (its Views dropped) before Kokkos::finalize, so
// that no View outlives Kokkos; using it afterwards is an error.
class Resource {
 public:
  Resource();
  virtual ~Resource();
  Resource(const Resource&) = delete;
  Resource& operator=(const Resource&) = delete;
  virtual void release() = 0;
  void require_alive(const char* where) const;
  void mark_released() { released_ = true; }

 protected:
  bool released_ = false;
};
void release_all_resources();

void bind_kepler(py::module_& m);
void bind_nbody(py::module_& m);
void bind_series(py::module_& m);
void bind_dust(py::module_& m);
void bind_io(py::module_& m);
}  // namespace kosmos_python
