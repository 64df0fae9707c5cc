# Spack recipe for Kosmos. Kosmos has no download location yet: build it from a checkout,
#   spack repo add packaging/spack
#   spack develop --path <checkout> kosmos@main && spack add kosmos@main+cuda cuda_arch=90
#   spack install
from spack.package import *


class Kosmos(CMakePackage, CudaPackage):
    """Performance-portable (Kokkos) GPU kernels and workflows for radial-velocity fits, n-body
    ensembles, polynomial homotopies at power series and dust temperatures and SEDs."""

    license("BSD-3-Clause")

    version("main")

    variant("openmp", default=True, description="OpenMP host backend (the CPU baseline)")
    variant("mpi", default=False, description="Ensembles partitioned over MPI ranks")
    variant("hdf5", default=True, description="Read and write .h5 files")
    variant("python", default=False, description="The kosmos Python package (pybind11)")

    depends_on("cmake@3.19:", type="build")
    depends_on("kokkos@3.4.01:")
    depends_on("kokkos-kernels@3.4.01:")
    depends_on("kokkos+openmp", when="+openmp")
    depends_on("kokkos-kernels+openmp", when="+openmp")
    depends_on("kokkos+cuda+cuda_lambda+wrapper", when="+cuda")
    depends_on("kokkos-kernels+cuda", when="+cuda")
    for arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos cuda_arch={arch}", when=f"+cuda cuda_arch={arch}")
    depends_on("hdf5~mpi", when="+hdf5~mpi")
    depends_on("hdf5+mpi", when="+hdf5+mpi")
    depends_on("mpi", when="+mpi")
    depends_on("python@3.8:", when="+python")
    depends_on("py-pybind11", when="+python", type="build")
    depends_on("py-numpy", when="+python", type=("build", "run"))
    depends_on("py-matplotlib", when="+python", type="run")
    depends_on("googletest", type="test")
    depends_on("benchmark", type="test")
    depends_on("mpfr", type="test")

    conflicts("+cuda", when="cuda_arch=none", msg="Kosmos needs a cuda_arch for CUDA builds")

    def cmake_args(self):
        spec = self.spec
        if spec.satisfies("+cuda"):
            backend = "CUDA"
        elif spec.satisfies("+openmp"):
            backend = "OpenMP"
        else:
            backend = "Serial"
        args = [
            self.define("KOSMOS_BACKEND", backend),
            self.define("KOSMOS_FETCH_DEPENDENCIES", False),
            self.define("Kokkos_ROOT", spec["kokkos"].prefix),
            self.define_from_variant("KOSMOS_ENABLE_MPI", "mpi"),
            self.define_from_variant("KOSMOS_ENABLE_HDF5", "hdf5"),
            self.define_from_variant("KOSMOS_ENABLE_PYTHON", "python"),
            self.define("KOSMOS_ENABLE_TESTS", self.run_tests),
            self.define("KOSMOS_ENABLE_BENCHMARKS", False),
            self.define("KOSMOS_ENABLE_EXAMPLES", False),
        ]
        if spec.satisfies("+cuda"):
            args.append(self.define("CMAKE_CXX_COMPILER", spec["kokkos"].kokkos_cxx))
        return args
