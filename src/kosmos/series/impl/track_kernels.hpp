// The per-path kernel of the path tracker (track.hpp): one team thread tracks one path from its
// start solution to t = 1 and refines and classifies its end, its vector lanes (core/lanes.hpp)
// sharing the path's evaluation (a column or a row of the Jacobian a lane), Taylor series (chunks
// of terms), LU and solves.
// Workspace and outputs are Views indexed by (path slot, entry), a path's entries together.
#pragma once

#include <kosmos/core/compat.hpp>
#include <kosmos/core/lanes.hpp>
#include <kosmos/series/impl/complex_md.hpp>
#include <kosmos/series/pade.hpp>
#include <kosmos/series/start_systems.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kosmos {
namespace series {
namespace Impl {

// Step control and classification parameters (TrackOptions without the host-only fields).
struct TrackParameters {
  int max_steps;
  double pole_fraction, curvature_fraction, max_step, min_step, corrector_tolerance;
  double endgame_distance, endgame_stall, endgame_collapse, infinity_threshold, singular_condition,
      residual_tolerance, diverging_size;
  // After a Cauchy end game that did not close at radius r > endgame_floor (1e-7), |x| at most
  // diverging_size: go on stepping and try the end game again below r / 10 (re-run passes),
  // else Newton's method at t = 1.
  bool endgame_retry;
  double infinity, not_a_number;  // IEEE specials, set on the host
};

// Polynomials as flat device arrays: polynomial i owns terms [term_offsets(i),
// term_offsets(i + 1)); term m is coefficients(m, .) times prod x_var^exp over its factors
// [factor_offsets(m), factor_offsets(m + 1)) (none: a constant). The column index and the chunks
// are FlatTerms::index_terms'.
template <class Space>
struct DeviceTerms {
  Kokkos::View<int*, Space> term_offsets, factor_offsets, factor_var, factor_exp, term_degree;
  Kokkos::View<int*, Space> column_offsets, column_term, column_factor, chunk_offsets, chunk_first;
  Kokkos::View<double*, Space> term_magnitude;
  Kokkos::View<double**, Space> coefficients;  // (terms, 2 N): real limbs, imaginary limbs
};

// The homotopy in projective coordinates X = (x_1 .. x_n, x_0) (track.hpp): target and start
// systems of n homogeneous polynomials each; the kernel adds the chart a . X = 1 (per path).
template <class Space>
struct DeviceSystem {
  int n = 0;  // unknowns, n + 1 of the affine system (the last equation is the chart)
  DeviceTerms<Space> target, start;
  Kokkos::View<int*, Space> degrees;  // of the affine polynomials (start solutions)
  // The Jacobian a column a lane (else a row a lane): jacobian_by_columns() on the host.
  bool jacobian_by_columns = true;
};

enum : int { status_tracking = -1 };  // >= 0: a PathStatus

template <int N, class Space>
struct TrackPaths {
  using member_type = typename Kokkos::TeamPolicy<Space>::member_type;
  using Lanes = kosmos::Impl::VectorLanes<member_type>;
  using OneLane = kosmos::Impl::OneLane;
  using C = ComplexMD<N>;
  using MD = MultiDouble<N>;
  // [5/1]: the approximant's error falls faster with the step than [2/1]'s, so the curvature
  // bound allows longer steps (perf_tests/RESULTS.md, round 23, compares the degrees)
  using Pade = PadeL1<5>;
  static constexpr int K = Pade::coefficients - 1;  // highest Taylor coefficient
  static constexpr int max_refinements = 64;
  static constexpr double spurious_pole = 1e-8;  // |c_L| below this times the largest: no pole
  static constexpr int cauchy_samples = 16;      // points per loop of the Cauchy end game
  static constexpr int max_winding = 4;          // loops before it gives up
  static constexpr double closure = 1e-3;        // relative to the samples' spread: closed
  // Retried end games start no closer to t = 1 than a decade below this (a regular end of
  // condition 1e7 can need 1 - t near 1e-7 before Newton's method at t = 1 converges from the
  // path's point; each decade costs a path to infinity thousands of steps)
  static constexpr double endgame_floor = 1e-7;
  static constexpr double min_chord_step = 1.0 / 64;  // of a chord: below it the game fails

  DeviceSystem<Space> sys;
  Kokkos::View<const std::int64_t*, Space> paths;  // path index per slot
  Kokkos::View<double**, Space> start_points;      // (slots, 2 N n): given starts, or (0, 0)
  Kokkos::View<double**, Kokkos::LayoutRight, Space> work;  // (slots, workspace_doubles(n))
  Kokkos::View<int**, Kokkos::LayoutRight, Space> pivots;   // (slots, n)
  Kokkos::View<double**, Space> solution;                   // (slots, 2 N n)
  Kokkos::View<int**, Space> counts;       // (slots, 4): status, steps, rejections, winding
  Kokkos::View<double**, Space> measures;  // (slots, 4): t, residual, condition, max |x|
  C gamma;
  TrackParameters par;

