// Newton's method on truncated power series (the use of Verschelde 2021's evaluation and
// differentiation): the power-series solution x(t) of a square polynomial homotopy H(x, t) = 0
// from a start point x(0) = x0 with H(x0, 0) = 0 and an invertible Jacobian there.
//
// H is a system of n polynomials in n variables whose coefficients are power series in t (the
// series module's polynomials: t is the series variable). One Newton step at truncation degree
// D evaluates H(x(t)) and its Jacobian J(t) = sum_k J_k t^k with the PolynomialEvaluator kernels,
// then solves the block lower-triangular Toeplitz system J(t) dx(t) = -H(x(t)) mod t^(D+1):
//   P J_0 = L U once (LU with partial pivoting, one team), then for k = 0 .. D
//   dx_k = -J_0^{-1} (H_k + sum_{j=1..k} J_j dx_{k-j})
// where each solved dx_k is at once added into the right-hand sides of all later k (one team for
// the whole substitution: one launch per step instead of two per degree; the (later k, row)
// updates of one k run in parallel over the team). Newton's method converges quadratically on
// series: a step at degree 2m - 1 from x correct to m terms gives 2m correct terms, so the steps
// run at degrees 1, 3, 7, ..., 2^s - 1, d: d + 1 terms after ceil(log2(d + 1)) steps. That
// holds from an exact root x0 of H(x, 0); refinement steps at degree d follow until an update is
// below sqrt(u) of x (then x is correct to about u: from an exact x0 the first refinement step
// is that check), which also refines a start that is only near a root (Newton on x0 itself).
// The start is a root when Newton moves x(0) by at most start_tolerance max(1, |x0|) in all;
// a start that Newton moves further is start_not_root (Newton from a point that is no root may
// converge to any root: a silent change of branch), unless the caller asks to refine it
// (NewtonOptions::refine_start; start_shift then says how far it moved). A start that is no root,
// or too far from one, ends as not_converged after max_refinement_steps (enough to reach deca
// double from 1e-1, quadratically).
//
// Diagnostics of the series returned (one more evaluation and substitution at it):
// - residual: max_k,i |[t^k] H_i(x(t), t)| over k = 0..d, at the printed series;
// - condition: cond_1(J_0) = ||J_0||_1 ||J_0^{-1}||_1 from the LU's explicit inverse;
// - error: an estimate of max_k,j |x_k,j - exact|: the size of one more Newton correction
//   J(t)^{-1} H(x(t)) (the first-order error of x, carried through the same block substitution that
//   amplifies rounding errors from degree to degree), and at least cond_1(J_0) u_N max |x_k,j|
//   (the forward error of the linear solves themselves);
// - per variable the ratio |x_{d-1}| / |x_d| of the last coefficients (Fabry's ratio theorem, as
//   PHCpack reports it; it swings when the nearest singularities are a complex-conjugate pair)
//   and the radius of convergence from the poles of the Pade approximant with a quadratic
//   denominator of the series' tail (pade_radius), which sees a pair as well as a single pole.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/series/evaluate.hpp>
#include <kosmos/series/impl/newton_kernels.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

