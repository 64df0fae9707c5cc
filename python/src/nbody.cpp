#include "common.hpp"
namespace kosmos_python {
void bind_nbody(py::module_&) {}
}  // namespace kosmos_python