  // Workspace layout in complex entries: series c (K + 1) x n, corrector iterate n, Jacobian
  // n x n (row major), right-hand side n, values n, chart n, the end game's sum n and first
  // sample n, the columns of J^-1 n x n (one a lane), the inverses of U's diagonal n, and two
  // Taylor coefficients per chunk of terms of the target and start systems (target chunks
  // first).
  KOKKOS_INLINE_FUNCTION static int series_at(int n, int k, int j) { return k * n + j; }
  KOKKOS_INLINE_FUNCTION int iterate_at(int j) const { return (K + 1) * sys.n + j; }
  KOKKOS_INLINE_FUNCTION int jacobian_at(int i, int j) const {
    return (K + 2) * sys.n + i * sys.n + j;
  }
  KOKKOS_INLINE_FUNCTION int rhs_at(int j) const { return (K + 2 + sys.n) * sys.n + j; }
  KOKKOS_INLINE_FUNCTION int value_at(int j) const { return (K + 3 + sys.n) * sys.n + j; }
  KOKKOS_INLINE_FUNCTION int chart_at(int j) const { return (K + 4 + sys.n) * sys.n + j; }
  KOKKOS_INLINE_FUNCTION int sum_at(int j) const { return (K + 5 + sys.n) * sys.n + j; }
  KOKKOS_INLINE_FUNCTION int loop_start_at(int j) const { return (K + 6 + sys.n) * sys.n + j; }
  KOKKOS_INLINE_FUNCTION int column_at(int j, int i) const {
    return (K + 7 + sys.n + j) * sys.n + i;
  }
  KOKKOS_INLINE_FUNCTION int inverse_pivot_at(int k) const {
    return (K + 7 + 2 * sys.n) * sys.n + k;
  }
  KOKKOS_INLINE_FUNCTION int chunk_slot_at(int item) const {
    return (K + 8 + 2 * sys.n) * sys.n + 2 * item;
  }
  static std::size_t workspace_doubles(int n, std::size_t chunks) {
    return std::size_t(2 * N) * (std::size_t((K + 8 + 2 * n) * n) + 2 * chunks);
  }

  KOKKOS_INLINE_FUNCTION C get(int s, int e) const {
    C z;
    for (int l = 0; l < N; ++l) {
      z.re.limb[l] = work(s, 2 * N * e + l);
      z.im.limb[l] = work(s, 2 * N * e + N + l);
    }
    return z;
  }
  KOKKOS_INLINE_FUNCTION void set(int s, int e, const C& z) const {
    for (int l = 0; l < N; ++l) {
      work(s, 2 * N * e + l) = z.re.limb[l];
      work(s, 2 * N * e + N + l) = z.im.limb[l];
    }
  }
  // max_j |entry first + j| (leading doubles).
  KOKKOS_INLINE_FUNCTION double norm(const Lanes& lanes, int s, int first) const {
    return lanes.max(0, sys.n, [&](int j) { return magnitude<N>(get(s, first + j)); });
  }

  // max_j |x_j| / |x_0| of the point at entries [first, first + n): its affine size (inf at x_0
  // = 0), without changing it.
  KOKKOS_INLINE_FUNCTION double affine_size(const Lanes& lanes, int s, int first) const {
    const double x0 = magnitude<N>(get(s, first + sys.n - 1));
    const double r =
        lanes.max(0, sys.n - 1, [&](int j) { return magnitude<N>(get(s, first + j)); });
    return x0 > 0.0 ? r / x0 : par.infinity;
  }
  // Whether a path goes to infinity by its last stretch of steps: its affine size is above
  // min_size and grew since the stretch's middle (1 - t = mid_remaining, size mid_size) like
  // (1 - t)^v with v <= -1/2. Paths to a solution set at infinity can crawl there (cyclic 7's
  // reach |x| ~ 400 at t ~ 0.9 after thousands of steps); re-tracking them at higher precision
  // only crawls longer.
  KOKKOS_INLINE_FUNCTION bool diverging(double remaining, double size, double mid_remaining,
                                        double mid_size, double min_size) const {
    if (!(size > min_size) || !(mid_size > 0.0) || !(remaining < mid_remaining)) return false;
    return math::log(size / mid_size) / math::log(remaining / mid_remaining) <= -0.5;
  }

  // What tells a path that is going to infinity before max_steps: the quarter-wise test
  // (diverging), which samples the path in the middle of each quarter of max_steps, and
  // at_infinity's samples every window_steps steps and every half decade of 1 - t.
  struct Divergence {
    double mid_remaining = 0, mid_size = 0;        // at the middle of the current quarter
    double window_remaining = 0, window_size = 0;  // window_steps steps ago
    double next = 0, log_remaining = 0, log_size = 0, log_eta = 0;  // the last valuation sample
    int declines = -1;  // half decades in a row that decline (-1: no sample yet)
  };
  static constexpr int window_steps = 64;
  static constexpr double singular_eta = 1e-13;  // about 500 units of roundoff of unit-size X
  static constexpr int valuation_samples = 5;
  static constexpr double valuation_growth = 0.02;
  // mu's bound: above 1 - 1/w with a margin (cyclic 7's paths to finite ends have at most three
  // half decades in a row with mu >= 1.1, four with mu >= 1)
  static constexpr double valuation_mu = 1.1;
  // Whether the path after `steps` steps, at 1 - t = remaining with eta from its step bound, is
  // at infinity:
  //  * every window_steps steps: eta below singular_eta and |x| grown like (1 - t)^v with
  //    v <= -1/2 over the last window_steps steps: numerically on the singular solution set at
  //    infinity, or crawling along it (as 4 % of cyclic 7's paths do at 1 - t ~ 0.2 for
  //    thousands of steps); paths to finite ends keep eta orders of magnitude above it;
  //  * in the end-game zone, every half decade of 1 - t: v <= -valuation_growth (|x| grows) and
  //    eta ~ (1 - t)^mu with mu >= valuation_mu (H_X singular at the end faster than 1 - t) over
  //    valuation_samples half decades in a row. A path to a finite end has v -> 0, and mu -> 0
  //    at a regular end or mu = 1 - 1/w < 1 at a singular end of winding number w; paths to a
  //    solution set at infinity (cyclic 7's: v = -k/7, mu 1.5-2.5) crawl there with steps
  //    bounded by eta, most of a system's steps.
  // Out of line: the kernel's functor sits at nvcc's inlining limit.
  KOKKOS_FUNCTION __attribute__((noinline)) bool at_infinity(const Lanes& lanes, int s,
                                                             Divergence& d, int steps,
                                                             double remaining, double eta) const {
    const bool window = steps % window_steps == 0, sample = remaining <= d.next;
    if (!window && !sample) return false;
    const double size = affine_size(lanes, s, series_at(sys.n, 0, 0));
    if (window) {
      if (eta < singular_eta && diverging(remaining, size, d.window_remaining, d.window_size, 1.0))
        return true;
      d.window_remaining = remaining;
      d.window_size = size;
    }
    if (!sample) return false;
    const double log_size = math::log(size), log_eta = math::log(eta);
    const double log_remaining = math::log(remaining);
    if (d.declines >= 0) {
      const double span = log_remaining - d.log_remaining;
      const bool declining = (log_size - d.log_size) / span <= -valuation_growth &&
                             (log_eta - d.log_eta) / span >= valuation_mu;
      d.declines = declining ? d.declines + 1 : 0;
    } else {
      d.declines = 0;
    }
    d.log_remaining = log_remaining;
    d.log_size = log_size;
    d.log_eta = log_eta;
    while (d.next >= remaining) d.next *= 0.31622776601683794;  // half a decade
    return d.declines >= valuation_samples && math::isfinite(log_size) && math::isfinite(log_eta);
  }

