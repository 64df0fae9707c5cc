// A batched path tracker for square polynomial systems F(x) = 0 (n polynomials in n variables,
// real or complex coefficients, dense or sparse): all isolated solutions by a total-degree
// homotopy
//   H(X, t) = gamma (1 - t) G(X) + t F(X),   G_i = x_i^(d_i) - x_0^(d_i)   (start_systems.hpp)
// with a random gamma on the unit circle (the gamma trick), tracked from t = 0 to 1 in
// projective coordinates X = (x_1 .. x_n, x_0): F homogenized with x_0, plus a chart a . X = 1
// per path, so that paths to infinity stay bounded (x_0 -> 0) and x = X / x_0 at the end. The
// chart is dynamic: before each step X is scaled to unit length and a := conj(X), so the
// chart's hyperplane at infinity never comes near the path (a fixed random chart can: X(t) then
// has a pole near the real t axis and the steps crawl past it, as path 82 of cyclic 5 with
// seed 3 did for 4000 steps).
//
// Each path runs in one thread of one kernel launch (all paths of a precision in one launch, on
// every backend; per-path workspace in Views whose layout follows the execution space):
//  * predictor: the Taylor coefficients c_0 .. c_7 of X(t + s) at the current point, by Newton on
//    series (c_k = -J^{-1} [H(c_0 + .. + c_(k-1) s^(k-1), t + s)]_k with one LU of
//    J = H_X(X, t)), turned into the Pade approximant [5/1] per component (pade.hpp);
//  * step size (Telen, Van Barel, Verschelde 2020): the smaller of pole_fraction times the Pade
//    pole radius and the step at which the approximant's error term reaches curvature_fraction
//    times eta, an estimate of the distance to the nearest other path, eta = 1 / (||J^-1||_1 M2)
//    with M2 a majorant of the second derivatives of H at radius max(1, ||X||) (the Kantorovich
//    radius of Newton's method); at most max_step;
//  * corrector: at most 3 Newton steps down to corrector_tolerance (relative); an update above
//    it must be within eta / 4 (the first) or half the previous one (contraction); a rejected
//    step is halved;
//  * endgame: where 1 - t < endgame_distance and the steps cannot reach 1, or 1 - t <
//    endgame_stall and the steps collapse (below endgame_collapse (1 - t), or the corrector
//    fails down to min_step: the ill-conditioning near a singular end), the Cauchy end game: the
//    path is tracked around the circle |1 - t| = r = 1 - t (16 chords a loop, each by the same
//    predictor-corrector along a complex direction, the chart fixed) until it closes after w
//    loops (at most 4), the winding number; x(1) is the mean of the samples (Cauchy's integral
//    formula, trapezoidal rule in (1 - t)^(1/w)); loops that do not close, or a chord that
//    fails, leave Newton's method at t = 1 from the loops' first point, the path's point at
//    1 - r (the samples of loops that do not close need not lie on one path: at a regular but
//    ill-conditioned end the corrector's noise can exceed the loops' spread); in the passes
//    after the first, loops that do not close at radius r > 1e-7 send the path on by steps
//    from that point (unless ||x||_inf is above diverging_size there), to try the end game
//    again below r / 10;
//  * every end point but a Cauchy one of winding number >= 2 (singular: Newton would lose the
//    digits) is refined by Newton at t = 1 in the working precision (until the updates
//    stop decreasing) and classified, with condition = ||F_X^-1||_1 times the row majorant of the
//    first derivatives (a condition number relative to the coefficients' size):
//      at_infinity  ||x||_inf above infinity_threshold, or singular with ||x||_inf above its
//                   square root (x_0 -> 0 at a singular point at infinity), or, checked
//                   every quarter of max_steps, ||x||_inf above diverging_size and grown like
//                   (1 - t)^v with v <= -1/2 over the quarter's second half (a path crawling
//                   to infinity), or stopped on the way to a singular solution set at
//                   infinity: eta below 1e-13 while ||x||_inf grew like that over the last
//                   64 steps (checked every 64 steps), or, where
//                   1 - t < endgame_stall, ||x||_inf ~ (1 - t)^v with v <= -0.02 and
//                   eta ~ (1 - t)^mu with mu >= 1.1 over five half decades of 1 - t in a row
//                   (a path to a finite end has v -> 0 and mu < 1)
//      singular     condition above singular_condition (or no LU) or winding number >= 2, and a
//                   residual below
//                   residual_tolerance times the majorant of F's terms (else: at infinity)
//      regular      Newton converged to about the working precision
//      failed       step size underflow far from t = 1, max_steps reached (not diverging), no
//                   convergence, a residual above residual_tolerance (relative), NaN
//  * precision raised per path: paths that failed, regular end points reached by more than one
//    path (a path jump: two paths at one regular root), and singular end points reached by one
//    path without a winding number >= 2 (no evidence of a multiple root) are tracked again from
//    their start, in one launch of just those paths, in 2, then 4 doubles (up to max_precision),
//    then `reruns` more times at max_precision; every such pass tightens the step control
//    (rerun_step_scale), as PHCpack re-runs clustered paths with smaller steps; on a GPU such a
//    pass of fewer than host_pass_paths paths runs on the host's cores;
//  * solutions deduplicated: finite end points within duplicate_tolerance (relative) are one
//    solution with a multiplicity (singular if any of its paths is).
#pragma once

