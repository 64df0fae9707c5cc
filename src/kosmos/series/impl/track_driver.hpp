// The host side of track(): one launch sequence (start solutions and tracking in one kernel) per
// precision pass over the paths of that pass, then the per-path precision raise and deduplication.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/series/impl/track_kernels.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
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

  // For the kernel's lanes (index_terms): the factors that hold variable v in polynomial i
  // (column_offsets at i * variables + v; the term and the factor's position, in term order), and
  // each polynomial's terms cut into chunks of about `chunk_weight` Taylor multiplications
  // (chunk_offsets per polynomial; chunk c holds terms [chunk_first[c], chunk_first[c + 1])).
  std::vector<int> column_offsets{0}, column_term, column_factor, chunk_offsets{0}, chunk_first{0};
  void index_terms(int variables, double chunk_weight);
  // Taylor multiplications of a term's series (its degree, and the sum).
  static double taylor_weight(int degree) { return degree + 1.0; }
  double taylor_weight() const;
};
// The homotopy's systems in projective coordinates (n + 1 unknowns, the last one x_0):
// target = homogenized F, start = x_i^(d_i) - x_0^(d_i) (the kernel adds the chart).
struct FlatSystem {
  int n = 0, precision = 1;  // n: affine variables
  std::vector<int> degrees;
  FlatTerms target, start;
};
FlatSystem flatten(const NumericSystem& system, int precision);
// Whether the kernel's evaluation is faster a column of the Jacobian a lane (and a value a lane)
// than a row a lane, on `lanes` lanes: the longer lane's complex products, the items dealt to
// the lanes in turn (a term of f factors costs f + 1 products for its value, f for each of its f
// column entries, 1 + f (f - 1) for its part of a row).
bool jacobian_by_columns(const FlatSystem& flat, int lanes);
// The parameter homotopy's systems: start = generic, target = target, both homogenized to the
// larger degree of each polynomial pair.
FlatSystem flatten_parameter(const NumericSystem& generic, const NumericSystem& target,
                             int precision);

// What a pass tracks: the total-degree homotopy of `target` (starts empty), or the parameter
// homotopy from `generic` whose path p starts at starts[p] (x_j = limbs (2 j) N_p + l,
// imaginary (2 j + 1) N_p + l, N_p = starts[p].precision).
struct Homotopy {
  const NumericSystem* target = nullptr;
  const NumericSystem* generic = nullptr;
  std::vector<PathResult> starts;
  FlatSystem flat(int precision) const {
    return generic ? flatten_parameter(*generic, *target, precision) : flatten(*target, precision);
  }
};
// The kernel's parameters for pass `pass` (0: the first; later ones step more tightly).
TrackParameters parameters(const TrackOptions& options, int pass);
void check_options(const TrackOptions& options);
// Statuses counted, finite endpoints deduplicated into result.solutions.
void deduplicate(TrackResult& result, const TrackOptions& options);
// Positions in result.paths to track again: failed ones, regular endpoints shared by paths and
// singular endpoints of one path without a winding number >= 2.
std::vector<std::int64_t> paths_to_raise(const TrackResult& result);
// result.paths for options.paths (checked) or all `total` paths, numbered.
void select_paths(TrackResult& result, const TrackOptions& options, std::int64_t total);

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
  d.column_offsets = upload(space, f.column_offsets, "kosmos::series::track::column_offsets");
  d.column_term = upload(space, f.column_term, "kosmos::series::track::column_term");
  d.column_factor = upload(space, f.column_factor, "kosmos::series::track::column_factor");
  d.chunk_offsets = upload(space, f.chunk_offsets, "kosmos::series::track::chunk_offsets");
  d.chunk_first = upload(space, f.chunk_first, "kosmos::series::track::chunk_first");
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

