#!/usr/bin/env bash
# Fetches, patches and builds Kosmos' dependencies from Debian source packages.
#
#   scripts/deps.sh fetch              download trilinos/googletest/benchmark sources (cached)
#   scripts/deps.sh pack DIR           bundle the fetched sources into DIR (to carry to a GPU box)
#   scripts/deps.sh kokkos BACKEND     build + install Kokkos and Kokkos Kernels for BACKEND
#                                      (openmp | cuda | serial); prints the install prefix
#   scripts/deps.sh gtest              build + install GoogleTest and Google Benchmark from source
#   scripts/deps.sh system             install the host's Debian build packages (needs root)
#
# Everything lands under KOSMOS_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/kosmos), never in
# the clone. A bundle made by `pack` is used instead of apt when KOSMOS_DEPS_BUNDLE points at it.
# Environment: KOSMOS_CUDA_ARCH (default HOPPER90), KOSMOS_JOBS (default nproc),
#   KOSMOS_CXX_STANDARD (17 or 20, default 17),
#   KOSMOS_KOKKOS_SOURCE, KOSMOS_KOKKOS_KERNELS_SOURCE: build that Kokkos / Kokkos Kernels (a
#   source tarball or an unpacked source directory, e.g. kokkos-4.6.01.tar.gz) instead of the
#   Debian 3.4.01 default. Patches in patches/kokkos-MAJOR.MINOR/ are applied to tarballs.
#   KOSMOS_KOKKOS_DEPRECATED_CODE (ON or OFF, default ON): OFF builds Kokkos 4.x without its
#   deprecated 4.x API (Kokkos_ENABLE_DEPRECATED_CODE_4=OFF), the API Kokkos 5 keeps.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
cache=${KOSMOS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kosmos}
jobs=${KOSMOS_JOBS:-$(nproc)}
cuda_arch=${KOSMOS_CUDA_ARCH:-HOPPER90}
bundle=${KOSMOS_DEPS_BUNDLE:-}
debian_kokkos_version=3.4.01
cxx_standard=${KOSMOS_CXX_STANDARD:-17}
deprecated_code=${KOSMOS_KOKKOS_DEPRECATED_CODE:-ON}
# Kokkos' static libraries are linked into the Python extension module (a shared object): its
# objects must be position independent (the OpenMP backend's thread-local variables otherwise use
# the local-exec TLS model, which a shared object cannot hold). Part of the install's stamp.
position_independent=-DCMAKE_POSITION_INDEPENDENT_CODE=ON

log() { printf '[kosmos deps] %s\n' "$*" >&2; }
die() { printf '[kosmos deps] error: %s\n' "$*" >&2; exit 1; }

# apt configuration that reads deb-src entries derived from the machine's own sources,
# kept in the cache so the system's apt state is left alone.
apt_opts=()
setup_apt_sources() {
  local etc="$cache/apt/etc" lists="$cache/apt/lists"
  mkdir -p "$etc" "$lists/partial"
  : >"$etc/kosmos-src.sources"
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    sed -E 's/^Types:.*$/Types: deb-src/' "$f" >>"$etc/kosmos-src.sources"
    echo >>"$etc/kosmos-src.sources"
  done
  : >"$etc/kosmos-src.list"
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    sed -nE 's/^[[:space:]]*deb[[:space:]]+/deb-src /p' "$f" >>"$etc/kosmos-src.list"
  done
  [ -s "$etc/kosmos-src.sources" ] || [ -s "$etc/kosmos-src.list" ] ||
    die "no Debian sources found in /etc/apt to derive deb-src entries from"
  apt_opts=(-o "Dir::Etc::SourceList=$etc/kosmos-src.list" -o "Dir::Etc::SourceParts=$etc"
            -o "Dir::State::Lists=$lists" -o "APT::Sandbox::User=root")
  apt-get "${apt_opts[@]}" -qq update >&2
}