#include <kosmos/series/system.hpp>

#include <Kokkos_Core.hpp>

#include <complex>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace kosmos {
namespace series {

enum class PathStatus { regular = 0, singular = 1, at_infinity = 2, failed = 3 };
const char* to_string(PathStatus s);

struct TrackOptions {
  std::uint64_t seed = 2021;  // picks gamma
  int precision = 1;          // N of the first pass: 1, 2 or 4
  int max_precision = 4;      // raised per path up to this (= precision: never raised)
  // Passes again at max_precision, after the raises, for the paths still failed or jumped.
  int reruns = 1;
  // Each pass after the first scales pole_fraction, curvature_fraction and max_step by this
  // and max_steps by its inverse (tighter step control for the re-tracked paths).
  double rerun_step_scale = 0.5;
  int max_steps = 4000;             // accepted steps per path
  double pole_fraction = 0.5;       // beta1
  double curvature_fraction = 0.1;  // beta2
  double max_step = 0.1;
  double min_step = 1e-13;
  double corrector_tolerance = 1e-9;
  double endgame_distance = 1e-6;
  double endgame_stall = 0.1;
  // Where 1 - t < endgame_stall, a step bound below this times 1 - t starts the end game.
  double endgame_collapse = 1e-3;
  double infinity_threshold = 1e8;
  // A path with ||x||_inf above this, grown like (1 - t)^v, v <= -1/2, over the second half of
  // a quarter of max_steps, is at infinity there (not failed, not re-tracked).
  double diverging_size = 1e2;
  double singular_condition = 1e8;
  double residual_tolerance = 1e-8;  // relative to the size of F's terms at the end point
  double duplicate_tolerance = 1e-6;
  std::int64_t max_paths = std::int64_t(1) << 31;
  // On a device space (a GPU), a pass after the first with fewer paths than this runs on the
  // host's default execution space instead: a path is one thread's sequential work, and a few
  // dozen paths in double double or quad double with tightened steps take minutes as lone GPU
  // threads but seconds on CPU cores. 0: every pass on the given space.
  std::int64_t host_pass_paths = 1024;
  // Vector lanes that share a path's rows on a GPU (1, 2, 4, 8, 16 or 32; 0: the power of two
  // at or above the unknowns + 1, up to 32). Host spaces track a path on one lane.
  int lanes_per_path = 0;
  // The paths to track (0-based numbers below the path count, distinct); empty: all of them.
  // Reruns a few paths of a large homotopy (the same gamma and chart for the same seed).
  std::vector<std::int64_t> paths;
};

struct PathResult {
  std::int64_t index = 0;  // the path's number in the homotopy (0-based)
  PathStatus status = PathStatus::failed;
  int precision = 0;     // N of the pass that produced it
  int steps = 0;         // accepted steps
  int rejections = 0;    // rejected steps
  int winding = 0;       // 1: reached t = 1 by steps; w >= 1: the Cauchy end game's winding
                         // number; 0: its loops did not close (Newton at t = 1 from their
                         // first point)
  double t = 0;          // t reached (1 unless failed or at infinity on the way)
  double residual = 0;   // max_i |F_i(x)| at the endpoint (working precision)
  double condition = 0;  // ||F_x||_1 ||F_x^-1||_1 at the endpoint (inf: no LU)
  double max_abs = 0;    // ||x||_inf
  int solution = -1;     // index into TrackResult::solutions (regular or singular), else -1
  // x_j = sum of limbs[(2 j) N + l] + i sum of limbs[(2 j + 1) N + l], l < N
  std::vector<double> limbs;
  std::complex<double> x(int j) const;
};

struct Solution {
  int path = 0;          // the representative (first) path: its position in TrackResult::paths
  int multiplicity = 0;  // number of paths ending here
  bool singular = false;
};

struct TrackResult {
  int num_variables = 0;
  std::vector<int> degrees;
  std::complex<double> gamma;
  bool parameter = false;           // track_parameter (else the total-degree homotopy)
  std::int64_t total_paths = 0;     // of the homotopy (paths holds the tracked ones)
  std::vector<PathResult> paths;    // in the order of TrackOptions::paths (all: by number)
  std::vector<Solution> solutions;  // distinct finite endpoints
  std::int64_t regular = 0, singular = 0, at_infinity = 0, failed = 0;
  std::int64_t raised = 0;  // re-tracked paths (summed over the passes after the first)
  int passes = 0;           // launches (1: no path re-tracked)
  std::int64_t count(PathStatus s) const;
  std::int64_t count_precision(int N) const;  // paths whose final pass ran in N doubles
};

// All paths of the total-degree homotopy of `system` (square; coefficients constant in t: a
// series coefficient above degree 0 that is not zero is kosmos::invalid_input) on `space`.
// Throws kosmos::invalid_input for a non-square system, precisions not in {1, 2, 4}, or more
// than options.max_paths paths, or a path number in options.paths that is out of range or
// repeated.
// How track() and track_parameter() run each precision pass. `run(part)` tracks the paths in
// `part` (a subset of path_list) in `precision` doubles (1, 2 or 4) into result.paths; the default
// (an empty TrackPass) runs all of path_list at once. Paths are independent: a pass may run parts
// of path_list apart (over MPI ranks, say), provided every path's result ends in `result` before
// it returns (the next pass depends on the deduplication of all of them).
using TrackRun = std::function<void(const std::vector<std::int64_t>& part)>;
using TrackPass = std::function<void(int precision, const std::vector<std::int64_t>& path_list,
                                     const TrackRun& run, TrackResult& result)>;

template <class ExecSpace>
TrackResult track(const ExecSpace& space, const NumericSystem& system, const TrackOptions& options,
                  const TrackPass& pass = {});

// Parameter homotopy H(x, t) = (1 - t) G(x) + t F(x) from a generic instance G of a family of
// systems (its solutions known: generic_solutions, a TrackResult of `generic`, e.g. by track())
// to the instance F = `target` of the same family, in the same projective coordinates and with the
// same per-path precision raise, classification and deduplication as track(). When the
// coefficients are affine functions of parameters p (G = F(., p0), target = F(., p1)) this is
// H(x, t) = F(x, (1 - t) p0 + t p1); for generic complex p0 every isolated solution of the
// target is the end of a path from a regular solution of the generic instance, so one generic
// solve serves any number of targets. Path p starts at the p-th regular distinct solution of
// generic_solutions (PathResult::index); gamma is 1. Throws kosmos::invalid_input when the
// systems differ in size or generic_solutions has no regular solution.
template <class ExecSpace>
TrackResult track_parameter(const ExecSpace& space, const NumericSystem& generic,
                            const TrackResult& generic_solutions, const NumericSystem& target,
                            const TrackOptions& options, const TrackPass& pass = {});

// The gamma of a seed (unit modulus), exposed for tests that rebuild the homotopy.
std::complex<double> gamma_of_seed(std::uint64_t seed);
}  // namespace series
}  // namespace kosmos

