// The CUDA specializations' one error check.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace kosmos {
namespace Impl {

// Throws std::runtime_error "<where>: <CUDA's message>" when `status` is an error.
inline void cuda_check(cudaError_t status, const char* where) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(where) + ": " + cudaGetErrorString(status));
}

// After a <<<...>>> launch: throws when the launch failed (bad configuration, too much shared
// memory, no kernel image for this GPU).
inline void cuda_check_launch(const char* where) { cuda_check(cudaGetLastError(), where); }
}  // namespace Impl
}  // namespace kosmos