namespace kosmos {
namespace series {

enum class NewtonStatus {
  success,
  singular_jacobian,  // J_0 singular to the working precision (pivot column in singular_column)
  not_finite,         // an evaluation or update produced NaN or infinity
  not_converged,      // the refinement steps left an update above sqrt(u) of x (see solve)
  start_not_root,     // Newton moved x(0) beyond the start tolerance without refine_start
};
inline const char* to_string(NewtonStatus s) {
  switch (s) {
    case NewtonStatus::success:
      return "success";
    case NewtonStatus::singular_jacobian:
      return "singular Jacobian";
    case NewtonStatus::not_finite:
      return "not finite";
    case NewtonStatus::not_converged:
      return "not converged";
    case NewtonStatus::start_not_root:
      return "start is not a root";
  }
  return "unknown";
}

struct NewtonStep {
  int degree = 0;                 // truncation degree of this step
  double update = 0;              // max |dx_k,j| (leading double)
  double evaluation_seconds = 0;  // fenced, only when timed
  double solve_seconds = 0;
};

struct NewtonOptions {
  // Let Newton move the start to a root of H(x, 0) (whichever it converges to); otherwise a start
  // moved by more than start_tolerance max(1, max_j |x0_j|) is refused (start_not_root).
  bool refine_start = false;
  double start_tolerance = 1e-6;
  bool timed = false;  // fence around each stage and fill the step times
};

struct NewtonResult {
  NewtonStatus status = NewtonStatus::success;
  int singular_column = -1;       // with singular_jacobian: the column without a usable pivot
  std::vector<NewtonStep> steps;  // the steps run (the last one failed unless success)
  double start_residual = 0;      // max |H_i(x0, 0)|: far from 0 when x0 is no root of H(x, 0)
  // Sum over the steps of max_j |dx_0,j|: bounds how far x(0) moved from the start.
  double start_shift = 0;
  // After success, of the series returned (see the header comment): the residual
  // max |[t^k] H_i(x(t), t)|, k = 0..d; cond_1(J_0); the estimated max error of its coefficients.
  double residual = 0;
  double condition = 0;
  double error = 0;
  std::vector<double> coefficient_ratio;  // per variable |x_{d-1}| / |x_d| (inf: x_d = 0); d >= 1
  std::vector<double> radius;  // per variable pade_radius of its last 4 coefficients; d >= 3
};

// Radius of convergence of a series from its last coefficients a = (c_(d-3), c_(d-2), c_(d-1),
// c_d): the smallest pole modulus of the Pade approximant of the tail with denominator
// 1 + b_1 t + b_2 t^2, i.e. c_(k) + b_1 c_(k-1) + b_2 c_(k-2) = 0 for k = d - 1, d. Coefficients
// c_k ~ r^-k cos(k theta + phi) of a complex-conjugate pair of singularities at r e^(+-i theta)
// satisfy it exactly (poles r e^(+-i theta)); a single dominant singularity gives the ratio. Where
// the 2x2 system is singular to 1e-6 (a geometric tail), |c_(d-1) / c_d|. Infinity when the tail
// vanishes (a polynomial solution).
inline double pade_radius(const std::complex<double> (&a)[4]) {
  double scale = 0;
  for (const auto& c : a) scale = std::max(scale, std::abs(c));
  if (!(scale > 0)) return HUGE_VAL;
  const std::complex<double> c0 = a[0] / scale, c1 = a[1] / scale, c2 = a[2] / scale,
                             c3 = a[3] / scale;
  const std::complex<double> det = c1 * c1 - c2 * c0;
  if (std::abs(det) <= 1e-6 * (std::norm(c1) + std::abs(c2 * c0)))
    return std::abs(c3) > 0 ? std::abs(c2 / c3) : HUGE_VAL;
  const std::complex<double> b1 = (c3 * c0 - c2 * c1) / det, b2 = (c2 * c2 - c3 * c1) / det;
  if (std::abs(b2) == 0) return std::abs(b1) > 0 ? 1 / std::abs(b1) : HUGE_VAL;
  // Roots of b2 t^2 + b1 t + 1: t = 2 / (-b1 -+ sqrt(b1^2 - 4 b2)), the form without cancellation.
  const std::complex<double> root = std::sqrt(b1 * b1 - 4.0 * b2);
  // The smaller pole modulus comes from the larger denominator (not both vanish: b2 != 0).
  return 2 / std::max(std::abs(-b1 - root), std::abs(-b1 + root));
}

// Truncation degrees of the Newton steps for a solution of degree d: 1, 3, 7, ..., then d
// ({0} for d = 0).
inline std::vector<int> newton_schedule(int degree) {
  std::vector<int> degrees;
  int D = 1;
  while (D < degree) {
    degrees.push_back(D);
    D = 2 * D + 1;
  }
  degrees.push_back(degree);
  return degrees;
}

template <int N, bool Complex = false, class ExecSpace = Kokkos::DefaultExecutionSpace>
class SeriesNewton {
 public:
  static constexpr int limbs = Complex ? 2 * N : N;
  static constexpr std::size_t max_refinement_steps = 16;
  using execution_space = ExecSpace;
  using Series = Kokkos::View<double***, Kokkos::LayoutLeft, ExecSpace>;
  using Evaluator = PolynomialEvaluator<N, Complex, ExecSpace>;