  KOKKOS_INLINE_FUNCTION C coefficient(const DeviceTerms<Space>& T, int m) const {
    C z;
    for (int l = 0; l < N; ++l) {
      z.re.limb[l] = T.coefficients(m, l);
      z.im.limb[l] = T.coefficients(m, N + l);
    }
    return z;
  }
  // sum + weight * P_i(x) for the polynomial i of T at x = entries [x_first, x_first + n).
  KOKKOS_INLINE_FUNCTION C add_value(C sum, int s, const DeviceTerms<Space>& T, int i, int x_first,
                                     const C& weight) const {
    for (int m = T.term_offsets(i); m < T.term_offsets(i + 1); ++m) {
      C product = coefficient(T, m) * weight;
      for (int q = T.factor_offsets(m); q < T.factor_offsets(m + 1); ++q)
        product = product * power(get(s, x_first + T.factor_var(q)), T.factor_exp(q));
      sum = sum + product;
    }
    return sum;
  }
  // The derivative of term m of T (coefficient times weight: a) at x = entries [x_first,
  // x_first + n) by the variable of its factor q.
  KOKKOS_INLINE_FUNCTION C term_derivative(int s, const DeviceTerms<Space>& T, int m, int q,
                                           const C& a, int x_first) const {
    const int f0 = T.factor_offsets(m), f1 = T.factor_offsets(m + 1), e = T.factor_exp(q);
    // e = 1: a times exact ones, a itself
    C d = e == 1 ? a : a * MD(double(e)) * power(get(s, x_first + T.factor_var(q)), e - 1);
    for (int r = f0; r < f1; ++r)
      if (r != q) d = d * power(get(s, x_first + T.factor_var(r)), T.factor_exp(r));
    return d;
  }
  // sum + weight * dP_i / dx_v (x).
  KOKKOS_INLINE_FUNCTION C add_derivative(C sum, int s, const DeviceTerms<Space>& T, int i, int v,
                                          int x_first, const C& weight) const {
    const int column = i * sys.n + v;
    for (int c = T.column_offsets(column); c < T.column_offsets(column + 1); ++c) {
      const int m = T.column_term(c);
      sum = sum + term_derivative(s, T, m, T.column_factor(c), coefficient(T, m) * weight, x_first);
    }
    return sum;
  }
  // Adds weight * grad P_i(x) to row i of the Jacobian (polynomial i of T).
  KOKKOS_INLINE_FUNCTION void add_gradient(int s, const DeviceTerms<Space>& T, int i, int x_first,
                                           const C& weight) const {
    for (int m = T.term_offsets(i); m < T.term_offsets(i + 1); ++m) {
      const C a = coefficient(T, m) * weight;
      for (int q = T.factor_offsets(m); q < T.factor_offsets(m + 1); ++q) {
        const int v = T.factor_var(q);
        set(s, jacobian_at(i, v),
            get(s, jacobian_at(i, v)) + term_derivative(s, T, m, q, a, x_first));
      }
    }
  }
  // values := H(x, t), jacobian := H_x(x, t) at x = entries [x_first, x_first + n): a column of
  // the Jacobian a lane and a value a lane, or (sys.jacobian_by_columns false) a row and its
  // value a lane.
  KOKKOS_INLINE_FUNCTION void evaluate(const Lanes& lanes, int s, int x_first, const C& t) const {
    const int n = sys.n;
    const C start_weight = gamma * (C(1.0) - t);
    const bool by_columns = sys.jacobian_by_columns;
    lanes.for_each(0, by_columns ? 2 * n : n, [&](int item) {
      if (by_columns && item < n) {  // column v
        const int v = item;
        for (int i = 0; i < n - 1; ++i) {
          const C d = add_derivative(C(0.0), s, sys.start, i, v, x_first, start_weight);
          set(s, jacobian_at(i, v), add_derivative(d, s, sys.target, i, v, x_first, t));
        }
        set(s, jacobian_at(n - 1, v), get(s, chart_at(v)));
        return;
      }
      const int i = by_columns ? item - n : item;
      if (!by_columns) {  // row i
        for (int j = 0; j < n; ++j)
          set(s, jacobian_at(i, j), i < n - 1 ? C(0.0) : get(s, chart_at(j)));
        if (i < n - 1) {
          add_gradient(s, sys.start, i, x_first, start_weight);
          add_gradient(s, sys.target, i, x_first, t);
        }
      }
      if (i < n - 1) {
        const C g = add_value(C(0.0), s, sys.start, i, x_first, start_weight);
        set(s, value_at(i), g + add_value(C(0.0), s, sys.target, i, x_first, t));
        return;
      }
      C chart_value(-1.0);
      for (int j = 0; j < n; ++j)
        chart_value = chart_value + get(s, chart_at(j)) * get(s, x_first + j);
      set(s, value_at(n - 1), chart_value);
    });
  }
  // X := X / ||X||_2 at the entries [first, first + n), and the chart a := conj(X) (a . X = 1 in
  // the working precision): the dynamic chart, orthogonal to the path's current point, so that X
  // stays of unit size and the chart's hyperplane at infinity stays away from the path (a fixed
  // chart can pass near it: a pole of X(t) that the step control would have to crawl past).
  KOKKOS_INLINE_FUNCTION void normalize_chart(const Lanes& lanes, int s, int first) const {
    const int n = sys.n;
    const double size = lanes.sum(0, n, [&](int j) {
      const double m = magnitude<N>(get(s, first + j));
      return m * m;
    });
    const MD scale(1.0 / math::sqrt(size));
    lanes.for_each(0, n, [&](int j) { set(s, first + j, get(s, first + j) * scale); });
    MD norm2(0.0);
    for (int j = 0; j < n; ++j) {
      const C x = get(s, first + j);
      norm2 = norm2 + x.re * x.re + x.im * x.im;
    }
    lanes.for_each(0, n, [&](int j) {
      const C x = get(s, first + j);
      set(s, chart_at(j), C(x.re / norm2, -x.im / norm2));
    });
  }

