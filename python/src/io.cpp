// kosmos._kosmos.io: the datasets and attributes of Kosmos' HDF5 outputs, read through the
// library's own reader (its shape, size and type checks; no h5py needed).
#include "common.hpp"

#include <kosmos/config.hpp>
#if KOSMOS_HAVE_HDF5
#include <kosmos/core/hdf5.hpp>
#endif

namespace kosmos_python {
namespace {
#if KOSMOS_HAVE_HDF5
py::array_t<double> read_dataset(const std::string& path, const std::string& name) {
  kosmos::io::H5Reader in(path);
  std::vector<std::size_t> dims;
  auto values = in.read<double>(name, &dims);
  std::vector<py::ssize_t> shape(dims.begin(), dims.end());
  py::array_t<double> out(shape);
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

py::object read_attribute(const std::string& path, const std::string& object,
                          const std::string& key) {
  kosmos::io::H5Reader in(path);
  if (!in.has_attribute(object, key))
    throw kosmos::file_error(path + ": no attribute '" + key + "' on '" + object + "'");
  // The type is tried in the order Kosmos writes them: text, then number.
  try {
    return py::str(in.attribute_string(object, key));
  } catch (const kosmos::file_error&) {
  }
  return py::float_(in.attribute_double(object, key));
}
#endif
}  // namespace

void bind_io(py::module_& m) {
  auto io = m.def_submodule("io", "HDF5 outputs of Kosmos, read by the library's reader");
  io.attr("hdf5") = bool(KOSMOS_HAVE_HDF5);
#if KOSMOS_HAVE_HDF5
  io.def(
      "has",
      [](const std::string& path, const std::string& name) {
        return kosmos::io::H5Reader(path).has(name);
      },
      py::arg("path"), py::arg("name"));
  io.def("read", &read_dataset, py::arg("path"), py::arg("name"),
         "A dataset as a float64 array of its shape.");
  io.def(
      "read_strings",
      [](const std::string& path, const std::string& name) {
        return kosmos::io::H5Reader(path).read_strings(name);
      },
      py::arg("path"), py::arg("name"));
  io.def("attribute", &read_attribute, py::arg("path"), py::arg("object"), py::arg("key"),
         "An attribute: str for text, float for numbers.");
#endif
}
}  // namespace kosmos_python