  // Plans every step (one evaluator per polynomial and step degree) and allocates the work
  // space. Throws kosmos::invalid_input unless `system` has as many polynomials as variables.
  SeriesNewton(const ExecSpace& space, const std::vector<Polynomial>& system, int degree,
               KernelChoice kernels = KernelChoice::automatic)
      : degree_(degree),
        n_(system.empty() ? 0 : system[0].num_variables),
        schedule_(newton_schedule(degree)) {
    const char* where = "kosmos::series::SeriesNewton";
    kosmos::Impl::require(!system.empty(), where, "the system has no polynomials");
    kosmos::Impl::require(degree >= 0, where, "degree ", degree, " is negative");
    for (std::size_t i = 0; i < system.size(); ++i)
      kosmos::Impl::require(system[i].num_variables == n_, where, "polynomial ", i + 1, " has ",
                            system[i].num_variables, " variables, polynomial 1 has ", n_);
    kosmos::Impl::require(int(system.size()) == n_, where,
                          "the system is not square: ", system.size(), " polynomials in ", n_,
                          " variables");
    for (const int D : schedule_) {
      std::vector<Evaluator> at_degree;
      for (const auto& p : system) at_degree.emplace_back(space, p, D, kernels);
      evaluators_.push_back(std::move(at_degree));
    }
    const std::size_t d1 = std::size_t(degree) + 1, n = std::size_t(n_);
    residual_ = Series(Kokkos::view_alloc(space, "kosmos::series::newton::residual"), d1, n, limbs);
    update_ = Series(Kokkos::view_alloc(space, "kosmos::series::newton::update"), d1, n, limbs);
    jacobian_ =
        Jacobian(Kokkos::view_alloc(space, "kosmos::series::newton::jacobian"), d1, n, n, limbs);
    lu_ = Matrix(Kokkos::view_alloc(space, "kosmos::series::newton::lu"), n, n, limbs);
    inverse_ = Matrix(Kokkos::view_alloc(space, "kosmos::series::newton::inverse"), n, n, limbs);
    pivots_ = Pivots(Kokkos::view_alloc(space, "kosmos::series::newton::pivots"), n);
    info_ = Pivots(Kokkos::view_alloc(space, "kosmos::series::newton::info"), 1);
    space.fence();
  }
  SeriesNewton(const std::vector<Polynomial>& system, int degree,
               KernelChoice kernels = KernelChoice::automatic)
      : SeriesNewton(ExecSpace(), system, degree, kernels) {}

  int degree() const { return degree_; }
  int num_variables() const { return n_; }
  const std::vector<int>& schedule() const { return schedule_; }
  const Evaluator& evaluator(std::size_t polynomial) const {
    return evaluators_.back()[polynomial];
  }

  // coefficients[i]: (d + 1, M_i + 1, L) coefficient series of polynomial i (a_0 first, as for
  // PolynomialEvaluator). x: (d + 1, n, L), on entry the start series (x0 in coefficient 0, the
  // rest usually zero), on exit the series solution (also after a failure: the last iterate).
  NewtonResult solve(const ExecSpace& space, const std::vector<Series>& coefficients,
                     const Series& x, const NewtonOptions& options = {}) {
    check(coefficients, x);
    kosmos::Impl::ScopedRegion region("kosmos::series::newton");
    NewtonResult result;
    const std::size_t last = schedule_.size() - 1;
    const double half_precision = std::sqrt(unit_roundoff<N>());
    const double start_bound = options.start_tolerance * std::max(1.0, largest(space, x, 0));
    bool converged = false;
    for (std::size_t s = 0; s <= last + max_refinement_steps && !converged; ++s) {
      const bool refining = s > last;
      NewtonStep step;
      step.degree = schedule_[std::min(s, last)];
      const auto t0 = std::chrono::steady_clock::now();
      evaluate(space, std::min(s, last), coefficients, x);
      if (s == 0) result.start_residual = largest(space, residual_, 0);
      if (options.timed) space.fence();
      const auto t1 = std::chrono::steady_clock::now();
      const int info = factor(space);
      if (info == -1) {
        substitute(space, step.degree, x);
        step.update = largest(space, update_, step.degree);
      }
      if (options.timed) {
        space.fence();
        step.evaluation_seconds = std::chrono::duration<double>(t1 - t0).count();
        step.solve_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
      }
      result.steps.push_back(step);
      if (info >= 0) {
        result.status = NewtonStatus::singular_jacobian;
        result.singular_column = info;
        return result;
      }
      if (info == Impl::kNotFinite || !kosmos::math::isfinite(step.update)) {
        result.status = NewtonStatus::not_finite;
        return result;
      }
      result.start_shift += largest(space, update_, 0);
      if (!options.refine_start && result.start_shift > start_bound) {
        result.status = NewtonStatus::start_not_root;
        return result;
      }
      // Quadratic convergence: an update below sqrt(u) of x leaves x correct to about u.
      converged =
          refining && step.update <= half_precision * std::max(1.0, largest(space, x, degree_));
    }
    if (!converged) {
      result.status = NewtonStatus::not_converged;
      return result;
    }
    diagnose(space, coefficients, x, result);
    return result;
  }
  NewtonResult solve(const std::vector<Series>& coefficients, const Series& x,
                     const NewtonOptions& options = {}) {
    return solve(ExecSpace(), coefficients, x, options);
  }