  // LU with partial pivoting of the Jacobian in place, a row a lane; false when a column has no
  // pivot.
  KOKKOS_INLINE_FUNCTION bool factor(const Lanes& lanes, int s) const {
    const int n = sys.n;
    for (int k = 0; k < n; ++k) {
      int p = k;
      double best = max_part(get(s, jacobian_at(k, k)));
      for (int i = k + 1; i < n; ++i) {
        const double m = max_part(get(s, jacobian_at(i, k)));
        if (m > best) best = m, p = i;
      }
      if (!(best > 0.0) || !math::isfinite(best)) return false;
      lanes.single([&] { pivots(s, k) = p; });  // (also: every lane has read column k)
      if (p != k)
        lanes.for_each(0, n, [&](int j) {
          const C a = get(s, jacobian_at(k, j));
          set(s, jacobian_at(k, j), get(s, jacobian_at(p, j)));
          set(s, jacobian_at(p, j), a);
        });
      const C pivot = get(s, jacobian_at(k, k));
      lanes.for_each(k + 1, n, [&](int i) {
        const C l = get(s, jacobian_at(i, k)) / pivot;
        set(s, jacobian_at(i, k), l);
        for (int j = k + 1; j < n; ++j)
          set(s, jacobian_at(i, j), get(s, jacobian_at(i, j)) - l * get(s, jacobian_at(k, j)));
      });
    }
    // the solves' divisions by the pivots, here at once
    lanes.for_each(0, n,
                   [&](int k) { set(s, inverse_pivot_at(k), C(1.0) / get(s, jacobian_at(k, k))); });
    return true;
  }
  // b := J^{-1} b for b the n entries from `first`, with the factors of `factor`.
  template <class L>
  KOKKOS_INLINE_FUNCTION void solve(const L& lanes, int s, int first) const {
    const int n = sys.n;
    // the rows of L were swapped along with U: all interchanges first, then L y = P b
    lanes.single([&] {
      for (int k = 0; k < n; ++k) {
        const int p = pivots(s, k);
        if (p != k) {
          const C a = get(s, first + k);
          set(s, first + k, get(s, first + p));
          set(s, first + p, a);
        }
      }
    });
    for (int k = 0; k < n; ++k) {
      const C b = get(s, first + k);
      lanes.for_each(k + 1, n, [&](int i) {
        set(s, first + i, get(s, first + i) - get(s, jacobian_at(i, k)) * b);
      });
    }
    // by columns of U: each entry's update on its own lane
    for (int k = n - 1; k >= 0; --k) {
      const C b = get(s, first + k) * get(s, inverse_pivot_at(k));
      lanes.for_each(0, k, [&](int i) {
        set(s, first + i, get(s, first + i) - get(s, jacobian_at(i, k)) * b);
      });
      lanes.single([&] { set(s, first + k, b); });
    }
  }
  // ||J^{-1}||_1 from the factors (a column a lane).
  KOKKOS_INLINE_FUNCTION double inverse_norm(const Lanes& lanes, int s) const {
    const int n = sys.n;
    return lanes.max(0, n, [&](int j) {
      const int first = column_at(j, 0);
      for (int i = 0; i < n; ++i) set(s, first + i, C(i == j ? 1.0 : 0.0));
      solve(OneLane(), s, first);
      double column = 0;
      for (int i = 0; i < n; ++i) column += magnitude<N>(get(s, first + i));
      return column;
    });
  }

