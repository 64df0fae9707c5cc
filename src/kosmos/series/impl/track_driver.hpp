// The host side of track(): one launch sequence (start solutions and tracking in one kernel) per
// precision pass over the paths of that pass, then the per-path precision raise and deduplication.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/series/impl/track_kernels.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <vector>

namespace kosmos {
namespace series {
namespace Impl {

// Polynomials as flat host arrays for DeviceTerms, coefficients at `precision` limbs.
struct FlatTerms {
  std::vector<int> term_offsets{0}, factor_offsets{0}, factor_var, factor_exp, term_degree;
  std::vector<double> term_magnitude;
  std::vector<double> coefficients;  // (terms, 2 N) row major
  // One term: coefficient (re, im limbs) times prod x_var^exp over `factors` (var, exp).
  void add_term(const std::vector<std::pair<int, int>>& factors, const double* re, const double* im,
                int N);
  void end_polynomial() { term_offsets.push_back(int(term_degree.size())); }
};
// The homotopy's systems in projective coordinates (n + 1 unknowns, the last one x_0):
// target = homogenized F and the chart, start = x_i^(d_i) - x_0^(d_i) and the chart.
struct FlatSystem {
  int n = 0, precision = 1;  // n: affine variables
  std::vector<int> degrees;
  FlatTerms target, start;
};
FlatSystem flatten(const NumericSystem& system, int precision, std::uint64_t seed);
TrackParameters parameters(const TrackOptions& options);
void check_options(const TrackOptions& options);
// Statuses counted, finite endpoints deduplicated into result.solutions.
void deduplicate(TrackResult& result, const TrackOptions& options);
// Paths to track again in a higher precision: failed ones and regular endpoints shared by paths.
std::vector<std::int64_t> paths_to_raise(const TrackResult& result);

template <class T, class Space>
Kokkos::View<T*, Space> upload(const Space& space, const std::vector<T>& v,
                               const std::string& label) {
  Kokkos::View<T*, Space> d(Kokkos::view_alloc(space, label), v.size());
  Kokkos::deep_copy(
      space, d,
      Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(v.data(), v.size()));
  return d;
}

template <int N, class Space>
DeviceTerms<Space> upload_terms(const Space& space, const FlatTerms& f) {
  DeviceTerms<Space> d;
  d.term_offsets = upload(space, f.term_offsets, "kosmos::series::track::term_offsets");
  d.factor_offsets = upload(space, f.factor_offsets, "kosmos::series::track::factor_offsets");
  d.factor_var = upload(space, f.factor_var, "kosmos::series::track::factor_var");
  d.factor_exp = upload(space, f.factor_exp, "kosmos::series::track::factor_exp");
  d.term_degree = upload(space, f.term_degree, "kosmos::series::track::term_degree");
  d.term_magnitude = upload(space, f.term_magnitude, "kosmos::series::track::term_magnitude");
  const std::size_t terms = f.term_magnitude.size();
  d.coefficients = Kokkos::View<double**, Space>(
      Kokkos::view_alloc(space, "kosmos::series::track::coefficients"), terms, std::size_t(2 * N));
  auto h = Kokkos::create_mirror_view(d.coefficients);
  for (std::size_t m = 0; m < terms; ++m)
    for (int l = 0; l < 2 * N; ++l)
      h(m, std::size_t(l)) = f.coefficients[m * 2 * N + std::size_t(l)];
  Kokkos::deep_copy(space, d.coefficients, h);
  return d;
}

template <int N, class Space>
void track_pass(const Space& space, const NumericSystem& system,
                const std::vector<std::int64_t>& path_list, const TrackOptions& options,
                TrackResult& result) {
  if (path_list.empty()) return;
  const FlatSystem flat = flatten(system, N, options.seed);
  const int n = flat.n + 1;
  const std::size_t slots = path_list.size();
  TrackPaths<N, Space> kernel;
  kernel.sys.n = n;
  kernel.sys.degrees = upload(space, flat.degrees, "kosmos::series::track::degrees");
  kernel.sys.target = upload_terms<N>(space, flat.target);
  kernel.sys.start = upload_terms<N>(space, flat.start);
  kernel.paths = upload(space, path_list, "kosmos::series::track::paths");
  kernel.work =
      Kokkos::View<double**, Space>(Kokkos::view_alloc(space, "kosmos::series::track::work"), slots,
                                    TrackPaths<N, Space>::workspace_doubles(n));
  kernel.pivots = Kokkos::View<int**, Space>(
      Kokkos::view_alloc(space, "kosmos::series::track::pivots"), slots, std::size_t(n));
  kernel.solution =
      Kokkos::View<double**, Space>(Kokkos::view_alloc(space, "kosmos::series::track::solution"),
                                    slots, std::size_t(2 * N * flat.n));
  kernel.counts = Kokkos::View<int**, Space>(
      Kokkos::view_alloc(space, "kosmos::series::track::counts"), slots, 3);
  kernel.measures = Kokkos::View<double**, Space>(
      Kokkos::view_alloc(space, "kosmos::series::track::measures"), slots, 4);
  kernel.gamma =
      ComplexMD<N>(MultiDouble<N>(result.gamma.real()), MultiDouble<N>(result.gamma.imag()));
  kernel.par = parameters(options);
  Kokkos::parallel_for(
      "kosmos::series::track_paths",
      Kokkos::RangePolicy<Space, Kokkos::Schedule<Kokkos::Dynamic>>(space, 0, slots), kernel);
  auto solution = Kokkos::create_mirror_view(kernel.solution);
  auto counts = Kokkos::create_mirror_view(kernel.counts);
  auto measures = Kokkos::create_mirror_view(kernel.measures);
  Kokkos::deep_copy(space, solution, kernel.solution);
  Kokkos::deep_copy(space, counts, kernel.counts);
  Kokkos::deep_copy(space, measures, kernel.measures);
  space.fence();
  for (std::size_t s = 0; s < slots; ++s) {
    PathResult& r = result.paths[std::size_t(path_list[s])];
    r.status = PathStatus(counts(s, 0));
    r.steps = counts(s, 1);
    r.rejections = counts(s, 2);
    r.precision = N;
    r.t = measures(s, 0);
    r.residual = measures(s, 1);
    r.condition = measures(s, 2);
    r.max_abs = measures(s, 3);
    r.limbs.assign(std::size_t(2 * N * flat.n), 0.0);
    for (std::size_t e = 0; e < r.limbs.size(); ++e) r.limbs[e] = solution(s, e);
  }
}

template <class Space>
void track_pass(const Space& space, int precision, const NumericSystem& system,
                const std::vector<std::int64_t>& path_list, const TrackOptions& options,
                TrackResult& result) {
  switch (precision) {
    case 1:
      return track_pass<1>(space, system, path_list, options, result);
    case 2:
      return track_pass<2>(space, system, path_list, options, result);
    default:
      return track_pass<4>(space, system, path_list, options, result);
  }
}
}  // namespace Impl

template <class ExecSpace>
void track_paths(const ExecSpace& space, int precision, const NumericSystem& system,
                 const std::vector<std::int64_t>& path_list, const TrackOptions& options,
                 TrackResult& result) {
  Impl::track_pass(space, precision, system, path_list, options, result);
}

template <class ExecSpace>
TrackResult track(const ExecSpace& space, const NumericSystem& system,
                  const TrackOptions& options) {
  return track(space, system, options,
               [&](int precision, const std::vector<std::int64_t>& path_list, TrackResult& result) {
                 track_paths(space, precision, system, path_list, options, result);
               });
}

template <class ExecSpace>
TrackResult track(const ExecSpace&, const NumericSystem& system, const TrackOptions& options,
                  const TrackPass& pass) {
  Impl::check_options(options);
  kosmos::Impl::ScopedRegion region("kosmos::series::track");
  const Impl::FlatSystem shape = Impl::flatten(system, 1, options.seed);  // validates the system
  TrackResult result;
  result.num_variables = shape.n;
  result.degrees = shape.degrees;
  result.gamma = gamma_of_seed(options.seed);
  const std::int64_t num_paths = total_degree_paths(shape.degrees, options.max_paths);
  result.paths.resize(std::size_t(num_paths));
  std::vector<std::int64_t> path_list(static_cast<std::size_t>(num_paths));
  for (std::int64_t p = 0; p < num_paths; ++p) path_list[std::size_t(p)] = p;
  int precision = options.precision;
  pass(precision, path_list, result);
  while (precision < options.max_precision) {
    Impl::deduplicate(result, options);
    path_list = Impl::paths_to_raise(result);
    if (path_list.empty()) break;
    precision *= 2;
    result.raised += std::int64_t(path_list.size());
    pass(precision, path_list, result);
  }
  Impl::deduplicate(result, options);
  return result;
}
}  // namespace series
}  // namespace kosmos