// Tracks the paths at positions `path_list` of result.paths in N doubles, pass `pass`.
template <int N, class Space>
void track_pass(const Space& space, const Homotopy& homotopy,
                const std::vector<std::int64_t>& path_list, const TrackOptions& options, int pass,
                TrackResult& result) {
  if (path_list.empty()) return;
  std::vector<std::int64_t> numbers;
  for (std::int64_t position : path_list)
    numbers.push_back(result.paths[std::size_t(position)].index);
  FlatSystem flat = homotopy.flat(N);
  const int n = flat.n + 1;
  const std::size_t slots = path_list.size();
  // A path a team thread, its rows over the thread's vector lanes; GPUs: 64 lanes a team. The
  // Taylor terms in chunks of about a (2 lanes)-th of the work, for balance over the lanes.
  const int lanes = kosmos::Impl::lanes_per_item<Space>(n, options.lanes_per_path);
  const int team = kosmos::Impl::items_per_team<Space>(lanes);
  const double chunk_weight =
      (flat.target.taylor_weight() + flat.start.taylor_weight()) / (2.0 * lanes);
  flat.target.index_terms(n, chunk_weight);
  flat.start.index_terms(n, chunk_weight);
  TrackPaths<N, Space> kernel;
  if (!homotopy.starts.empty()) {
    kernel.start_points = Kokkos::View<double**, Space>(
        Kokkos::view_alloc(space, "kosmos::series::track::start_points"), slots,
        std::size_t(2 * N * flat.n));
    auto h = Kokkos::create_mirror_view(kernel.start_points);
    for (std::size_t s = 0; s < slots; ++s) {
      const PathResult& start = homotopy.starts[std::size_t(numbers[s])];
      const std::size_t from = std::size_t(start.precision);
      for (std::size_t e = 0; e < std::size_t(2 * flat.n); ++e)
        for (std::size_t l = 0; l < std::size_t(N); ++l)
          h(s, e * std::size_t(N) + l) = l < from ? start.limbs[e * from + l] : 0.0;
    }
    Kokkos::deep_copy(space, kernel.start_points, h);
  }
  kernel.sys.n = n;
  kernel.sys.jacobian_by_columns = jacobian_by_columns(flat, lanes);
  kernel.sys.degrees = upload(space, flat.degrees, "kosmos::series::track::degrees");
  kernel.sys.target = upload_terms<N>(space, flat.target);
  kernel.sys.start = upload_terms<N>(space, flat.start);
  kernel.paths = upload(space, numbers, "kosmos::series::track::paths");
  kernel.work = decltype(kernel.work)(
      Kokkos::view_alloc(space, "kosmos::series::track::work"), slots,
      TrackPaths<N, Space>::workspace_doubles(
          n, std::size_t(flat.target.chunk_offsets.back() + flat.start.chunk_offsets.back())));
  kernel.pivots = decltype(kernel.pivots)(
      Kokkos::view_alloc(space, "kosmos::series::track::pivots"), slots, std::size_t(n));
  kernel.solution =
      Kokkos::View<double**, Space>(Kokkos::view_alloc(space, "kosmos::series::track::solution"),
                                    slots, std::size_t(2 * N * flat.n));
  kernel.counts = Kokkos::View<int**, Space>(
      Kokkos::view_alloc(space, "kosmos::series::track::counts"), slots, 4);
  kernel.measures = Kokkos::View<double**, Space>(
      Kokkos::view_alloc(space, "kosmos::series::track::measures"), slots, 4);
  kernel.gamma =
      ComplexMD<N>(MultiDouble<N>(result.gamma.real()), MultiDouble<N>(result.gamma.imag()));
  kernel.par = parameters(options, pass);
  const int league = int((slots + std::size_t(team) - 1) / std::size_t(team));
  Kokkos::parallel_for(
      "kosmos::series::track_paths",
      Kokkos::TeamPolicy<Space, Kokkos::Schedule<Kokkos::Dynamic>>(space, league, team, lanes),
      kernel);
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
    r.winding = counts(s, 3);
    r.precision = N;
    r.t = measures(s, 0);
    r.residual = measures(s, 1);
    r.condition = measures(s, 2);
    r.max_abs = measures(s, 3);
    r.limbs.assign(std::size_t(2 * N * flat.n), 0.0);
    for (std::size_t e = 0; e < r.limbs.size(); ++e) r.limbs[e] = solution(s, e);
  }
}

// track_pass<N> holds the tracker's kernels: it is compiled once per enabled execution space and
// precision, in the library (track_<space>_n<N>.cpp, from cmake/KosmosInstances.cmake),
// not in every file that tracks.
#define KOSMOS_SERIES_TRACK_PASS_INSTANCE(PREFIX, N, SPACE)                                        \
  PREFIX template void track_pass<N, SPACE>(const SPACE&, const Homotopy&,                         \
                                            const std::vector<std::int64_t>&, const TrackOptions&, \
                                            int, TrackResult&);
#define KOSMOS_SERIES_TRACK_PASS_EXTERN(SPACE)        \
  KOSMOS_SERIES_TRACK_PASS_INSTANCE(extern, 1, SPACE) \
  KOSMOS_SERIES_TRACK_PASS_INSTANCE(extern, 2, SPACE) \
  KOSMOS_SERIES_TRACK_PASS_INSTANCE(extern, 4, SPACE)