  // out[m] := sum_j a[j] b[m - j] for m in [lowest, k], a zero above degree a_top and b above
  // b_top: the terms that are exactly zero are skipped (a term's product starts as its
  // coefficient, and x's coefficient k is not known at order k), which leaves every sum as it was.
  KOKKOS_INLINE_FUNCTION static void multiply(const C (&a)[K + 1], int a_top, const C (&b)[K + 1],
                                              int b_top, C (&out)[K + 1], int lowest, int k) {
    for (int m = k; m >= lowest; --m) {
      const int last = m < a_top ? m : a_top;
      C sum(0.0);
      for (int j = m > b_top ? m - b_top : 0; j <= last; ++j) sum = sum + a[j] * b[m - j];
      out[m] = sum;
    }
  }
  // product := product * (series of x_v)^e, product zero above degree top (raised to k), x_v
  // known through degree k - 1, truncated at k; the last multiplication only from degree lowest.
  KOKKOS_INLINE_FUNCTION void multiply_power(int s, int v, int e, C (&product)[K + 1], int& top,
                                             int lowest, int k) const {
    C x[K + 1], scratch[K + 1];
    for (int j = 0; j < k; ++j) x[j] = get(s, series_at(sys.n, j, v));
    for (int r = 0; r < e; ++r) {
      const int from = r == e - 1 ? lowest : 0;
      multiply(product, top, x, k - 1, scratch, from, k);
      for (int j = from; j <= k; ++j) product[j] = scratch[j];
      top = k;
    }
  }
  // Coefficients k - 1 and k of the terms of chunk c of T at x(s), x known through degree k - 1,
  // summed into the two entries from `slot` (the Taylor recursion needs the top two: the others
  // cost a product's full series).
  KOKKOS_INLINE_FUNCTION void chunk_series(int s, const DeviceTerms<Space>& T, int c, int k,
                                           int slot) const {
    C low(0.0), high(0.0), product[K + 1];
    for (int m = T.chunk_first(c); m < T.chunk_first(c + 1); ++m) {
      const int f0 = T.factor_offsets(m), f1 = T.factor_offsets(m + 1);
      product[0] = coefficient(T, m);
      int top = 0;
      for (int q = f0; q < f1; ++q)
        multiply_power(s, T.factor_var(q), T.factor_exp(q), product, top, q == f1 - 1 ? k - 1 : 0,
                       k);
      if (k - 1 <= top) low = low + product[k - 1];
      if (k <= top) high = high + product[k];
    }
    set(s, slot, low);
    set(s, slot + 1, high);
  }
  // Coefficients k - 1 (low) and k (high) of P_i(x(s)) for the polynomial i of T: the entries of
  // its chunks (T's chunks from chunk item `first_item`), summed in order.
  KOKKOS_INLINE_FUNCTION void row_series(int s, const DeviceTerms<Space>& T, int i, int first_item,
                                         C& low, C& high) const {
    low = high = C(0.0);
    for (int c = T.chunk_offsets(i); c < T.chunk_offsets(i + 1); ++c) {
      const int slot = chunk_slot_at(first_item + c);
      low = low + get(s, slot);
      high = high + get(s, slot + 1);
    }
  }
  // Taylor coefficients c_1 .. c_K of x(t + d s) from c_0 = x (the factored Jacobian at (x, t)),
  // along the direction d in the complex t plane: each order's chunks of terms spread over the
  // lanes, then a polynomial a lane.
  KOKKOS_INLINE_FUNCTION void taylor(const Lanes& lanes, int s, const C& t, const C& d) const {
    const int n = sys.n;
    const int target_chunks = sys.target.chunk_offsets(n - 1);
    const int chunks = target_chunks + sys.start.chunk_offsets(n - 1);
    const C start_weight = gamma * (C(1.0) - t);
    for (int k = 1; k <= K; ++k) {
      lanes.for_each(0, chunks, [&](int item) {
        if (item < target_chunks)
          chunk_series(s, sys.target, item, k, chunk_slot_at(item));
        else
          chunk_series(s, sys.start, item - target_chunks, k, chunk_slot_at(item));
      });
      lanes.for_each(0, n, [&](int i) {
        if (i == n - 1) {
          set(s, rhs_at(n - 1), C(0.0));  // the chart is linear: [a . x(s) - 1]_k = a . c_k
          return;
        }
        C f0, f1, g0, g1;
        row_series(s, sys.target, i, 0, f0, f1);
        row_series(s, sys.start, i, target_chunks, g0, g1);
        // [gamma (1 - t - d s) G + (t + d s) F]_k
        const C h = start_weight * g1 - gamma * d * g0 + f1 * t + d * f0;
        set(s, rhs_at(i), -h);
      });
      solve(lanes, s, rhs_at(0));
      lanes.for_each(0, n, [&](int j) { set(s, series_at(n, k, j), get(s, rhs_at(j))); });
    }
  }
  // Majorant of the derivatives of order `order` (1 or 2) of H at radius R (row maximum):
  // sum |weight a_m| D! / (D - order)! R^(D - order) over the terms of degree D >= order.
  KOKKOS_INLINE_FUNCTION double derivative_bound(const Lanes& lanes, int s, int order,
                                                 double radius, double t,
                                                 double one_minus_t) const {
    double chart = 0;
    if (order == 1) {  // the chart's row
      for (int j = 0; j < sys.n; ++j) chart += magnitude<N>(get(s, chart_at(j)));
    }
    return math::fmax(chart, lanes.max(0, sys.n - 1, [&](int i) {
      double row = 0;
      for (int side = 0; side < 2; ++side) {
        const DeviceTerms<Space>& T = side == 0 ? sys.target : sys.start;
        const double weight = side == 0 ? t : one_minus_t;  // |t|, |1 - t| (|gamma| = 1)
        for (int m = T.term_offsets(i); m < T.term_offsets(i + 1); ++m) {
          const int d = T.term_degree(m);
          const double falling = order == 1 ? d : d * (d - 1.0);
          if (d >= order)
            row += weight * T.term_magnitude(m) * falling * math::pow(radius, d - order);
        }
      }
      return row;
    }));
  }

  // Newton's update -H_x^-1 H at (iterate, t) into the right-hand side; its size, NaN when H_x
  // has no LU.
  KOKKOS_INLINE_FUNCTION double newton_update(const Lanes& lanes, int s, const C& t) const {
    evaluate(lanes, s, iterate_at(0), t);
    if (!factor(lanes, s)) return par.not_a_number;
    lanes.for_each(0, sys.n, [&](int i) { set(s, rhs_at(i), -get(s, value_at(i))); });
    solve(lanes, s, rhs_at(0));
    return norm(lanes, s, rhs_at(0));
  }
  KOKKOS_INLINE_FUNCTION void add_update(const Lanes& lanes, int s) const {
    lanes.for_each(
        0, sys.n, [&](int j) { set(s, iterate_at(j), get(s, iterate_at(j)) + get(s, rhs_at(j))); });
  }

