#!/usr/bin/env bash
# Builds build/variants.tar.xz, the archive that device_round29/30/32/33.sh carry, on the development
# VM: this tree's CUDA kosmos tool as build/variants/BASE, and for each variant the tool with its
# patches applied (less the paths it leaves out) as build/variants/NAME; the CUDA dust tests of the
# last variant; packed with the shared libraries that `scripts/device.sh ship` carries (one archive:
# the tools' device code compresses once).
#   perf_tests/build_variants.sh BASE NAME=PATCH[+PATCH...][@LEFT_OUT[,LEFT_OUT...]] ... NAME=@COMMIT ...
# (NAME=@COMMIT: the tool of an earlier commit, its src/ and cuda_specializations/ checked out for
# the build and put back after.)
# Round 33's archive (p = perf_tests/patches/round33, in the commit before the patches were merged):
#   perf_tests/build_variants.sh v32b v36=$p-pt-emission.patch@src/kosmos/dust/impl/stochastic_emission.hpp \
#     v36wu=$p-pt-emission.patch+$p-walk-reciprocal.patch@src/kosmos/dust/impl/stochastic_emission.hpp \
#     v37=$p-pt-emission.patch v37wu=$p-pt-emission.patch+$p-walk-reciprocal.patch
# Round 34's (p = perf_tests/patches, in the commit before round 34's merge):
#   perf_tests/build_variants.sh v38 v38l=$p/lineinfo.patch v39=$p/round34-photon-scratch.patch \
#     v40=$p/round34-emission-team.patch v41=$p/round34-photon-scratch.patch+$p/round34-emission-team.patch \
#     v42=$p/round34-short-sources.patch v43=$p/round34-short-sources.patch+$p/round34-emission-team.patch
# A CUDA build from nothing takes about 35 minutes on 2 cores (the library); then each variant a
# few. The tree must have no uncommitted changes: each variant is applied and taken back.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
base=${1:?build_variants: name the base tool}
shift
[ $# -gt 0 ] || { echo "build_variants: name at least one variant"; exit 2; }
git diff --quiet && git diff --cached --quiet ||
  { echo "build_variants: commit or stash the tree's changes first"; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
scripts/device.sh ship kosmos_cli
tar -xJf build/shipped.tar.xz -C "$stage"
mkdir -p "$stage/build/variants"
cp build/cuda/src/cli/kosmos "$stage/build/variants/$base"
# VARIANT TARGET: builds TARGET with the variant's patches applied, then takes them back.
build() {
  local spec=${1#*=} target=$2 status=0 patches=() left_out=() args=() applied=() p
  if [ "${spec:0:1}" = @ ]; then
    git restore --source="${spec#@}" -- src cuda_specializations || return 1
    cmake --build build/cuda -j "$(nproc)" --target "$target" || status=$?
    git restore --source=HEAD -- src cuda_specializations
    return "$status"
  fi
  IFS=+ read -r -a patches <<<"${spec%%@*}"
  [ "$spec" != "${spec%%@*}" ] && IFS=, read -r -a left_out <<<"${spec#*@}"
  for p in "${left_out[@]}"; do args+=("--exclude=$p"); done
  for p in "${patches[@]}"; do
    git apply "${args[@]}" "$p" || { status=1; break; }
    applied=("$p" "${applied[@]}")
  done
  [ "$status" = 0 ] && { cmake --build build/cuda -j "$(nproc)" --target "$target" || status=$?; }
  for p in "${applied[@]}"; do git apply -R "${args[@]}" "$p"; done
  return "$status"
}
for variant in "$@"; do
  build "$variant" kosmos_cli
  cp build/cuda/src/cli/kosmos "$stage/build/variants/${variant%%=*}"
done
build "${!#}" kosmos_dust_tests
mkdir -p "$stage/build/cuda/unit_tests/dust"
cp build/cuda/unit_tests/dust/kosmos_dust_tests "$stage/build/cuda/unit_tests/dust/"
XZ_OPT="-T0 --lzma2=preset=9,dict=192MiB" tar -cJf build/variants.tar.xz -C "$stage" build
du -h build/variants.tar.xz