#if defined(KOKKOS_ENABLE_SERIAL)
KOSMOS_SERIES_TRACK_PASS_EXTERN(Kokkos::Serial)
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
KOSMOS_SERIES_TRACK_PASS_EXTERN(Kokkos::OpenMP)
#endif
#if defined(KOKKOS_ENABLE_CUDA)
KOSMOS_SERIES_TRACK_PASS_EXTERN(Kokkos::Cuda)
#endif

template <class Space>
void track_pass(const Space& space, int precision, const Homotopy& homotopy,
                const std::vector<std::int64_t>& path_list, const TrackOptions& options, int pass,
                TrackResult& result) {
  switch (precision) {
    case 1:
      return track_pass<1>(space, homotopy, path_list, options, pass, result);
    case 2:
      return track_pass<2>(space, homotopy, path_list, options, pass, result);
    default:
      return track_pass<4>(space, homotopy, path_list, options, pass, result);
  }
}

// The passes of track() and track_parameter(): all selected paths in options.precision, then
// failed paths and path jumps (paths_to_raise) again in twice the precision, up to
// options.max_precision, then options.reruns times more at max_precision, each pass with
// tighter steps; each pass through `pass` (when set: a pass may run its paths in parts, all with
// the pass's number) or directly on `space`.
template <class Space>
TrackResult track_homotopy(const Space& space, const Homotopy& homotopy,
                           const TrackOptions& options, const TrackPass& pass) {
  check_options(options);
  kosmos::Impl::ScopedRegion region("kosmos::series::track");
  const FlatSystem shape = homotopy.flat(1);  // validates the systems
  TrackResult result;
  result.num_variables = shape.n;
  result.degrees = shape.degrees;
  const bool parameter = homotopy.generic != nullptr;
  result.parameter = parameter;
  result.gamma = parameter ? std::complex<double>(1.0) : gamma_of_seed(options.seed);
  select_paths(result, options,
               parameter ? std::int64_t(homotopy.starts.size())
                         : total_degree_paths(shape.degrees, options.max_paths));
  std::vector<std::int64_t> path_list(result.paths.size());
  for (std::size_t p = 0; p < path_list.size(); ++p) path_list[p] = std::int64_t(p);
  int precision = options.precision;
  const auto run_pass = [&](const std::vector<std::int64_t>& paths) {
    const int number = result.passes++;
    const bool on_host = number > 0 && std::int64_t(paths.size()) < options.host_pass_paths &&
                         !kosmos::Impl::is_host_space<Space>();
    const TrackRun run = [&](const std::vector<std::int64_t>& part) {
      if (on_host)
        track_pass(Kokkos::DefaultHostExecutionSpace(), precision, homotopy, part, options, number,
                   result);
      else
        track_pass(space, precision, homotopy, part, options, number, result);
    };
    if (pass)
      pass(precision, paths, run, result);
    else
      run(paths);
  };
  run_pass(path_list);
  int reruns = precision < options.max_precision ? options.reruns : 0;
  while (precision < options.max_precision || reruns-- > 0) {
    deduplicate(result, options);
    path_list = paths_to_raise(result);
    if (path_list.empty()) break;
    precision = std::min(2 * precision, options.max_precision);
    result.raised += std::int64_t(path_list.size());
    run_pass(path_list);
  }
  deduplicate(result, options);
  return result;
}
// The regular solutions of `generic` as start points (PathResults of their paths).
std::vector<PathResult> start_points(const TrackResult& generic);
}  // namespace Impl

template <class ExecSpace>
TrackResult track(const ExecSpace& space, const NumericSystem& system, const TrackOptions& options,
                  const TrackPass& pass) {
  Impl::Homotopy homotopy;
  homotopy.target = &system;
  return Impl::track_homotopy(space, homotopy, options, pass);
}

template <class ExecSpace>
TrackResult track_parameter(const ExecSpace& space, const NumericSystem& generic,
                            const TrackResult& generic_solutions, const NumericSystem& target,
                            const TrackOptions& options, const TrackPass& pass) {
  Impl::Homotopy homotopy;
  homotopy.target = &target;
  homotopy.generic = &generic;
  homotopy.starts = Impl::start_points(generic_solutions);
  return Impl::track_homotopy(space, homotopy, options, pass);
}
}  // namespace series
}  // namespace kosmos
