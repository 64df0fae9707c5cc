// The pipeline's heating GEMM on a Cuda instance's own stream through cuBLAS (Kokkos Kernels 3.4's
// gemm runs on the default stream only, which would serialize the pipeline's instances). Included
// by kosmos/dust/pipeline.hpp only in CUDA builds with the specializations.
#pragma once

#include <kosmos/core/error.hpp>

#include <cublas_v2.h>
#include <Kokkos_Core.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kosmos {
namespace dust {
namespace Impl {

inline void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("kosmos::dust::EmissionPipeline (CUDA): ") + what +
                             " failed (cuBLAS status " + std::to_string(int(status)) + ")");
}

template <class T>
struct InstanceGemm<T, Kokkos::Cuda> {
  struct Handle {
    cublasHandle_t handle = nullptr;
    ~Handle() {
      if (handle) cublasDestroy(handle);
    }
  };
  std::shared_ptr<Handle> h = std::make_shared<Handle>();

  explicit InstanceGemm(const Kokkos::Cuda& space) {
    check_cublas(cublasCreate(&h->handle), "cublasCreate");
    check_cublas(cublasSetStream(h->handle, space.cuda_stream()), "cublasSetStream");
  }

  // c (m, n) = a(k, m)^T b(k, n); all LayoutLeft.
  template <class A, class B, class C>
  void operator()(const Kokkos::Cuda&, const A& a, const B& b, const C& c) const {
    const int m = int(c.extent(0)), n = int(c.extent(1)), k = int(a.extent(0));
    const T one = 1, zero = 0;
    cublasStatus_t status;
    if constexpr (std::is_same<T, float>::value) {
      status = cublasSgemm(h->handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a.data(),
                           int(a.stride(1)), b.data(), int(b.stride(1)), &zero, c.data(),
                           int(c.stride(1)));
    } else {
      status = cublasDgemm(h->handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a.data(),
                           int(a.stride(1)), b.data(), int(b.stride(1)), &zero, c.data(),
                           int(c.stride(1)));
    }
    check_cublas(status, "cublas gemm");
  }
};
}  // namespace Impl
}  // namespace dust
}  // namespace kosmos