# Source trees: $cache/src/{kokkos,kokkos-kernels,googletest,benchmark}, patched.
fetch() {
  local src="$cache/src" stamp="$cache/src/.fetched-$(patch_hash)"
  [ -f "$stamp" ] && return 0
  local dl="$cache/downloads"
  mkdir -p "$dl"
  if [ -n "$bundle" ]; then
    log "using carried sources in $bundle"
    cp "$bundle"/*.tar.* "$dl"/
  elif [ -z "$(first_file "$dl"/trilinos_13.2.0.orig.tar.*)" ] ||
       [ -z "$(first_file "$dl"/googletest_*.orig.tar.*)" ] ||
       [ -z "$(first_file "$dl"/benchmark_*.orig.tar.*)" ]; then
    command -v apt-get >/dev/null || die "apt-get not found and no KOSMOS_DEPS_BUNDLE given"
    setup_apt_sources
    log "downloading Debian source packages trilinos, googletest, benchmark"
    (cd "$dl" && apt-get "${apt_opts[@]}" source --download-only trilinos=13.2.0-4 googletest benchmark >&2) ||
      (cd "$dl" && apt-get "${apt_opts[@]}" source --download-only trilinos googletest benchmark >&2)
  fi
  rm -rf "$src"
  mkdir -p "$src"
  local tri
  tri=$(first_file "$dl"/trilinos_13.2.0.orig.tar.* "$dl"/kosmos-kokkos-sources.tar.*)
  [ -n "$tri" ] || die "no trilinos 13.2 source in $dl"
  log "extracting packages/kokkos and packages/kokkos-kernels from $(basename "$tri")"
  tar -xf "$tri" -C "$src" --wildcards '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
  mv "$src"/*/packages/kokkos "$src"/*/packages/kokkos-kernels "$src"/
  grep -q "Kokkos_VERSION_MINOR 4" "$src/kokkos/CMakeLists.txt" || die "extracted Kokkos is not 3.4"
  local p
  for p in "$root"/patches/kokkos/*.patch; do
    log "applying $(basename "$p")"
    if command -v patch >/dev/null; then
      patch -s -p1 -d "$src/kokkos" <"$p"
    else
      (cd "$src/kokkos" && git apply -p1 "$p")
    fi
  done
  local pkg
  for pkg in googletest benchmark; do
    mkdir -p "$src/$pkg"
    tar -xf "$(first_file "$dl"/${pkg}_*.orig.tar.*)" -C "$src/$pkg" --strip-components=1
  done
  find "$src" -maxdepth 1 -mindepth 1 -name 'Trilinos*' -exec rm -rf {} +
  touch "$stamp"
}

# First existing file among the given globs (empty when none).
first_file() {
  local f
  for f in "$@"; do [ -e "$f" ] && { echo "$f"; return 0; }; done
  return 0
}

patch_hash() { cat "$root"/patches/kokkos/*.patch | sha1sum | cut -c1-10; }

# Small tarball of exactly the sources the build needs (Kokkos, Kokkos Kernels, GoogleTest,
# Benchmark), for machines without apt or network.
pack() {
  local out=${1:?pack needs a directory}
  fetch
  mkdir -p "$out"
  local tmp
  tmp=$(mktemp -d)
  local dl="$cache/downloads"
  tar -xf "$(first_file "$dl"/trilinos_13.2.0.orig.tar.* "$dl"/kosmos-kokkos-sources.tar.*)" \
    -C "$tmp" --wildcards '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
  mv "$tmp"/* "$tmp/Trilinos-kokkos-only"
  tar -czf "$out/kosmos-kokkos-sources.tar.gz" -C "$tmp" Trilinos-kokkos-only
  rm -rf "$tmp"
  cp "$dl"/googletest_*.orig.tar.* "$dl"/benchmark_*.orig.tar.* "$out"/
  log "packed sources into $out"
}

cmake_build() { # src build prefix args...
  local src=$1 build=$2 prefix=$3
  shift 3
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" "$@" >"$build.configure.log" 2>&1 ||
    { tail -n 40 "$build.configure.log" >&2; die "configure of $src failed (log: $build.configure.log)"; }
  cmake --build "$build" -j "$jobs" >"$build.build.log" 2>&1 ||
    { grep -m 20 -B2 -A8 'error' "$build.build.log" >&2 || tail -n 40 "$build.build.log" >&2; die "build of $src failed (log: $build.build.log)"; }
  cmake --install "$build" >/dev/null
}

# Version "MAJOR.MINOR.PATCH" (patch two digits) of a Kokkos or Kokkos Kernels source tree.
source_version() {
  local cml=$1/CMakeLists.txt major minor patch
  major=$(sed -nE 's/.*[Ss][Ee][Tt]\((Kokkos|KokkosKernels)_VERSION_MAJOR ([0-9]+)\).*/\2/p' "$cml" | head -n1)
  minor=$(sed -nE 's/.*[Ss][Ee][Tt]\((Kokkos|KokkosKernels)_VERSION_MINOR ([0-9]+)\).*/\2/p' "$cml" | head -n1)
  patch=$(sed -nE 's/.*[Ss][Ee][Tt]\((Kokkos|KokkosKernels)_VERSION_PATCH ([0-9]+)\).*/\2/p' "$cml" | head -n1)
  [ -n "$major" ] && [ -n "$minor" ] && [ -n "$patch" ] || die "no version found in $cml"
  printf '%s.%s.%02d\n' "$major" "$minor" "$((10#$patch))"
}

