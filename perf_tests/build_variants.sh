#!/usr/bin/env bash
# Builds build/variants.tar.xz, the archive that device_round29/30/32/33.sh carry, on the development
# VM: this tree's CUDA kosmos tool as build/variants/BASE, the tool with parts of PATCH applied as
# build/variants/NAME, and the CUDA dust tests of the whole patch, packed with the shared libraries
# that `scripts/device.sh ship` carries (one archive: the tools' device code compresses once).
#   perf_tests/build_variants.sh PATCH BASE NAME[:EXCLUDED[,EXCLUDED...]] ...
# EXCLUDED are paths of PATCH that the variant leaves out. Round 33's archive:
#   perf_tests/build_variants.sh perf_tests/patches/round33-pt-emission.patch v32b \
#     v36:src/kosmos/dust/impl/stochastic_emission.hpp,cuda_specializations/kosmos/dust/stochastic_cuda.hpp \
#     v36wu:src/kosmos/dust/impl/stochastic_emission.hpp \
#     v37:cuda_specializations/kosmos/dust/stochastic_cuda.hpp v37wu
# A CUDA build from nothing takes about 35 minutes on 2 cores (the library); then each variant a
# few. The tree must have no uncommitted changes: each variant is applied and taken back.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
patch=$(realpath "${1:?build_variants: name the patch}")
base=${2:?build_variants: name this tree\'s tool}
shift 2
git diff --quiet && git diff --cached --quiet ||
  { echo "build_variants: commit or stash the tree's changes first"; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
scripts/device.sh ship kosmos_cli
tar -xJf build/shipped.tar.xz -C "$stage"
mkdir -p "$stage/build/variants"
cp build/cuda/src/cli/kosmos "$stage/build/variants/$base"
patch_apply() {  # forward|reverse EXCLUDED...
  local args=()
  [ "$1" = reverse ] && args+=(-R)
  shift
  for path in "$@"; do args+=("--exclude=$path"); done
  git apply "${args[@]}" "$patch"
}
build() {  # TARGET EXCLUDED...: builds TARGET with the patch applied, less EXCLUDED, then takes it back
  local target=$1 status=0
  shift
  patch_apply forward "$@"
  cmake --build build/cuda -j "$(nproc)" --target "$target" || status=$?
  patch_apply reverse "$@"
  return "$status"
}
for variant in "$@"; do
  name=${variant%%:*}
  excluded=()
  [ "$variant" != "$name" ] && IFS=, read -r -a excluded <<<"${variant#*:}"
  build kosmos_cli "${excluded[@]}"
  cp build/cuda/src/cli/kosmos "$stage/build/variants/$name"
done
build kosmos_dust_tests
mkdir -p "$stage/build/cuda/unit_tests/dust"
cp build/cuda/unit_tests/dust/kosmos_dust_tests "$stage/build/cuda/unit_tests/dust/"
XZ_OPT="-T0 --lzma2=preset=9,dict=192MiB" tar -cJf build/variants.tar.xz -C "$stage" build
du -h build/variants.tar.xz
