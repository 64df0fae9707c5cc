#include "common.hpp"
namespace kosmos_python {
void bind_series(py::module_&) {}
}  // namespace kosmos_python
