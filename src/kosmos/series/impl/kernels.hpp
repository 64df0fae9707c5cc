// Generic Kokkos kernels of the series module: convolution layers (one team per job and output
// tile, operands staged in team scratch with zero insertion), additions, scalings, staging.
#pragma once

#include <kosmos/core/multi_double.hpp>
#include <kosmos/series/polynomial.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kosmos {
namespace series {
namespace Impl {

template <int N, class ViewType>
KOKKOS_FORCEINLINE_FUNCTION MultiDouble<N> load_md(const ViewType& v, std::int64_t i, int limb0) {
  MultiDouble<N> r;
  KOSMOS_DEVICE_UNROLL
  for (int l = 0; l < N; ++l) r.limb[l] = v(i, limb0 + l);
  return r;
}
template <int N, class ViewType>
KOKKOS_FORCEINLINE_FUNCTION void store_md(const ViewType& v, std::int64_t i, int limb0,
                                          const MultiDouble<N>& x) {
  KOSMOS_DEVICE_UNROLL
  for (int l = 0; l < N; ++l) v(i, limb0 + l) = x.limb[l];
}
// Scratch arrays are limb-major: element t of limb l at base[l * stride + t].
template <int N>
KOKKOS_FORCEINLINE_FUNCTION MultiDouble<N> load_scratch(const double* base, int stride, int t) {
  MultiDouble<N> r;
  KOSMOS_DEVICE_UNROLL
  for (int l = 0; l < N; ++l) r.limb[l] = base[l * stride + t];
  return r;
}
template <int N>
KOKKOS_FORCEINLINE_FUNCTION void store_scratch(double* base, int stride, int t, const MultiDouble<N>& x) {
  KOSMOS_DEVICE_UNROLL
  for (int l = 0; l < N; ++l) base[l * stride + t] = x.limb[l];
}

// Tile length (coefficients per team) that keeps `arrays_per_tile` tiles of `limbs` doubles
// within `bytes`, at most d + 1 and at most `cap`.
inline int choose_tile(int degree, int limbs, int arrays_per_tile, std::size_t bytes, int cap) {
  const std::size_t per = std::size_t(arrays_per_tile) * std::size_t(limbs) * sizeof(double);
  std::size_t t = bytes / per;
  if (t > std::size_t(cap)) t = std::size_t(cap);
  if (t > std::size_t(degree) + 1) t = std::size_t(degree) + 1;
  return int(t < 1 ? 1 : t);
}

// out_j := in1_j * in2_j for the jobs [offset, offset + count): the zero-insertion convolution
// of Section 2, tiled. Team (job, tile) owns output coefficients k0 .. k0 + tile - 1; for each
// input chunk i0 .. i0 + tile - 1 it stages X = in1[i0 ..] and the window
// Y = in2[k0 - i0 - tile + 1 .. k0 - i0 + tile - 1] with zeros outside 0..d in scratch, then
// every coefficient k accumulates Z_k += X_t * Y_{k - i0 - t} over the chunk, stopping where the
// inserted zeros begin. With tile = d + 1 this is the paper's kernel (Y has d zeros before
// y_0 .. y_d), less the multiplications by those zeros.
template <int N, bool Complex, class ExecSpace>
struct ConvolutionLayer {
  static constexpr int L = Complex ? 2 * N : N;
  using Data = Kokkos::View<double**, Kokkos::LayoutLeft, ExecSpace>;
  using ConstData = Kokkos::View<const double**, Kokkos::LayoutLeft, ExecSpace>;
  using Jobs = Kokkos::View<const Job*, ExecSpace>;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;

  ConstData in1, in2;
  Data out;
  Jobs jobs;
  std::int64_t offset = 0;
  int degree = 0, tile = 1, tiles = 1;

  static std::size_t scratch_bytes(int tile) { return std::size_t(4) * tile * L * sizeof(double); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const int league = member.league_rank();
    const Job job = jobs(offset + league / tiles);
    const int k0 = (league % tiles) * tile;
    const std::int64_t n1 = degree + 1;
    const std::int64_t xo = job.x * n1, yo = job.y * n1, oo = job.out * n1;
    const int T = tile;
    double* X = static_cast<double*>(member.team_scratch(0).get_shmem(sizeof(double) * T * L));
    double* Y = static_cast<double*>(member.team_scratch(0).get_shmem(sizeof(double) * 2 * T * L));
    double* Z = static_cast<double*>(member.team_scratch(0).get_shmem(sizeof(double) * T * L));
    const ConstData a = in1, b = in2;
    const int d = degree;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, T * L), [&](const int t) { Z[t] = 0.0; });
    const int last = (k0 + T - 1 < d) ? k0 + T - 1 : d;
    for (int i0 = 0; i0 <= last; i0 += T) {
      member.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(member, T), [&](const int t) {
        const int i = i0 + t;
        for (int l = 0; l < L; ++l) X[l * T + t] = i <= d ? a(xo + i, l) : 0.0;
      });
      Kokkos::parallel_for(Kokkos::TeamThreadRange(member, 2 * T), [&](const int t) {
        const int yi = k0 - i0 - (T - 1) + t;
        const bool inside = yi >= 0 && yi <= d;
        for (int l = 0; l < L; ++l) Y[l * 2 * T + t] = inside ? b(yo + yi, l) : 0.0;
      });
      member.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(member, T), [&](const int kk) {
        // Terms with t > k - i0 read the inserted zeros: skip them (on a GPU the lanes of a
        // warp then idle instead of multiplying by zero; on a CPU the work halves).
        const int tmax = (k0 + kk - i0 < T - 1) ? k0 + kk - i0 : T - 1;
        if constexpr (!Complex) {
          MultiDouble<N> acc = load_scratch<N>(Z, T, kk);
          for (int t = 0; t <= tmax; ++t)
            acc = acc + load_scratch<N>(X, T, t) * load_scratch<N>(Y, 2 * T, kk - t + T - 1);
          store_scratch<N>(Z, T, kk, acc);
        } else {
          MultiDouble<N> re = load_scratch<N>(Z, T, kk), im = load_scratch<N>(Z + N * T, T, kk);
          for (int t = 0; t <= tmax; ++t) {
            const auto xr = load_scratch<N>(X, T, t), xi = load_scratch<N>(X + N * T, T, t);
            const int w = kk - t + T - 1;
            const auto yr = load_scratch<N>(Y, 2 * T, w), yim = load_scratch<N>(Y + N * 2 * T, 2 * T, w);
            re = re + (xr * yr - xi * yim);
            im = im + (xr * yim + xi * yr);
          }
          store_scratch<N>(Z, T, kk, re);
          store_scratch<N>(Z + N * T, T, kk, im);
        }
      });
    }
    member.team_barrier();
    const Data o = out;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, T), [&](const int kk) {
      const int k = k0 + kk;
      if (k <= d)
        for (int l = 0; l < L; ++l) o(oo + k, l) = Z[l * T + kk];
    });
  }
};