 private:
  using Jacobian = typename Impl::NewtonViews<ExecSpace>::Jacobian;
  using Matrix = typename Impl::NewtonViews<ExecSpace>::Matrix;
  using Pivots = typename Impl::NewtonViews<ExecSpace>::Pivots;

  void check(const std::vector<Series>& coefficients, const Series& x) const {
    const char* where = "kosmos::series::SeriesNewton::solve";
    kosmos::Impl::require(coefficients.size() == std::size_t(n_), where, coefficients.size(),
                          " coefficient Views for ", n_, " polynomials");
    for (std::size_t i = 0; i < coefficients.size(); ++i)
      Impl::require_series_view(where, ("coefficients[" + std::to_string(i) + "]").c_str(),
                                coefficients[i], std::size_t(degree_),
                                std::size_t(evaluator(i).plan().num_monomials) + 1, limbs);
    Impl::require_series_view(where, "x", x, std::size_t(degree_), std::size_t(n_), limbs);
  }

  // The residual, condition and error estimate of the series x returned (see the header): one
  // more evaluation, factorization and substitution at degree d, the latter on a copy of x.
  void diagnose(const ExecSpace& space, const std::vector<Series>& coefficients, const Series& x,
                NewtonResult& result) {
    evaluate(space, schedule_.size() - 1, coefficients, x);
    result.residual = largest(space, residual_, degree_);
    const double size = largest(space, x, degree_);
    if (factor(space) == -1) {
      result.condition = largest_column_sum(space, true) * largest_column_sum(space, false);
      if (!scratch_.is_allocated())
        scratch_ = Series(Kokkos::view_alloc(space, "kosmos::series::newton::scratch"), x.extent(0),
                          x.extent(1), x.extent(2));
      Kokkos::deep_copy(space, scratch_, x);
      substitute(space, degree_, scratch_);
      result.error =
          std::max(largest(space, update_, degree_), result.condition * unit_roundoff<N>() * size);
    } else {  // J_0 of the converged series is singular to working precision: no error bound
      result.condition = result.error = Impl::infinite_magnitude();
    }
    if (degree_ >= 1) last_coefficient_estimates(x, result);
  }

  // ||J_0||_1 (of_jacobian) or ||J_0^{-1}||_1, with |re| + |im| as the modulus.
  double largest_column_sum(const ExecSpace& space, bool of_jacobian) const {
    double biggest = 0;
    Kokkos::parallel_reduce(
        "kosmos::series::newton::column_sums", Kokkos::RangePolicy<ExecSpace>(space, 0, n_),
        Impl::LargestColumnSum<N, Complex, ExecSpace>{jacobian_, inverse_, n_, of_jacobian},
        Kokkos::Max<double>(biggest));
    space.fence();
    return biggest;
  }

