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
// A start that is no root, or too far from one, ends as not_converged after
// max_refinement_steps (enough to reach deca double from 1e-1, quadratically).
//
// Error estimates, as PHCpack reports them: the residual max_k,i |[t^k] H_i(x(t), t)| over
// k = 0..d, and per variable the ratio |x_{d-1}| / |x_d| of the last coefficients, by Fabry's
// ratio theorem an estimate of the radius of convergence (the distance to the nearest
// singularity of x(t); the series is only useful well inside it).
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/series/evaluate.hpp>
#include <kosmos/series/impl/newton_kernels.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

namespace kosmos {
namespace series {

enum class NewtonStatus {
  success,
  singular_jacobian,  // J_0 singular to the working precision (pivot column in singular_column)
  not_finite,         // an evaluation or update produced NaN or infinity
  not_converged,      // the refinement steps left an update above sqrt(u) of x (see solve)
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
  }
  return "unknown";
}

struct NewtonStep {
  int degree = 0;                 // truncation degree of this step
  double update = 0;              // max |dx_k,j| (leading double)
  double evaluation_seconds = 0;  // fenced, only when timed
  double solve_seconds = 0;
};

struct NewtonResult {
  NewtonStatus status = NewtonStatus::success;
  int singular_column = -1;       // with singular_jacobian: the column without a usable pivot
  std::vector<NewtonStep> steps;  // the steps run (the last one failed unless success)
  double start_residual = 0;      // max |H_i(x0, 0)|: far from 0 when x0 is no root of H(x, 0)
  // max |[t^k] H_i(x(t), t)|, k = 0..d, at the last refinement step's iterate (before its update,
  // which is below sqrt(u) of x after success: steps.back().update bounds the error of x then).
  double residual = 0;
  std::vector<double> coefficient_ratio;  // per variable |x_{d-1}| / |x_d| (inf: x_d = 0); d >= 1
};

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
  // timed: fence around each stage and fill the step times.
  NewtonResult solve(const ExecSpace& space, const std::vector<Series>& coefficients,
                     const Series& x, bool timed = false) {
    check(coefficients, x);
    kosmos::Impl::ScopedRegion region("kosmos::series::newton");
    NewtonResult result;
    const std::size_t last = schedule_.size() - 1;
    const double half_precision = std::sqrt(unit_roundoff<N>());
    for (std::size_t s = 0; s <= last + max_refinement_steps; ++s) {
      const bool refining = s > last;
      NewtonStep step;
      step.degree = schedule_[std::min(s, last)];
      const auto t0 = std::chrono::steady_clock::now();
      evaluate(space, std::min(s, last), coefficients, x);
      if (s == 0) result.start_residual = largest(space, residual_, 0);
      // The substitution consumes the residual: keep the size of this iterate's.
      if (refining) result.residual = largest(space, residual_, degree_);
      if (timed) space.fence();
      const auto t1 = std::chrono::steady_clock::now();
      const int info = factor(space);
      if (info == -1) {
        substitute(space, step.degree, x);
        step.update = largest(space, update_, step.degree);
      }
      if (timed) {
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
      if (info == Impl::kNotFinite || !kosmos::math::isfinite(step.update) ||
          !kosmos::math::isfinite(result.residual)) {
        result.status = NewtonStatus::not_finite;
        return result;
      }
      // Quadratic convergence: an update below sqrt(u) of x leaves x correct to about u.
      if (refining && step.update <= half_precision * std::max(1.0, largest(space, x, degree_))) {
        if (degree_ >= 1) result.coefficient_ratio = last_coefficient_ratios(x);
        return result;
      }
    }
    result.status = NewtonStatus::not_converged;
    return result;
  }
  NewtonResult solve(const std::vector<Series>& coefficients, const Series& x, bool timed = false) {
    return solve(ExecSpace(), coefficients, x, timed);
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
    constexpr bool host =
        Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;
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

  std::vector<double> last_coefficient_ratios(const Series& x) const {
    // The whole series (small): a strided subview of a device View cannot be copied to the host.
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
    std::vector<double> ratios;
    for (int j = 0; j < n_; ++j) {
      Impl::NewtonScalar<N, Complex> before, after;
      Impl::load(before, host, degree_ - 1, j);
      Impl::load(after, host, degree_, j);
      const double denominator = Impl::magnitude(after);
      ratios.push_back(denominator > 0 ? Impl::magnitude(before) / denominator
                                       : Impl::infinite_magnitude());
    }
    return ratios;
  }

  int degree_, n_;
  std::vector<int> schedule_;
  std::vector<std::vector<Evaluator>> evaluators_;  // [step][polynomial]
  Series residual_, update_;
  Jacobian jacobian_;
  Matrix lu_, inverse_;
  Pivots pivots_, info_;
};
}  // namespace series
}  // namespace kosmos