#include <kosmos/series/impl/track_driver.hpp>

namespace kosmos {
namespace series {
// Text report of a run: a header line (source, paths, gamma), one block per distinct solution
//   solution k : <regular|singular> multiplicity m path p precision N residual r condition c
//   x<j> : re,im            (correctly rounded to `digits` digits, 0: enough to read back)
// a line per failed path
//   failed path p : t T steps S rejections R precision N residual r |x| X
// and a summary line
//   paths P regular R singular S at_infinity I failed F distinct D raised K passes Q
//   precision1 A precision2 B precision4 C      (paths by the precision of their final pass)
void write_track(std::ostream& out, const TrackResult& result, const std::string& source,
                 int digits);

// HDF5 report (attributes format = "kosmos series track", variables, paths (tracked),
// total_paths (of the homotopy), homotopy ("total degree" or "parameter"), gamma_re, gamma_im
// and the summary counts; per tracked path: path_index int64 (its number in the homotopy),
// path_status (0 regular, 1 singular, 2 at infinity, 3 failed), path_precision, path_steps,
// path_rejections, path_winding, path_solution (-1: none) int32, path_t, path_residual,
// path_condition, path_max_abs double, path_x double (paths, n, 2) and path_limbs double
// (paths, n, 2, 4: the N limbs, zero padded); per distinct solution: solution_path (the path
// number), solution_multiplicity, solution_singular int32).
void write_track_h5(const std::string& path, const TrackResult& result, const std::string& source);
}  // namespace series
}  // namespace kosmos