  // residual_ := H(x) and jacobian_ := J(x) mod t^(D+1), D = schedule_[s].
  void evaluate(const ExecSpace& space, std::size_t s, const std::vector<Series>& coefficients,
                const Series& x) {
    const auto terms = std::make_pair(std::size_t(0), std::size_t(schedule_[s]) + 1);
    const auto all = Kokkos::ALL;
    for (int i = 0; i < n_; ++i)
      evaluators_[s][std::size_t(i)].evaluate(
          space, Kokkos::subview(coefficients[std::size_t(i)], terms, all, all),
          Kokkos::subview(x, terms, all, all), Kokkos::subview(residual_, terms, i, all),
          Kokkos::subview(jacobian_, terms, i, all, all));
  }

  // LU of J_0 and, when it is regular, J_0^{-1}; returns info (see Impl::FactorLeadingBlock).
  int factor(const ExecSpace& space) {
    Impl::FactorLeadingBlock<N, Complex, ExecSpace> f{jacobian_, lu_, pivots_,
                                                      info_,     n_,  unit_roundoff<N>()};
    Kokkos::parallel_for("kosmos::series::newton::factor",
                         Kokkos::TeamPolicy<ExecSpace>(space, 1, Kokkos::AUTO), f);
    int info = 0;
    Kokkos::deep_copy(space, Kokkos::View<int, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(&info),
                      Kokkos::subview(info_, 0));
    space.fence();
    if (info == -1)
      Kokkos::parallel_for(
          "kosmos::series::newton::invert", Kokkos::RangePolicy<ExecSpace>(space, 0, n_),
          Impl::InvertLeadingBlock<N, Complex, ExecSpace>{lu_, inverse_, pivots_, n_});
    return info;
  }

  // dx := -J^{-1} H mod t^(D+1) by forward substitution over the degrees; x += dx.
  void substitute(const ExecSpace& space, int D, const Series& x) {
    Impl::ForwardSubstitution<N, Complex, ExecSpace> f{residual_, update_, x, jacobian_,
                                                       inverse_,  n_,      D};
    Kokkos::TeamPolicy<ExecSpace> policy(space, 1, Kokkos::AUTO);
    // On a CPU a small substitution runs on one thread: the 2 team barriers per degree would cost
    // more than the (D + 1) n^2 products they share out.
    constexpr bool host = kosmos::Impl::is_host_space<ExecSpace>();
    const bool small = std::int64_t(D + 1) * n_ * n_ < 4096;
    const int team = host && small ? 1 : policy.team_size_recommended(f, Kokkos::ParallelForTag());
    Kokkos::parallel_for("kosmos::series::newton::substitute",
                         Kokkos::TeamPolicy<ExecSpace>(space, 1, team), f);
  }

  double largest(const ExecSpace& space, const Series& series, int D) const {
    double biggest = 0;
    Kokkos::parallel_reduce("kosmos::series::newton::largest",
                            Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
                                space, 0, std::int64_t(D + 1) * n_),
                            Impl::LargestCoefficient<N, Complex, ExecSpace>{series, n_},
                            Kokkos::Max<double>(biggest));
    space.fence();
    return biggest;
  }

  // Per variable |x_{d-1}| / |x_d| and, for d >= 3, pade_radius of the last 4 coefficients.
  void last_coefficient_estimates(const Series& x, NewtonResult& result) const {
    // The whole series (small): a strided subview of a device View cannot be copied to the host.
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
    for (int j = 0; j < n_; ++j) {
      Impl::NewtonScalar<N, Complex> before, after;
      Impl::load(before, host, degree_ - 1, j);
      Impl::load(after, host, degree_, j);
      const double denominator = Impl::magnitude(after);
      result.coefficient_ratio.push_back(denominator > 0 ? Impl::magnitude(before) / denominator
                                                         : Impl::infinite_magnitude());
      if (degree_ < 3) continue;
      std::complex<double> tail[4];
      for (int k = 0; k < 4; ++k) {
        const int at = degree_ - 3 + k;
        tail[k] = {host(at, j, 0), Complex ? host(at, j, limbs - N) : 0.0};
      }
      result.radius.push_back(pade_radius(tail));
    }
  }

  int degree_, n_;
  std::vector<int> schedule_;
  std::vector<std::vector<Evaluator>> evaluators_;  // [step][polynomial]
  Series residual_, update_, scratch_;              // scratch_: the copy of x that diagnose updates
  Jacobian jacobian_;
  Matrix lu_, inverse_;
  Pivots pivots_, info_;
};
}  // namespace series
}  // namespace kosmos