// out_j := in1_j + in2_j, one thread per coefficient (consecutive threads, consecutive doubles).
template <int N, bool Complex, class ExecSpace>
struct AdditionLayer {
  static constexpr int L = Complex ? 2 * N : N;
  using Data = Kokkos::View<double**, Kokkos::LayoutLeft, ExecSpace>;
  using ConstData = Kokkos::View<const double**, Kokkos::LayoutLeft, ExecSpace>;
  using Jobs = Kokkos::View<const Job*, ExecSpace>;
  ConstData in1, in2;
  Data out;
  Jobs jobs;
  std::int64_t offset = 0;
  int degree = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    const std::int64_t n1 = degree + 1;
    const Job job = jobs(offset + i / n1);
    const std::int64_t k = i % n1;
    for (int part = 0; part < L; part += N)
      store_md<N>(out, job.out * n1 + k, part,
                  load_md<N>(in1, job.x * n1 + k, part) + load_md<N>(in2, job.y * n1 + k, part));
  }
};

template <int N, bool Complex, class ExecSpace>
struct ScaleSlots {
  static constexpr int L = Complex ? 2 * N : N;
  Kokkos::View<double**, Kokkos::LayoutLeft, ExecSpace> data;
  Kokkos::View<const ScaleJob*, ExecSpace> jobs;
  int degree = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    const std::int64_t n1 = degree + 1;
    const ScaleJob job = jobs(i / n1);
    const std::int64_t row = job.slot * n1 + i % n1;
    for (int part = 0; part < L; part += N)
      store_md<N>(data, row, part, load_md<N>(data, row, part) * MultiDouble<N>(job.factor));
  }
};

// Copies a (d+1, N+1, L) and z (d+1, n, L) into their slots of the data array.
template <class ExecSpace, class A, class Z>
struct StageInputs {
  Kokkos::View<double**, Kokkos::LayoutLeft, ExecSpace> data;
  A a;
  Z z;
  int degree = 0, num_coefficients = 0, first_variable_slot = 0, limbs = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    const std::int64_t n1 = degree + 1;
    const int s = int(i / n1), k = int(i % n1);
    if (s < num_coefficients) {
      for (int l = 0; l < limbs; ++l) data(i, l) = a(k, s, l);
    } else {
      for (int l = 0; l < limbs; ++l) data(first_variable_slot * n1 + (i - num_coefficients * n1), l) = z(k, s - num_coefficients, l);
    }
  }
};

// value(k, l) and gradient(k, v, l) from the result slots.
template <class ExecSpace, class V, class G>
struct GatherOutputs {
  Kokkos::View<const double**, Kokkos::LayoutLeft, ExecSpace> data;
  Kokkos::View<const int*, ExecSpace> slots;  // value slot, then one per variable
  V value;
  G gradient;
  int degree = 0, limbs = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    const std::int64_t n1 = degree + 1;
    const int s = int(i / n1), k = int(i % n1);
    const std::int64_t row = slots(s) * n1 + k;
    if (s == 0) {
      for (int l = 0; l < limbs; ++l) value(k, l) = data(row, l);
    } else {
      for (int l = 0; l < limbs; ++l) gradient(k, s - 1, l) = data(row, l);
    }
  }
};

template <class ExecSpace>
struct IdentityJobs {
  Kokkos::View<Job*, ExecSpace> jobs;
  KOKKOS_INLINE_FUNCTION void operator()(const int j) const { jobs(j) = Job{j, j, j}; }
};

// z(k, s) := x(k, s) + y(k, s) over all coefficients k and series s.
template <int N, bool Complex, class ExecSpace, class X, class Y, class Z>
struct AddSeries {
  static constexpr int L = Complex ? 2 * N : N;
  X x;
  Y y;
  Z z;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    const std::int64_t n1 = std::int64_t(z.extent(0));
    const int k = int(i % n1), s = int(i / n1);
    for (int part = 0; part < L; part += N) {
      MultiDouble<N> a, b;
      for (int l = 0; l < N; ++l) {
        a.limb[l] = x(k, s, part + l);
        b.limb[l] = y(k, s, part + l);
      }
      const MultiDouble<N> c = a + b;
      for (int l = 0; l < N; ++l) z(k, s, part + l) = c.limb[l];
    }
  }
};
}  // namespace Impl
}  // namespace series
}  // namespace kosmos