# Source tree for a user-given Kokkos or Kokkos Kernels: a directory is used as it is; a tarball
# is unpacked once into the cache and patched with patches/kokkos-MAJOR.MINOR/ (Kokkos only).
source_tree() { # name spec
  local name=$1 spec=$2
  if [ -d "$spec" ]; then
    [ -f "$spec/CMakeLists.txt" ] || die "$spec is not a $name source directory (no CMakeLists.txt)"
    (cd "$spec" && pwd)
    return 0
  fi
  [ -f "$spec" ] || die "$name source '$spec' is neither a directory nor a file"
  local id dir
  id=$( (sha1sum "$spec"; cat "$root"/patches/kokkos-*/*.patch 2>/dev/null) | sha1sum | cut -c1-10)
  dir="$cache/src/$name-$id"
  if [ ! -f "$dir/.unpacked" ]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    tar -xf "$spec" -C "$dir" --strip-components=1 || die "cannot unpack $spec"
    [ -f "$dir/CMakeLists.txt" ] || die "$spec does not hold a $name source tree"
    if [ "$name" = kokkos ]; then
      local v p
      v=$(source_version "$dir")
      for p in "$root"/patches/kokkos-"${v%.*}"/*.patch; do
        [ -f "$p" ] || continue
        log "applying $(basename "$p") to Kokkos $v"
        patch -s -p1 -d "$dir" <"$p"
      done
    fi
    touch "$dir/.unpacked"
  fi
  echo "$dir"
}

kokkos() {
  local backend=${1:?kokkos needs a backend: openmp, cuda or serial}
  local kokkos_src kernels_src version stamp
  case "$cxx_standard" in 17 | 20) ;; *) die "KOSMOS_CXX_STANDARD must be 17 or 20, not '$cxx_standard'" ;; esac
  if [ -n "${KOSMOS_KOKKOS_SOURCE:-}${KOSMOS_KOKKOS_KERNELS_SOURCE:-}" ]; then
    [ -n "${KOSMOS_KOKKOS_SOURCE:-}" ] && [ -n "${KOSMOS_KOKKOS_KERNELS_SOURCE:-}" ] ||
      die "set both KOSMOS_KOKKOS_SOURCE and KOSMOS_KOKKOS_KERNELS_SOURCE (Kokkos Kernels must match Kokkos)"
    kokkos_src=$(source_tree kokkos "$KOSMOS_KOKKOS_SOURCE")
    kernels_src=$(source_tree kokkos-kernels "$KOSMOS_KOKKOS_KERNELS_SOURCE")
    version=$(source_version "$kokkos_src")
    stamp=$(echo "$kokkos_src $kernels_src $position_independent" | sha1sum | cut -c1-10)
  else
    fetch
    kokkos_src=$cache/src/kokkos
    kernels_src=$cache/src/kokkos-kernels
    version=$debian_kokkos_version
    stamp=$(echo "$(patch_hash) $position_independent" | sha1sum | cut -c1-10)
  fi
  local id="$backend"
  [ "$backend" = cuda ] && id="cuda-$(echo "$cuda_arch" | tr 'A-Z' 'a-z')"
  [ "$cxx_standard" = 17 ] || id="$id-cxx$cxx_standard"
  case "$deprecated_code" in
    ON | on | 1) ;;
    OFF | off | 0)
      [ "${version%%.*}" -ge 4 ] || die "KOSMOS_KOKKOS_DEPRECATED_CODE=OFF needs Kokkos 4 or newer (this is $version)"
      id="$id-nodeprecated" ;;
    *) die "KOSMOS_KOKKOS_DEPRECATED_CODE must be ON or OFF, not '$deprecated_code'" ;;
  esac
  local prefix="$cache/install/kokkos-$version-$id-$stamp"
  if [ -f "$prefix/.complete" ]; then echo "$prefix"; return 0; fi
  local args=(-DCMAKE_CXX_STANDARD="$cxx_standard" -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_TESTS=OFF
              "$position_independent")
  [[ "$id" == *-nodeprecated ]] && args+=(-DKokkos_ENABLE_DEPRECATED_CODE_4=OFF)
  case "$backend" in
    openmp) args+=(-DKokkos_ENABLE_OPENMP=ON) ;;
    serial) ;;
    cuda)
      command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || die "CUDA backend needs nvcc"
      export PATH="$PATH:/usr/local/cuda/bin"
      export NVCC_WRAPPER_DEFAULT_ARCH=$(arch_to_sm "$cuda_arch")
      args+=(-DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_CONSTEXPR=ON
             "-DKokkos_ARCH_${cuda_arch}=ON" "-DCMAKE_CXX_COMPILER=$kokkos_src/bin/nvcc_wrapper")
      # 3.4 needs device lambdas switched on; 4.x always has them and dropped the option.
      [ "${version%%.*}" -ge 4 ] || args+=(-DKokkos_ENABLE_CUDA_LAMBDA=ON) ;;
    *) die "unknown backend '$backend' (expected openmp, cuda or serial)" ;;
  esac
  local build="$cache/build/kokkos-$version-$id"
  rm -rf "$build" "$prefix"
  mkdir -p "$cache/build"
  log "building Kokkos $version ($id, C++$cxx_standard) into $prefix"
  cmake_build "$kokkos_src" "$build" "$prefix" "${args[@]}"
  log "building Kokkos Kernels $(source_version "$kernels_src") ($id)"
  local kk_args=(-DCMAKE_CXX_STANDARD="$cxx_standard" -DKokkos_ROOT="$prefix" -DKokkosKernels_ADD_DEFAULT_ETI=OFF
                 "$position_independent"
                 -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF)
  if [ "$backend" = cuda ]; then
    kk_args+=(-DKokkosKernels_ENABLE_TPL_CUBLAS=ON "-DCMAKE_CXX_COMPILER=$prefix/bin/nvcc_wrapper"
              "-DCMAKE_PROJECT_INCLUDE=$root/cmake/KosmosFindCUDAToolkit.cmake")
  fi
  cmake_build "$kernels_src" "$build-kernels" "$prefix" "${kk_args[@]}"
  rm -rf "$build" "$build-kernels"
  if [ "$backend" = cuda ]; then
    # The installed wrapper compiles for the arch Kokkos was built for unless told otherwise
    # (CMake's compiler check runs it without -arch; CUDA 13 rejects the old defaults).
    sed -i -E "s/NVCC_WRAPPER_DEFAULT_ARCH:-sm_[0-9]+/NVCC_WRAPPER_DEFAULT_ARCH:-$NVCC_WRAPPER_DEFAULT_ARCH/" \
      "$prefix/bin/nvcc_wrapper"
  fi
  touch "$prefix/.complete"
  echo "$prefix"
}

arch_to_sm() {
  case "$1" in
    HOPPER90) echo sm_90 ;; AMPERE80) echo sm_80 ;; AMPERE86) echo sm_86 ;;
    VOLTA70) echo sm_70 ;; TURING75) echo sm_75 ;;
    *) die "unsupported KOSMOS_CUDA_ARCH '$1' (HOPPER90, AMPERE80, AMPERE86, TURING75, VOLTA70)" ;;
  esac
}

# GoogleTest + Google Benchmark from the Debian sources, for machines without the -dev packages.
gtest() {
  fetch
  local prefix="$cache/install/gtest-benchmark"
  if [ -f "$prefix/.complete" ]; then echo "$prefix"; return 0; fi
  mkdir -p "$cache/build"
  log "building GoogleTest and Google Benchmark into $prefix"
  cmake_build "$cache/src/googletest" "$cache/build/googletest" "$prefix" -DBUILD_GMOCK=OFF
  cmake_build "$cache/src/benchmark" "$cache/build/benchmark" "$prefix" -DBENCHMARK_ENABLE_TESTING=OFF \
    -DBENCHMARK_ENABLE_GTEST_TESTS=OFF -DBENCHMARK_ENABLE_WERROR=OFF
  touch "$prefix/.complete"
  echo "$prefix"
}

# Debian build packages on the host (CI and developer machines).
system() {
  # clang: CI's sanitizer and libFuzzer stage. ccache: scripts/test.sh. libopenmpi-dev +
  # openmpi-bin: KOSMOS_ENABLE_MPI (on when found) and its mpiexec tests.
  local pkgs=(cmake g++ make patch libgtest-dev libbenchmark-dev libmpfr-dev libgmp-dev libhdf5-dev
              pybind11-dev python3-dev python3-numpy python3-matplotlib python3-pytest clang
              libopenmpi-dev openmpi-bin ccache)
  local missing=()
  local p
  for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get -qq update >&2
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -qq install -y --no-install-recommends "${missing[@]}" >&2
}

cmd=${1:-}
shift || true
case "$cmd" in
  fetch) fetch ;;
  pack) pack "$@" ;;
  kokkos) kokkos "$@" ;;
  gtest) gtest ;;
  system) system ;;
  *) sed -n '2,12p' "$0" >&2; exit 2 ;;
esac