  // Newton at t from the iterate entries; true on convergence within the contraction rules.
  KOKKOS_INLINE_FUNCTION bool correct(const Lanes& lanes, int s, const C& t, double basin) const {
    double previous = 0;
    for (int it = 0; it < 3; ++it) {
      const double update = newton_update(lanes, s, t);
      if (!math::isfinite(update)) return false;
      // an update below the tolerance is accepted as it is (on ill-conditioned stretches it is
      // rounding noise, which no basin or contraction test can judge)
      const bool converged =
          update <= par.corrector_tolerance * (1.0 + norm(lanes, s, iterate_at(0)));
      if (!converged && it == 0 && update > basin) return false;
      if (!converged && it > 0 && update > 0.5 * previous) return false;
      add_update(lanes, s);
      if (converged) return true;
      previous = update;
    }
    return false;
  }

  // Newton on H(., 1) = F from the iterate until the updates stop decreasing (linear
  // convergence to a singular root included); true when the last update reached the working
  // precision or the noise level far below the tracking tolerance.
  KOKKOS_INLINE_FUNCTION bool refine(const Lanes& lanes, int s) const {
    double previous = 0;
    bool converged = false;
    for (int it = 0; it < max_refinements; ++it) {
      const double update = newton_update(lanes, s, C(1.0));
      if (!math::isfinite(update) || (it > 0 && update >= previous)) break;
      add_update(lanes, s);
      previous = update;
      const double scale = norm(lanes, s, iterate_at(0));
      if (update <= 64.0 * unit_roundoff<N>() * scale) return true;
      if (update <= 1e-6 * par.corrector_tolerance * scale) converged = true;
    }
    return converged;
  }

  // The predictor at the point c_0 at t along the direction d of the t plane: H and H_x there
  // (factored), eta (the Kantorovich distance to the nearest other path), the Taylor
  // coefficients; returns the step bound of Telen, Van Barel and Verschelde (in units of d: the
  // smaller of pole_fraction times the Pade pole radius and the step at which the
  // approximant's error reaches curvature_fraction eta), 0 when H_x has no LU.
  KOKKOS_INLINE_FUNCTION double step_bound(const Lanes& lanes, int s, const C& t, const C& d,
                                           double* eta, double* largest) const {
    const int n = sys.n;
    const double size = norm(lanes, s, series_at(n, 0, 0));
    evaluate(lanes, s, series_at(n, 0, 0), t);
    if (!factor(lanes, s)) return 0.0;
    *eta = 1.0 /
           (inverse_norm(lanes, s) * derivative_bound(lanes, s, 2, math::fmax(1.0, size),
                                                      magnitude<N>(t), magnitude<N>(C(1.0) - t)));
    taylor(lanes, s, t, d);
    *largest = norm(lanes, s, series_at(n, Pade::degree, 0));
    // a component a lane: the smallest pole radius (the largest finite double for none) and the
    // largest error coefficient
    const double radius = lanes.min(0, n, [&](int j) {
      const auto c = [&](int k) { return get(s, series_at(n, k, j)); };
      return Pade::has_pole<N>(c, *largest, spurious_pole) ? Pade::pole_radius<N>(c) : par.infinity;
    });
    const double error = lanes.max(0, n, [&](int j) {
      const auto c = [&](int k) { return get(s, series_at(n, k, j)); };
      return Pade::error_coefficient<N>(c, Pade::has_pole<N>(c, *largest, spurious_pole));
    });
    double h = par.pole_fraction * radius;
    if (error > 0) h = math::fmin(h, math::pow(par.curvature_fraction * *eta / error, 1.0 / K));
    return h;
  }
  // The approximant at `step` into the iterate, corrected at t_to (after step_bound).
  KOKKOS_INLINE_FUNCTION bool try_step(const Lanes& lanes, int s, const C& t_to, const MD& step,
                                       double largest, double eta) const {
    lanes.for_each(0, sys.n, [&](int j) {
      const auto c = [&](int k) { return get(s, series_at(sys.n, k, j)); };
      set(s, iterate_at(j),
          Pade::evaluate<N>(c, step, Pade::has_pole<N>(c, largest, spurious_pole)));
    });
    return correct(lanes, s, t_to, 0.25 * eta);
  }
  // The path's point := the iterate.
  KOKKOS_INLINE_FUNCTION void accept(const Lanes& lanes, int s) const {
    lanes.for_each(0, sys.n, [&](int j) { set(s, series_at(sys.n, 0, j), get(s, iterate_at(j))); });
  }
  // Entries [to, to + n) := entries [from, from + n).
  KOKKOS_INLINE_FUNCTION void copy(const Lanes& lanes, int s, int from, int to) const {
    lanes.for_each(0, sys.n, [&](int j) { set(s, to + j, get(s, from + j)); });
  }

  // max_j |c_0j - loop_start_j|: the path's point's distance from the end game's first point.
  KOKKOS_INLINE_FUNCTION double distance_from_start(const Lanes& lanes, int s) const {
    return lanes.max(0, sys.n, [&](int j) {
      return magnitude<N>(get(s, series_at(sys.n, 0, j)) - get(s, loop_start_at(j)));
    });
  }

