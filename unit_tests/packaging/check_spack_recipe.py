"""Loads the Spack recipe against a minimal stand-in for Spack's package API (Spack itself is not
a Debian package) and checks what a packager relies on: the recipe parses, declares the variants
cuda, openmp, mpi, hdf5 and python, and maps them to the CMake options Kosmos reads."""
import contextlib
import importlib.util
import sys
import types

recipe_path = sys.argv[1]
declared = {"variant": [], "depends_on": [], "conflicts": [], "version": []}


def recorder(kind):
    def record(*args, **kwargs):
        declared[kind].append((args, kwargs))
    return record


class Spec:
    def __init__(self, variants):
        self.variants = variants

    def satisfies(self, constraint):
        return all(self.variants.get(token[1:]) == (token[0] == "+")
                   for token in constraint.split())

    def __getitem__(self, name):
        return types.SimpleNamespace(prefix=f"/prefix/{name}", kokkos_cxx="/prefix/kokkos/bin/nvcc_wrapper")


class CMakePackage:
    run_tests = False

    def __init__(self, spec):
        self.spec = spec

    @staticmethod
    def define(name, value):
        if isinstance(value, bool):
            value = "ON" if value else "OFF"
        return f"-D{name}={value}"

    def define_from_variant(self, name, variant):
        return self.define(name, self.spec.variants[variant])


class CudaPackage:
    cuda_arch_values = ("80", "90")


api = types.ModuleType("spack.package")
api.CMakePackage, api.CudaPackage = CMakePackage, CudaPackage
for kind in declared:
    setattr(api, kind, recorder(kind))
api.license = lambda *args, **kwargs: None
api.when = lambda *args, **kwargs: contextlib.nullcontext()
api.__all__ = [name for name in vars(api) if not name.startswith("_")]
sys.modules["spack"] = types.ModuleType("spack")
sys.modules["spack.package"] = api

spec = importlib.util.spec_from_file_location("kosmos_recipe", recipe_path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)

variants = {args[0] for args, _ in declared["variant"]}
missing = {"openmp", "mpi", "hdf5", "python"} - variants
assert not missing, f"the recipe lacks the variants {sorted(missing)}"
assert issubclass(module.Kosmos, CudaPackage), "the recipe must take its cuda variant from CudaPackage"

cases = [
    ({"cuda": True, "openmp": True, "mpi": True, "hdf5": True, "python": False}, "CUDA"),
    ({"cuda": False, "openmp": True, "mpi": False, "hdf5": True, "python": True}, "OpenMP"),
    ({"cuda": False, "openmp": False, "mpi": False, "hdf5": False, "python": False}, "Serial"),
]
for variant_values, backend in cases:
    args = module.Kosmos(Spec(variant_values)).cmake_args()
    assert f"-DKOSMOS_BACKEND={backend}" in args, (variant_values, args)
    for option, variant in (("MPI", "mpi"), ("HDF5", "hdf5"), ("PYTHON", "python")):
        expected = f"-DKOSMOS_ENABLE_{option}={'ON' if variant_values[variant] else 'OFF'}"
        assert expected in args, (expected, args)
    assert ("-DCMAKE_CXX_COMPILER=/prefix/kokkos/bin/nvcc_wrapper" in args) == variant_values["cuda"], args
print(f"Spack recipe: variants {sorted(variants)} and their CMake options check out")
