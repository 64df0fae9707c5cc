#include "common.hpp"
namespace kosmos_python {
void bind_dust(py::module_&) {}
}  // namespace kosmos_python