  // Cauchy end game around t = 1 from the point c_0 at the real t = 1 - r: the path is tracked
  // on the circle t = 1 - r exp(i theta) (cauchy_samples points a loop, each chord by
  // predict_correct) until it closes after w loops, the winding number; x(1) is then the mean
  // of the w * cauchy_samples samples (the trapezoidal rule of Cauchy's integral formula in
  // (1 - t)^(1/w), exact but for terms of order (r / R)^(w samples) with R the distance to the
  // next singularity), accurate to the working precision at a singular end point where Newton's
  // method at t = 1 gains only a fraction of the digits. The chart stays fixed (the samples
  // must be values of one analytic function). Returns w with the estimate in the iterate, 0
  // when the loops do not close within max_winding and -1 when a chord fails; then the iterate
  // is no estimate (the caller goes on from loop_start, the path's point at 1 - r).
  KOKKOS_INLINE_FUNCTION int cauchy(const Lanes& lanes, int s, const MD& t) const {
    const int n = sys.n;
    const MD r = MD(1.0) - t;
    lanes.for_each(0, n, [&](int j) {
      set(s, loop_start_at(j), get(s, series_at(n, 0, j)));
      set(s, sum_at(j), C(0.0));
    });
    C from(t, MD(0.0));
    double spread = 0;  // the samples' largest distance from the first point
    for (int loop = 1; loop <= max_winding; ++loop) {
      for (int k = 1; k <= cauchy_samples; ++k) {
        const C to = C(1.0) - root_of_unity<N>(k % cauchy_samples, cauchy_samples) * r;
        const C d = to - from;
        MD done(0.0);
        double h = 1.0;
        while (to_double(MD(1.0) - done) > 0.0) {
          const double left = to_double(MD(1.0) - done);
          const C t_from = from + d * done;
          double eta = 0, largest = 0;
          h = math::fmin(h, step_bound(lanes, s, t_from, d, &eta, &largest));
          while (true) {
            if (!(h >= min_chord_step)) return -1;
            const bool last = h >= left;
            if (try_step(lanes, s, last ? to : t_from + d * MD(h), last ? MD(1.0) - done : MD(h),
                         largest, eta))
              break;
            h *= 0.5;
          }
          accept(lanes, s);
          done = h >= left ? MD(1.0) : done + MD(h);
          h = 2.0 * h;
        }
        from = to;
        lanes.for_each(0, n, [&](int j) {
          set(s, sum_at(j), get(s, sum_at(j)) + get(s, series_at(n, 0, j)));
        });
        spread = math::fmax(spread, distance_from_start(lanes, s));
      }
      const double distance = distance_from_start(lanes, s);
      const MD samples(double(loop * cauchy_samples));
      lanes.for_each(
          0, n, [&](int j) { set(s, iterate_at(j), get(s, sum_at(j)) * (MD(1.0) / samples)); });
      // back at the first point: closed (the loop's own spread is the scale; a loop that ends on
      // another branch ends about a spread away)
      if (distance <=
          closure * spread + 1024 * unit_roundoff<N>() * norm(lanes, s, loop_start_at(0)))
        return loop;
    }
    return 0;
  }

  // The end point X (iterate) in affine coordinates x = X / x_0, written back into the iterate
  // (x_0 := 1); returns ||x||_inf (infinity when x_0 = 0).
  KOKKOS_INLINE_FUNCTION double to_affine(const Lanes& lanes, int s) const {
    const int n = sys.n;
    const C x0 = get(s, iterate_at(n - 1));
    if (!(magnitude<N>(x0) > 0.0)) return par.infinity;
    lanes.for_each(0, n - 1, [&](int j) { set(s, iterate_at(j), get(s, iterate_at(j)) / x0); });
    lanes.single([&] { set(s, iterate_at(n - 1), C(1.0)); });
    return lanes.max(0, n - 1, [&](int j) { return magnitude<N>(get(s, iterate_at(j))); });
  }

  // Refines and classifies the end point; residual max_i |F_i(x)| and the condition number
  // ||F_x^-1||_1 times the derivative majorant (relative to the coefficients' size) at x.
  // A Cauchy end point of winding number w >= 2 is singular and not refined (Newton's method
  // would lose the digits the end game gained).
  KOKKOS_INLINE_FUNCTION int finish(const Lanes& lanes, int s, double* size, double* residual,
                                    double* condition, int winding) const {
    const int n = sys.n;
    const bool converged = winding >= 2 || refine(lanes, s);
    *size = to_affine(lanes, s);
    if (!math::isfinite(*size)) {
      *residual = *condition = par.not_a_number;
      return *size > 0 ? 2 : 3;
    }
    evaluate(lanes, s, iterate_at(0), C(1.0));
    *residual = lanes.max(0, n - 1, [&](int i) { return magnitude<N>(get(s, value_at(i))); });
    *condition = factor(lanes, s)
                     ? inverse_norm(lanes, s) *
                           derivative_bound(lanes, s, 1, math::fmax(1.0, *size), 1.0, 0.0)
                     : par.infinity;
    if (*size > par.infinity_threshold) return 2;
    if (!math::isfinite(*residual)) return 3;
    // a solution has a residual at the rounding level of its terms (at a singular root too: the
    // residual is of the order of the error to the power of the multiplicity)
    // max_i sum_m |a_m x^m| over the terms of F_i at x
    const double scale = lanes.max(0, n - 1, [&](int i) {
      double row = 0;
      const DeviceTerms<Space>& T = sys.target;
      for (int m = T.term_offsets(i); m < T.term_offsets(i + 1); ++m) {
        double term = T.term_magnitude(m);
        for (int q = T.factor_offsets(m); q < T.factor_offsets(m + 1); ++q)
          term *= math::pow(magnitude<N>(get(s, iterate_at(T.factor_var(q)))), T.factor_exp(q));
        row += term;
      }
      return row;
    });
    const bool solution = *residual <= par.residual_tolerance * scale;
    if (!(*condition <= par.singular_condition) || winding >= 2) {
      // x_0 -> 0 at a singular point in projective coordinates: a path to infinity that the
      // linearly converging refinement approached only to about the root of the precision
      return solution && *size <= math::sqrt(par.infinity_threshold) ? 1 : 2;
    }
    return converged && solution ? 0 : 3;
  }

  // Team thread r of team l tracks the path in slot l * team_size + r.
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const int s = member.league_rank() * member.team_size() + member.team_rank();
    if (s < int(paths.extent(0))) track(Lanes{member}, s);
  }

  KOKKOS_INLINE_FUNCTION void track(const Lanes& lanes, const int s) const {
    const int n = sys.n;
    // start solution (given, or roots of unity; x_0 = 1)
    if (start_points.extent(0) > 0) {
      lanes.for_each(0, n - 1, [&](int j) {
        C z;
        for (int l = 0; l < N; ++l) {
          z.re.limb[l] = start_points(s, 2 * N * j + l);
          z.im.limb[l] = start_points(s, 2 * N * j + N + l);
        }
        set(s, series_at(n, 0, j), z);
      });
    } else {
      lanes.single([&] {
        total_degree_start<N>(paths(s), sys.degrees, n - 1,
                              [&](int j, const C& z) { set(s, series_at(n, 0, j), z); });
      });
    }
    lanes.single([&] { set(s, series_at(n, 0, n - 1), C(1.0)); });
    MD t(0.0);
    int steps = 0, rejections = 0, status = status_tracking;
    bool endgame = false;
    // The end game may start only where 1 - t is below this: with par.endgame_retry, after a
    // Cauchy end game that did not close (a chord failed, or no winding number within
    // max_winding loops) at radius r, the steps go on from its first point and the game is
    // tried again below r / 10 (the collapse that started it can be a near approach of another
    // path, not the end's singularity: cyclic 7's path 1427 with seed 1 collapsed at
    // 1 - t = 0.07 and failed in Newton's method at t = 1 from there; with seed 2021, path 172
    // reached 1 - t = 1e-6 at |x| = 7.3 on its way to a regular end of condition 1e7 at
    // |x| = 9.41, where Newton's method failed too). Not in the first pass: there most such
    // paths go to infinity, where the steps would crawl to max_steps.
    double endgame_below = par.infinity;
    // Every quarter of max_steps the path is checked for divergence over that quarter's second
    // half (a crawl to infinity stops there, not at max_steps); at max_steps it is at infinity
    // if diverging, else failed.
    const int quarter = par.max_steps / 4 > 2 ? par.max_steps / 4 : 2;
    Divergence divergence;
    divergence.next = par.endgame_stall;
    int winding = 1;
    while (status == status_tracking) {
      while (status == status_tracking) {
        const double remaining = to_double(MD(1.0) - t);
        normalize_chart(lanes, s, series_at(n, 0, 0));
        const double size = norm(lanes, s, series_at(n, 0, 0));
        if (!math::isfinite(size)) {
          status = 3;
          break;
        }
        if (remaining <= 0.0 || endgame) break;
        if (steps % quarter == quarter / 2) {
          divergence.mid_remaining = remaining;
          divergence.mid_size = affine_size(lanes, s, series_at(n, 0, 0));
        }
        if (steps > 0 && (steps % quarter == 0 || steps >= par.max_steps)) {
          const bool infinite =
              diverging(remaining, affine_size(lanes, s, series_at(n, 0, 0)),
                        divergence.mid_remaining, divergence.mid_size, par.diverging_size);
          if (infinite || steps >= par.max_steps) {
            status = infinite ? 2 : 3;
            break;
          }
        }
        double eta = 0, largest = 0;
        double h =
            math::fmin(step_bound(lanes, s, C(t, MD(0.0)), C(1.0), &eta, &largest), par.max_step);
        if (!(h > 0.0)) {
          status = 3;
          break;
        }
        if (at_infinity(lanes, s, divergence, steps, remaining, eta)) {
          status = 2;
          break;
        }
        const bool endgame_allowed = remaining <= par.endgame_stall && remaining < endgame_below;
        while (true) {
          if ((remaining <= par.endgame_distance && remaining < endgame_below && h < remaining) ||
              (endgame_allowed && h < par.endgame_collapse * remaining)) {
            endgame = true;  // too close to a singular end to step, or the steps collapse near it
            break;
          }
          const bool last = h >= remaining;
          const MD t_new = last ? MD(1.0) : t + MD(h);
          if (try_step(lanes, s, C(t_new, MD(0.0)), last ? MD(1.0) - t : MD(h), largest, eta)) {
            accept(lanes, s);
            t = t_new;
            ++steps;
            break;
          }
          ++rejections;
          h *= 0.5;
          if (h < par.min_step) {
            // the corrector fails at any step: near the end that is the ill-conditioning of a
            // singular end point (the end game takes over), elsewhere a failure
            if (endgame_allowed)
              endgame = true;
            else
              status = 3;
            break;
          }
        }
      }
      if (status != status_tracking || !endgame) {  // failed, or reached t = 1 by steps
        copy(lanes, s, series_at(n, 0, 0), iterate_at(0));
        break;
      }
      const double radius = to_double(MD(1.0) - t);
      winding = cauchy(lanes, s, t);
      // (not where the path's |x| is above diverging_size: on its way to infinity, where the
      // steps would crawl through every decade down to the floor)
      if (winding <= 0 && par.endgame_retry && radius > endgame_floor &&
          affine_size(lanes, s, loop_start_at(0)) <= par.diverging_size) {
        // not closed: back to the first point of the loops, steps towards a smaller radius
        copy(lanes, s, loop_start_at(0), series_at(n, 0, 0));
        endgame = false;
        endgame_below = 0.1 * radius;
        winding = 1;
        continue;
      }
      // loops that did not close or a chord that failed: Newton's method at t = 1 from the path's
      // point at 1 - r
      if (winding <= 0) copy(lanes, s, loop_start_at(0), iterate_at(0));
      t = MD(1.0);
      break;
    }
    double size = 0, residual = par.not_a_number, condition = par.not_a_number;
    if (status == status_tracking) {
      status = finish(lanes, s, &size, &residual, &condition, winding);
    } else {
      size = to_affine(lanes, s);
    }
    lanes.for_each(0, n - 1, [&](int j) {
      const C x = get(s, iterate_at(j));
      for (int l = 0; l < N; ++l) {
        solution(s, 2 * N * j + l) = x.re.limb[l];
        solution(s, 2 * N * j + N + l) = x.im.limb[l];
      }
    });
    lanes.single([&] {
      counts(s, 0) = status;
      counts(s, 1) = steps;
      counts(s, 2) = rejections;
      counts(s, 3) = winding < 0 ? 0 : winding;
      measures(s, 0) = to_double(t);
      measures(s, 1) = residual;
      measures(s, 2) = condition;
      measures(s, 3) = size;
    });
  }
};
}  // namespace Impl
}  // namespace series
}  // namespace kosmos
