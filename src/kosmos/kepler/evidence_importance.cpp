// ln Z by importance sampling around the optimization stages' optimum (survey_evidence's
// screening; impl/evidence.hpp). Per (star, count), all stars in the same likelihood launches:
// the diagonal of the ln L Hessian (to size the steps), the whole Hessian, then the proposal's
// draws. Coordinates phi: the free parameters with each planet's sampled (h, k) = sqrt(e) (cos w,
// sin w) replaced by (u, w) = e (cos w, sin w), in which ln L is smooth and close to quadratic
// at e = 0; the prior density there is the sampled one over the Jacobian 2 e.
#include <kosmos/core/error.hpp>
#include <kosmos/kepler/impl/de_mcmc.hpp>
#include <kosmos/kepler/impl/evidence.hpp>
#include <kosmos/kepler/impl/parameter_scale.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>

namespace kosmos {
namespace kepler {
namespace Impl {
namespace {
constexpr double kDegreesOfFreedom = 5;  // the Student-t proposal's
constexpr double kDefensiveShare = 0.1;  // of the draws from the defensive part
// Fewer effective draws than this: the proposal does not describe the posterior.
constexpr double kMinEffectiveDraws = 100;
// The smallest eigenvalue of a proposal's precision (or scale) matrix in correlation form.
constexpr double kEigenvalueFloor = 0.02;
// Rounds of draws: each but the last moves the proposal to its draws' weighted moments.
constexpr int kRounds = 5;
// A last round short of kMinEffectiveDraws by up to this factor runs again this much larger.
constexpr int kRetryFactor = 4;
// Stars whose draws share one likelihood (and its launches).
constexpr std::size_t kStarsPerLaunch = 128;
constexpr double kPi = kTwoPi / 2;

double log_sum_exp(const std::vector<double>& x) {
  double top = -HUGE_VAL;
  for (double v : x) top = std::max(top, v);
  if (!(top > -HUGE_VAL)) return top;
  double sum = 0;
  for (double v : x) sum += std::exp(v - top);
  return top + std::log(sum);
}

// ln(e^a + e^b) without a vector.
double log_add_exp(double a, double b) {
  const double top = std::max(a, b);
  if (!(top > -HUGE_VAL)) return top;
  return top + std::log(std::exp(a - top) + std::exp(b - top));
}

// Lower Cholesky factor of the symmetric m x m matrix a (row-major) in place; false unless
// positive definite.
bool cholesky(std::vector<double>& a, int m) {
  for (int j = 0; j < m; ++j) {
    double d = a[j * m + j];
    for (int k = 0; k < j; ++k) d -= a[j * m + k] * a[j * m + k];
    if (!(d > 0)) return false;
    d = std::sqrt(d);
    a[j * m + j] = d;
    for (int i = j + 1; i < m; ++i) {
      double s = a[i * m + j];
      for (int k = 0; k < j; ++k) s -= a[i * m + k] * a[j * m + k];
      a[i * m + j] = s / d;
    }
    for (int k = j + 1; k < m; ++k) a[j * m + k] = 0;
  }
  return true;
}

// The inverse of a symmetric positive definite matrix from its lower Cholesky factor.
std::vector<double> inverse_from_cholesky(const std::vector<double>& c, int m) {
  std::vector<double> inv(std::size_t(m * m), 0.0), col(static_cast<std::size_t>(m));
  for (int e = 0; e < m; ++e) {
    for (int i = 0; i < m; ++i) {  // c y = unit e
      double s = i == e ? 1.0 : 0.0;
      for (int k = 0; k < i; ++k) s -= c[i * m + k] * col[std::size_t(k)];
      col[std::size_t(i)] = s / c[i * m + i];
    }
    for (int i = m - 1; i >= 0; --i) {  // c^T x = y
      double s = col[std::size_t(i)];
      for (int k = i + 1; k < m; ++k) s -= c[k * m + i] * col[std::size_t(k)];
      col[std::size_t(i)] = s / c[i * m + i];
    }
    for (int i = 0; i < m; ++i) inv[std::size_t(i * m + e)] = col[std::size_t(i)];
  }
  return inv;
}

// Eigenvalues and eigenvectors (columns of `vectors`) of the symmetric m x m matrix a (cyclic
// Jacobi rotations).
void symmetric_eigen(std::vector<double> a, int m, std::vector<double>& values,
                     std::vector<double>& vectors) {
  vectors.assign(std::size_t(m * m), 0.0);
  for (int i = 0; i < m; ++i) vectors[std::size_t(i * m + i)] = 1;
  auto at = [m](std::vector<double>& x, int i, int j) -> double& {
    return x[std::size_t(i * m + j)];
  };
  for (int sweep = 0; sweep < 50; ++sweep) {
    double off = 0;
    for (int i = 0; i < m; ++i)
      for (int j = i + 1; j < m; ++j) off += at(a, i, j) * at(a, i, j);
    if (off < 1e-22) break;
    for (int p = 0; p < m; ++p)
      for (int q = p + 1; q < m; ++q) {
        if (std::fabs(at(a, p, q)) < 1e-300) continue;
        const double theta = (at(a, q, q) - at(a, p, p)) / (2 * at(a, p, q));
        const double t = (theta >= 0 ? 1 : -1) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < m; ++k) {  // columns p, q
          const double akp = at(a, k, p), akq = at(a, k, q);
          at(a, k, p) = c * akp - s * akq;
          at(a, k, q) = s * akp + c * akq;
        }
        for (int k = 0; k < m; ++k) {  // rows p, q
          const double apk = at(a, p, k), aqk = at(a, q, k);
          at(a, p, k) = c * apk - s * aqk;
          at(a, q, k) = s * apk + c * aqk;
        }
        for (int k = 0; k < m; ++k) {
          const double vkp = at(vectors, k, p), vkq = at(vectors, k, q);
          at(vectors, k, p) = c * vkp - s * vkq;
          at(vectors, k, q) = s * vkp + c * vkq;
        }
      }
  }
  values.resize(std::size_t(m));
  for (int i = 0; i < m; ++i) values[std::size_t(i)] = at(a, i, i);
}

// The symmetric m x m matrix a (positive diagonal) with the eigenvalues of its correlation form
// raised to at least `floor`: positive definite, no direction more than 1 / sqrt(floor) times
// the narrowest conditional width apart from the diagonal's.
std::vector<double> with_eigenvalue_floor(const std::vector<double>& a, int m, double floor) {
  std::vector<double> d(static_cast<std::size_t>(m)), r(static_cast<std::size_t>(m * m)), values,
      vectors;
  for (int i = 0; i < m; ++i) d[std::size_t(i)] = std::sqrt(a[std::size_t(i * m + i)]);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j)
      r[std::size_t(i * m + j)] =
          a[std::size_t(i * m + j)] / (d[std::size_t(i)] * d[std::size_t(j)]);
  symmetric_eigen(r, m, values, vectors);
  std::vector<double> out(std::size_t(m * m), 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) {
      double v = 0;
      for (int k = 0; k < m; ++k)
        v += vectors[std::size_t(i * m + k)] * std::max(values[std::size_t(k)], floor) *
             vectors[std::size_t(j * m + k)];
      out[std::size_t(i * m + j)] = v * d[std::size_t(i)] * d[std::size_t(j)];
    }
  return out;
}

// A multivariate Student-t of the entries `dims` of phi: its centre and the Cholesky factor of
// its scale matrix.
struct StudentT {
  std::vector<int> dims;
  std::vector<double> mean, chol;
  double log_normalization = 0;  // of the density: the Gamma functions and -ln sqrt(det)

  // From the centre phi and the full scale matrix (m x m) restricted to `dims`.
  bool build(const std::vector<double>& phi, const std::vector<double>& scale, int m,
             std::vector<int> which) {
    dims = std::move(which);
    const int n = int(dims.size());
    mean.clear();
    chol.assign(std::size_t(n * n), 0.0);
    for (int i = 0; i < n; ++i) {
      mean.push_back(phi[std::size_t(dims[std::size_t(i)])]);
      for (int j = 0; j < n; ++j)
        chol[std::size_t(i * n + j)] =
            scale[std::size_t(dims[std::size_t(i)] * m + dims[std::size_t(j)])];
    }
    if (!cholesky(chol, n)) return false;
    double half_log_det = 0;
    for (int i = 0; i < n; ++i) half_log_det += std::log(chol[std::size_t(i * n + i)]);
    const double nu = kDegreesOfFreedom;
    log_normalization = std::lgamma(0.5 * (nu + n)) - std::lgamma(0.5 * nu) -
                        0.5 * n * std::log(nu * kPi) - half_log_det;
    return true;
  }
  void draw(std::mt19937_64& rng, std::vector<double>& phi) const {
    const int n = int(dims.size());
    std::normal_distribution<double> gauss(0.0, 1.0);
    std::chi_squared_distribution<double> chi2(kDegreesOfFreedom);
    thread_local std::vector<double> z;
    z.resize(std::size_t(n));
    for (auto& v : z) v = gauss(rng);
    const double stretch = std::sqrt(kDegreesOfFreedom / chi2(rng));
    for (int i = 0; i < n; ++i) {
      double s = 0;
      for (int k = 0; k <= i; ++k) s += chol[std::size_t(i * n + k)] * z[std::size_t(k)];
      phi[std::size_t(dims[std::size_t(i)])] = mean[std::size_t(i)] + stretch * s;
    }
  }
  double log_density(const std::vector<double>& phi) const {
    const int n = int(dims.size());
    const double nu = kDegreesOfFreedom;
    thread_local std::vector<double> y;
    y.resize(std::size_t(n));
    double distance = 0;
    for (int i = 0; i < n; ++i) {
      double s = phi[std::size_t(dims[std::size_t(i)])] - mean[std::size_t(i)];
      for (int k = 0; k < i; ++k) s -= chol[std::size_t(i * n + k)] * y[std::size_t(k)];
      y[std::size_t(i)] = s / chol[std::size_t(i * n + i)];
      distance += y[std::size_t(i)] * y[std::size_t(i)];
    }
    return log_normalization - 0.5 * (nu + n) * std::log1p(distance / nu);
  }
};

// The map between a model's sampled vector theta and the proposal's coordinates phi.
struct Coordinates {
  std::vector<int> free;                     // the theta entry of each phi entry
  std::vector<int> u, w, K, lambda, jitter;  // phi entries per planet / instrument
  std::vector<double> theta_fixed;           // theta with the fixed values

  explicit Coordinates(const Model& m) {
    const ParamLayout& L = m.L;
    theta_fixed.assign(std::size_t(L.dim()), 0.0);
    m.apply_fixed(theta_fixed.data());
    auto phi_index = [&](int d) {
      return int(std::find(free.begin(), free.end(), d) - free.begin());
    };
    for (int d = 0; d < L.dim(); ++d)
      if (!m.is_fixed(d)) free.push_back(d);
    for (int j = 0; j < L.n_pl; ++j) {
      u.push_back(phi_index(L.h(j)));
      w.push_back(phi_index(L.k(j)));
      K.push_back(phi_index(L.K(j)));
      lambda.push_back(phi_index(L.lambda(j)));
    }
    for (int i = 0; i < L.n_inst; ++i)
      if (!m.is_fixed(L.jitter(i))) jitter.push_back(phi_index(L.jitter(i)));
  }
  int size() const { return int(free.size()); }
  std::vector<double> phi_of(const std::vector<double>& theta) const {
    std::vector<double> phi;
    for (int d : free) phi.push_back(theta[std::size_t(d)]);
    for (std::size_t j = 0; j < u.size(); ++j) {  // e cos w = sqrt(e) h
      const double h = phi[std::size_t(u[j])], k = phi[std::size_t(w[j])];
      const double root_e = std::sqrt(h * h + k * k);
      phi[std::size_t(u[j])] = root_e * h;
      phi[std::size_t(w[j])] = root_e * k;
    }
    return phi;
  }
  // theta of phi and ln |d theta / d phi| = -sum_j ln(2 e_j); false where phi is outside the
  // sampled domain (K < 0, a jitter < 0, e >= 1). symmetric: K < 0 and jitters < 0 map to the
  // same orbit and jitter (K -> -K, omega and lambda + pi; s -> |s|), ln L being even there (the
  // Hessian's stencil at K or s near 0).
  bool theta_of(const std::vector<double>& phi_in, std::vector<double>& theta, double& log_jacobian,
                bool symmetric) const {
    thread_local std::vector<double> phi;
    phi = phi_in;
    log_jacobian = 0;
    for (std::size_t j = 0; j < u.size(); ++j) {
      double& K_j = phi[std::size_t(K[j])];
      if (K_j < 0) {
        if (!symmetric) return false;
        K_j = -K_j;
        phi[std::size_t(u[j])] = -phi[std::size_t(u[j])];
        phi[std::size_t(w[j])] = -phi[std::size_t(w[j])];
        phi[std::size_t(lambda[j])] += kPi;
      }
      const double uj = phi[std::size_t(u[j])], wj = phi[std::size_t(w[j])];
      const double e = std::hypot(uj, wj);
      if (!(e < 1)) return false;
      const double root_e = std::sqrt(e);
      phi[std::size_t(u[j])] = e > 0 ? uj / root_e : 0.0;
      phi[std::size_t(w[j])] = e > 0 ? wj / root_e : 0.0;
      log_jacobian -= std::log(2 * std::max(e, 1e-300));
    }
    for (int i : jitter) {
      double& s = phi[std::size_t(i)];
      if (s < 0) {
        if (!symmetric) return false;
        s = -s;
      }
    }
    theta = theta_fixed;
    for (std::size_t i = 0; i < free.size(); ++i) theta[std::size_t(free[i])] = phi[i];
    return true;
  }
};

// ln of the prior's normalization: its volume in theta for the box-bounded entries, and the
// Gaussian priors' constants (prior_log_density leaves them out).
double log_prior_volume(const Model& m) {
  const ParamLayout& L = m.L;
  const PriorBounds& b = m.bounds;
  double v = L.n_pl * (std::log(b.lnP_max - b.lnP_min) + std::log(b.k_max) +
                       std::log(kPi * b.e_max) + std::log(kTwoPi));
  for (int i = 0; i < L.n_inst; ++i) {
    if (m.is_fixed(L.jitter(i))) continue;
    double lower = 0, upper = b.s_max;
    for (const auto& t : m.terms)
      if (t.target == target_jitter && t.index == i) {
        lower = std::max(lower, t.a);
        upper = std::min(upper, t.b);
      }
    v += std::log(upper - lower);
  }
  for (const auto& t : m.terms)
    if (t.target != target_jitter)
      v += t.kind == kind_uniform ? std::log(t.b - t.a) : std::log(t.b * std::sqrt(kTwoPi));
  return v;
}

// The second differences of ln L about phi with steps h: rows phi, phi +- h_i, and with
// off_diagonal phi +-h_i +-h_j (i < j).
std::vector<std::vector<double>> stencil(const std::vector<double>& phi,
                                         const std::vector<double>& h, bool off_diagonal) {
  const int m = int(phi.size());
  std::vector<std::vector<double>> rows{phi};
  for (int i = 0; i < m; ++i)
    for (double sign : {1.0, -1.0}) {
      rows.push_back(phi);
      rows.back()[std::size_t(i)] += sign * h[std::size_t(i)];
    }
  if (off_diagonal)
    for (int i = 0; i < m; ++i)
      for (int j = i + 1; j < m; ++j)
        for (double si : {1.0, -1.0})
          for (double sj : {1.0, -1.0}) {
            rows.push_back(phi);
            rows.back()[std::size_t(i)] += si * h[std::size_t(i)];
            rows.back()[std::size_t(j)] += sj * h[std::size_t(j)];
          }
  return rows;
}

// -d2 ln L / d phi2 from the stencil's values f (diagonal only unless off_diagonal).
std::vector<double> negative_hessian(const std::vector<double>& f, const std::vector<double>& h,
                                     bool off_diagonal) {
  const int m = int(h.size());
  std::vector<double> H(std::size_t(m * m), 0.0);
  for (int i = 0; i < m; ++i)
    H[std::size_t(i * m + i)] =
        -(f[std::size_t(1 + 2 * i)] - 2 * f[0] + f[std::size_t(2 + 2 * i)]) /
        (h[std::size_t(i)] * h[std::size_t(i)]);
  if (!off_diagonal) return H;
  std::size_t r = std::size_t(1 + 2 * m);
  for (int i = 0; i < m; ++i)
    for (int j = i + 1; j < m; ++j, r += 4) {
      const double v =
          -(f[r] - f[r + 1] - f[r + 2] + f[r + 3]) / (4 * h[std::size_t(i)] * h[std::size_t(j)]);
      H[std::size_t(i * m + j)] = H[std::size_t(j * m + i)] = v;
    }
  return H;
}

// The mixture proposal: a Student-t of all entries and, with share kDefensiveShare, the
// Student-t of the regular entries times the prior's shape of each (u, w) (uniform in (h, k)
// within e < e_high) and each jitter (uniform in [0, s_high]).
struct Proposal {
  std::vector<double> centre;  // mean longitudes of draws within pi of it
  StudentT full, regular;
  std::vector<double> e_high, s_high;
  // Whether a mean longitude's scale exceeds 0.5 rad: the density sums the turns either side
  // (else they are 12.6 scales away, under 1e-12 of it).
  bool wrapped = false;
};

// One (star, count) through the stages.
struct Work {
  const LadderStar* star = nullptr;
  Model model, wide;  // the star's model; the same without bounds that a stencil could cross
  std::unique_ptr<Coordinates> coords;
  std::vector<double> phi_hat, steps;
  Proposal proposal, best;  // the current one; the one of the round with the most effective draws
  double best_ess = -1;
  bool retry = false;  // the last round's draws fell short: draw again, more
  std::mt19937_64 rng;
  std::vector<double> log_weight;         // of the current round's draws
  std::vector<std::vector<double>> rows;  // phi rows of the current stage
  std::vector<char> inside;               // per row: theta inside the wide model's domain
  std::vector<double> theta;              // the current stage's theta rows (rows x dim)
  std::vector<double> log_jacobian;
  bool usable = true;
  std::string reason;
  ImportanceRun run;

  Work(const LadderStar& s, Model m, Model wide_model)
      : star(&s), model(std::move(m)), wide(std::move(wide_model)) {}
  void fail(const std::string& why) {
    if (usable) reason = why;
    usable = false;
  }
  // theta rows of `rows` (rows outside the domain get the optimum, flagged in `inside`).
  void stage_rows(bool symmetric) {
    const std::size_t dim = std::size_t(model.L.dim());
    theta.assign(rows.size() * dim, 0.0);
    inside.assign(rows.size(), 0);
    log_jacobian.assign(rows.size(), 0.0);
    std::vector<double> t;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      bool ok = coords->theta_of(rows[r], t, log_jacobian[r], symmetric) &&
                wide.log_prior(t.data()) > kNegInf;
      if (!ok) t = *star->optimum;
      inside[r] = ok ? 1 : 0;
      std::copy(t.begin(), t.end(), theta.begin() + std::ptrdiff_t(r * dim));
    }
  }
};

// The defensive part's log density at phi less the Student-t of its regular entries: the
// prior's shape of (u, w) (uniform in (h, k) within e < e_high) and of each jitter (uniform in
// [0, s_high]).
double log_defensive_rest(const Work& w, const std::vector<double>& phi) {
  const Coordinates& c = *w.coords;
  double lq = 0;
  for (std::size_t j = 0; j < c.u.size(); ++j) {
    const double e = std::hypot(phi[std::size_t(c.u[j])], phi[std::size_t(c.w[j])]);
    if (!(e < w.proposal.e_high[j])) return kNegInf;
    lq -= std::log(kPi * w.proposal.e_high[j]) + std::log(2 * std::max(e, 1e-300));
  }
  for (std::size_t i = 0; i < c.jitter.size(); ++i) {
    const double s = phi[std::size_t(c.jitter[i])];
    if (!(s >= 0 && s <= w.proposal.s_high[i])) return kNegInf;
    lq -= std::log(w.proposal.s_high[i]);
  }
  return lq;
}

// ln q(phi) of the mixture, each part wrapped over the planets' mean longitudes (the target is
// periodic in them; phi's are within pi of the centre, the scales under 1 rad).
double log_proposal(const Work& w, const std::vector<double>& phi) {
  const Coordinates& c = *w.coords;
  const int n = int(c.lambda.size());
  int combinations = 1;
  if (w.proposal.wrapped)
    for (int j = 0; j < n; ++j) combinations *= 3;
  constexpr double turns[] = {0, -1, 1};
  thread_local std::vector<double> full, regular, shifted;
  full.clear();
  regular.clear();
  shifted = phi;
  for (int code = 0; code < combinations; ++code) {
    int rest = code;
    for (int j = 0; j < n; ++j, rest /= 3)
      shifted[std::size_t(c.lambda[std::size_t(j)])] =
          phi[std::size_t(c.lambda[std::size_t(j)])] + kTwoPi * turns[rest % 3];
    full.push_back(w.proposal.full.log_density(shifted));
    regular.push_back(w.proposal.regular.log_density(shifted));
  }
  const double defensive = log_defensive_rest(w, phi);
  return log_add_exp(
      std::log(1 - kDefensiveShare) + log_sum_exp(full),
      defensive > kNegInf ? std::log(kDefensiveShare) + log_sum_exp(regular) + defensive : kNegInf);
}

// A draw of the mixture, its mean longitudes within pi of the centre.
std::vector<double> draw_proposal(const Work& w, std::mt19937_64& rng) {
  const Coordinates& c = *w.coords;
  std::vector<double> phi = w.proposal.centre;
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  if (u01(rng) >= kDefensiveShare) {
    w.proposal.full.draw(rng, phi);
  } else {
    w.proposal.regular.draw(rng, phi);
    for (std::size_t j = 0; j < c.u.size(); ++j) {  // (h, k) uniform in the disk of radius
      const double e = w.proposal.e_high[j] * u01(rng), angle = kTwoPi * u01(rng);  // sqrt(e_high)
      phi[std::size_t(c.u[j])] = e * std::cos(angle);
      phi[std::size_t(c.w[j])] = e * std::sin(angle);
    }
    for (std::size_t i = 0; i < c.jitter.size(); ++i)
      phi[std::size_t(c.jitter[i])] = w.proposal.s_high[i] * u01(rng);
  }
  for (int l : c.lambda) {
    const double centre = w.proposal.centre[std::size_t(l)];
    phi[std::size_t(l)] = centre + std::remainder(phi[std::size_t(l)] - centre, kTwoPi);
  }
  return phi;
}

// The likelihood of the items' wide models, one per item in order.
std::unique_ptr<Likelihood> likelihood_of(const std::vector<Work*>& items,
                                          const SearchOptions& opt) {
  HostObservations obs;
  std::vector<int> begin, count;
  std::vector<Model> models;
  for (Work* w : items) {
    const RVData& data = *w->star->data;
    begin.push_back(int(obs.t.size()));
    count.push_back(int(data.size()));
    obs.append(data, w->model.epoch, opt);
    models.push_back(w->wide);
  }
  return make_likelihood(obs, models, begin, count, opt);
}

// ln L of the rows of the items that `takes` in one batched evaluation of lik (the items'
// likelihood); the others' slots get the optimum and give no values. Per taken item in order,
// its rows' values (-inf outside the domain).
template <class Takes>
void evaluate(const std::vector<Work*>& items, Likelihood& lik, const Takes& takes,
              std::vector<double>& loglike) {
  std::size_t rows = 1;
  for (Work* w : items)
    if (takes(*w)) rows = std::max(rows, w->rows.size());
  std::vector<std::vector<double>> padded(items.size());  // items short of `rows` rows
  std::vector<const double*> x;
  for (std::size_t s = 0; s < items.size(); ++s) {
    Work& w = *items[s];
    const bool taken = takes(w);
    if (taken && w.rows.size() == rows) {
      x.push_back(w.theta.data());
      continue;
    }
    if (taken) padded[s] = w.theta;
    while (padded[s].size() < rows * w.star->optimum->size())
      padded[s].insert(padded[s].end(), w.star->optimum->begin(), w.star->optimum->end());
    x.push_back(padded[s].data());
  }
  std::vector<double> logpost, all;
  lik.evaluate_stars(x, int(rows), logpost, &all, nullptr);
  loglike.clear();
  for (std::size_t s = 0; s < items.size(); ++s)
    if (takes(*items[s]))
      for (std::size_t r = 0; r < items[s]->rows.size(); ++r)
        loglike.push_back(items[s]->inside[r] ? all[s * rows + r] : kNegInf);
}

// The parameter names of a model's phi entries (for messages).
std::string phi_name(const Work& w, int i) {
  const ParamLayout& L = w.model.L;
  const int d = w.coords->free[std::size_t(i)];
  static const char* planet_names[] = {"ln P", "K", "e cos w", "e sin w", "lambda"};
  std::ostringstream name;
  if (d < 5 * L.n_pl)
    name << planet_names[d % 5] << " of planet "
         << "bcdefghi"[d / 5];
  else
    name << "parameter " << d;
  return name.str();
}
// The mixture of the proposal about `centre` with scale matrix `scale` (m x m); false (the
// reason in w) where a phase is unconstrained or the matrix is not positive definite.
bool set_proposal(Work& w, const std::vector<double>& centre, const std::vector<double>& scale) {
  const Coordinates& c = *w.coords;
  const int m = c.size();
  w.proposal.centre = centre;
  w.proposal.wrapped = false;
  for (std::size_t j = 0; j < c.lambda.size(); ++j) {
    w.proposal.wrapped =
        w.proposal.wrapped || scale[std::size_t(c.lambda[j] * m + c.lambda[j])] > 0.25;
    if (!(scale[std::size_t(c.lambda[j] * m + c.lambda[j])] < 1)) {
      w.fail("the phase of planet " + std::string(1, "bcdefghi"[j]) +
             " is not constrained (its width exceeds 1 rad)");
      return false;
    }
  }
  std::vector<int> all(static_cast<std::size_t>(m)), regular;
  for (int i = 0; i < m; ++i) all[std::size_t(i)] = i;
  for (int i = 0; i < m; ++i)
    if (std::find(c.u.begin(), c.u.end(), i) == c.u.end() &&
        std::find(c.w.begin(), c.w.end(), i) == c.w.end() &&
        std::find(c.jitter.begin(), c.jitter.end(), i) == c.jitter.end())
      regular.push_back(i);
  if (!w.proposal.full.build(centre, scale, m, all) ||
      !w.proposal.regular.build(centre, scale, m, regular)) {
    w.fail("the proposal's scale matrix is not positive definite");
    return false;
  }
  auto width = [&](int i) { return std::sqrt(scale[std::size_t(i * m + i)]); };
  w.proposal.e_high.clear();
  w.proposal.s_high.clear();
  for (std::size_t j = 0; j < c.u.size(); ++j) {
    const double e = std::hypot(centre[std::size_t(c.u[j])], centre[std::size_t(c.w[j])]);
    w.proposal.e_high.push_back(
        std::min(w.model.bounds.e_max, e + 4 * std::max(width(c.u[j]), width(c.w[j]))));
  }
  for (int i : c.jitter)
    w.proposal.s_high.push_back(
        std::min(w.model.bounds.s_max, std::max(0.0, centre[std::size_t(i)]) + 4 * width(i)));
  return true;
}

// One round of importance sampling for every active item: `draws` draws of its proposal, their
// ln L in one batched evaluation, their ln weights ln L + ln pi + ln |d theta / d phi| - ln q
// (pi without its normalization; -inf outside the prior).
template <class Takes>
void importance_round(const std::vector<Work*>& all, Likelihood& lik, const Takes& takes,
                      int draws) {
  std::vector<Work*> items;
  for (Work* w : all)
    if (takes(*w)) items.push_back(w);
  host_for(
      "kosmos::kepler::survey_evidence::draws", items.size(),
      [&](const std::size_t i) {
        Work& w = *items[i];
        w.rows.clear();
        for (int d = 0; d < draws; ++d) w.rows.push_back(draw_proposal(w, w.rng));
        w.stage_rows(false);
      },
      2);
  std::vector<double> loglike;
  evaluate(all, lik, takes, loglike);
  std::vector<std::size_t> offset{0};
  for (Work* w : items) offset.push_back(offset.back() + w->rows.size());
  host_for(
      "kosmos::kepler::survey_evidence::weights", items.size(),
      [&](const std::size_t i) {
        Work& w = *items[i];
        const std::size_t dim = std::size_t(w.model.L.dim());
        w.log_weight.clear();
        for (std::size_t r = 0; r < w.rows.size(); ++r) {
          const double lp = w.inside[r] ? w.model.log_prior(&w.theta[r * dim]) : kNegInf;
          const double ll = loglike[offset[i] + r];
          w.log_weight.push_back(lp > kNegInf && ll > kNegInf
                                     ? ll + lp + w.log_jacobian[r] - log_proposal(w, w.rows[r])
                                     : kNegInf);
        }
      },
      2);
}

// The weights of the round relative to the largest (log_top its ln), their sum and the Kish
// effective sample size.
struct Weights {
  std::vector<double> relative;
  double log_top = kNegInf, sum = 0, square = 0, ess = 0;
  explicit Weights(const std::vector<double>& log_weight) {
    log_top = *std::max_element(log_weight.begin(), log_weight.end());
    if (!(log_top > kNegInf)) return;
    for (double lw : log_weight) {
      relative.push_back(std::exp(lw - log_top));
      sum += relative.back();
      square += relative.back() * relative.back();
    }
    ess = sum * sum / square;
  }
};

// The next round's proposal: this round's weighted mean and covariance (floored as the Hessian
// is), as the scale of the same Student-t.
bool adapt_proposal(Work& w, const Weights& all_weights) {
  const int m = w.coords->size();
  // Weights flattened to w^beta, beta the largest in (0, 1] (halving) whose effective sample
  // size reaches kMinEffectiveDraws: a few heavy draws of an odd-shaped mode centre the next
  // proposal on its bulk instead of on themselves.
  std::vector<double> log_weight = w.log_weight;
  double beta = 1;
  Weights weights = all_weights;
  while (weights.ess < kMinEffectiveDraws && beta > 1e-3) {
    beta /= 2;
    for (std::size_t r = 0; r < log_weight.size(); ++r) log_weight[r] = beta * w.log_weight[r];
    weights = Weights(log_weight);
  }
  std::vector<double> mean(std::size_t(m), 0.0), cov(std::size_t(m * m), 0.0);
  for (std::size_t r = 0; r < w.rows.size(); ++r)
    for (int i = 0; i < m; ++i)
      mean[std::size_t(i)] += weights.relative[r] / weights.sum * w.rows[r][std::size_t(i)];
  for (std::size_t r = 0; r < w.rows.size(); ++r)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j)
        cov[std::size_t(i * m + j)] += weights.relative[r] / weights.sum *
                                       (w.rows[r][std::size_t(i)] - mean[std::size_t(i)]) *
                                       (w.rows[r][std::size_t(j)] - mean[std::size_t(j)]);
  for (int i = 0; i < m; ++i)
    if (!(cov[std::size_t(i * m + i)] > 0)) {
      w.fail("a round's draws do not spread in " + phi_name(w, i));
      return false;
    }
  return set_proposal(w, mean, with_eigenvalue_floor(cov, m, kEigenvalueFloor));
}
// The estimate of the last round's weights (with their normalization and the c! labelings of
// the planets); too few effective draws fail the item, unless may_retry and within kRetryFactor
// (retry).
void estimate(Work& w, const Weights& weights, int planets, bool may_retry) {
  const double n = double(w.log_weight.size()), mean = weights.sum / n;
  CountEvidence& z = w.run.evidence;
  z.importance_ess = weights.ess;
  z.ln_z =
      weights.log_top + std::log(mean) - log_prior_volume(w.model) + std::lgamma(planets + 1.0);
  z.ln_z_error = std::sqrt(std::max(0.0, weights.square / n - mean * mean) / (n - 1)) / mean;
  w.retry = may_retry && z.importance_ess < kMinEffectiveDraws &&
            z.importance_ess >= kMinEffectiveDraws / kRetryFactor;
  if (z.importance_ess < kMinEffectiveDraws && !w.retry) {
    std::ostringstream why;
    why << "the draws' effective sample size " << std::setprecision(3) << z.importance_ess
        << " is under " << kMinEffectiveDraws;
    w.fail(why.str());
  }
}
}  // namespace

bool importance_decides(const std::vector<ImportanceRun>& runs, double log_odds_threshold) {
  std::vector<CountEvidence> counts;
  std::vector<double> z;
  for (const auto& run : runs) {
    counts.push_back(run.evidence);
    z.push_back(run.evidence.ln_z);
  }
  const std::size_t preferred = preferred_index(counts, z, log_odds_threshold);
  std::vector<double> raise(runs.size(), 0.0);
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (std::size_t j = 0; j < runs[i].periods.size(); ++j) {
      bool shared = false;
      for (double P : runs[preferred].periods)
        shared = shared || std::fabs(runs[i].periods[j] / P - 1) < 0.02;
      if (i != preferred && !shared) raise[i] += runs[i].margins[j];
    }
  for (std::size_t raised = 1; raised < (std::size_t(1) << runs.size()); ++raised) {
    for (std::size_t i = 0; i < runs.size(); ++i)
      z[i] = counts[i].ln_z + ((raised >> i) & 1 ? raise[i] : 0.0);
    if (preferred_index(counts, z, log_odds_threshold) != preferred) return false;
  }
  return true;
}

std::string importance_unsupported(const Model& m) {
  const ParamLayout& L = m.L;
  if (L.n_extra() > 0) return "a noise model or activity regressors";
  // A fixed e, omega or Tc fixes a slot of the vector too (Model's constructor).
  for (int d = 0; d < 5 * L.n_pl; ++d)
    if (m.is_fixed(d)) return "a fixed orbital element";
  for (std::size_t q = 0; q < m.terms.size(); ++q) {
    const PriorTerm& t = m.terms[q];
    const bool offset_or_trend =
        t.target == target_gamma || t.target == target_dvdt || t.target == target_curv;
    if (!((offset_or_trend && (t.kind == kind_uniform || t.kind == kind_gaussian)) ||
          (t.target == target_jitter && t.kind == kind_uniform)))
      return "a prior other than uniform or Gaussian on an offset or the trend, or uniform on a "
             "jitter";
    for (std::size_t r = 0; r < q; ++r)
      if (m.terms[r].target == t.target && m.terms[r].index == t.index)
        return "two priors on one parameter";
  }
  return {};
}

double log_period_modes(const RVData& data, const SearchOptions& opt) {
  const double p_max = opt.period_max > 0 ? opt.period_max : 2 * data.baseline();
  return std::log(std::max(1.0, data.baseline() * (1 / opt.period_min - 1 / p_max)));
}

std::vector<ImportanceRun> importance_runs_of_count(const std::vector<LadderStar>& stars,
                                                    const EvidenceOptions& ev, int planets,
                                                    std::uint64_t seed) {
  const SearchOptions& opt = *stars.front().opt;
  std::vector<std::unique_ptr<Work>> work;
  std::vector<Work*> active;
  for (const LadderStar& star : stars) {
    std::vector<BoundPrior> priors;
    Model model = ladder_model(*star.data, *star.opt, planets, priors);
    std::vector<BoundPrior> fixed_only;
    for (const auto& bp : priors)
      if (bp.prior.kind == Prior::fixed) fixed_only.push_back(bp);
    PriorBounds wide_bounds = model.bounds;
    wide_bounds.lnP_min -= 1;
    wide_bounds.lnP_max += 1;
    wide_bounds.k_max = HUGE_VAL;
    wide_bounds.e_max = 1;
    wide_bounds.s_max = HUGE_VAL;
    Model wide({planets, model.L.n_inst, model.L.n_trend}, wide_bounds, model.epoch, fixed_only);
    work.push_back(std::make_unique<Work>(star, std::move(model), std::move(wide)));
    Work& w = *work.back();
    const std::string unsupported = importance_unsupported(w.model);
    if (!unsupported.empty()) {
      w.fail("importance sampling does not support " + unsupported);
      continue;
    }
    w.coords = std::make_unique<Coordinates>(w.model);
    w.phi_hat = w.coords->phi_of(*star.optimum);
    const double baseline = star.data->baseline();
    for (int d : w.coords->free)
      w.steps.push_back(parameter_scale(w.model.L, star.optimum->data(), d, baseline));
    active.push_back(&w);
  }
  // Stars in chunks of kStarsPerLaunch, one likelihood each for all its stages (its buffers
  // are kept per row count).
  for (std::size_t s = 0; s < work.size(); ++s) {
    const long long key = stars[s].stream >= 0 ? stars[s].stream : (long long)s;
    work[s]->rng.seed(mix64(seed ^ mix64(std::uint64_t(key) * 64 + std::uint64_t(planets))));
  }
  const auto usable = [](const Work& w) { return w.usable; };
  std::vector<Work*> retry;
  for (std::size_t first = 0; first < active.size(); first += kStarsPerLaunch) {
    const std::vector<Work*> chunk(
        active.begin() + std::ptrdiff_t(first),
        active.begin() + std::ptrdiff_t(std::min(active.size(), first + kStarsPerLaunch)));
    const auto lik = likelihood_of(chunk, opt);
    // 1. The diagonal, to set each step to the posterior's width in that entry; 2. the Hessian.
    for (const bool off_diagonal : {false, true}) {
      for (Work* w : chunk)
        if (w->usable) {
          w->rows = stencil(w->phi_hat, w->steps, off_diagonal);
          w->stage_rows(true);
        }
      std::vector<double> f;
      evaluate(chunk, *lik, usable, f);
      std::size_t offset = 0;
      for (Work* w : chunk) {
        if (!w->usable) continue;
        const std::vector<double> own(f.begin() + std::ptrdiff_t(offset),
                                      f.begin() + std::ptrdiff_t(offset + w->rows.size()));
        offset += w->rows.size();
        const int m = w->coords->size();
        std::vector<double> H = negative_hessian(own, w->steps, off_diagonal);
        for (int i = 0; i < m && w->usable; ++i)
          if (!(H[std::size_t(i * m + i)] > 0) || !std::isfinite(H[std::size_t(i * m + i)]))
            w->fail("the optimum is not a peak of ln L in " + phi_name(*w, i));
        if (!w->usable) continue;
        if (!off_diagonal) {
          for (int i = 0; i < m; ++i)
            w->steps[std::size_t(i)] = 1 / std::sqrt(H[std::size_t(i * m + i)]);
          continue;
        }
        // Directions the Hessian leaves flat or curved the wrong way (a noise planet's) get
        // the floor's width: the draws' weights, not the Hessian, decide the estimate.
        H = with_eigenvalue_floor(H, m, kEigenvalueFloor);
        if (!cholesky(H, m)) {
          w->fail("the Hessian of ln L at the optimum is not positive definite");
          continue;
        }
        set_proposal(*w, w->phi_hat, inverse_from_cholesky(H, m));
      }
    }
    // 3. Rounds of draws, each next proposal from the weighted moments of the round before
    // (with a quarter of the draws); the estimate from the last alone (its weights L pi / q,
    // pi with its normalization, in phi).
    for (int round = 0; round < kRounds; ++round) {
      const bool last = round == kRounds - 1;
      importance_round(chunk, *lik, usable, last ? ev.importance_draws : ev.importance_draws / 4);
      host_for(
          "kosmos::kepler::survey_evidence::estimate", chunk.size(),
          [&](const std::size_t i) {
            Work& w = *chunk[i];
            if (!w.usable) return;
            const Weights weights(w.log_weight);
            if (!(weights.log_top > kNegInf)) {
              w.fail("no draw has a finite weight");
            } else if (!last) {
              if (weights.ess > w.best_ess) {
                w.best_ess = weights.ess;
                w.best = w.proposal;
              }
              // the next round's proposal; the last round draws from the best so far
              if (round + 2 < kRounds)
                adapt_proposal(w, weights);
              else
                w.proposal = w.best;
            } else {
              estimate(w, weights, planets, true);
            }
            w.rows = {};
            w.theta = {};
            w.log_weight = {};
          },
          2);
    }
    for (Work* w : chunk)
      if (w->usable && w->retry) retry.push_back(w);
  }
  // The last round's draws again, kRetryFactor times as many, where its effective sample size
  // fell short by up to that factor: fresh draws of the same proposal (the estimate stays
  // unbiased); those stars alone share launches.
  for (std::size_t first = 0; first < retry.size(); first += kStarsPerLaunch) {
    const std::vector<Work*> chunk(
        retry.begin() + std::ptrdiff_t(first),
        retry.begin() + std::ptrdiff_t(std::min(retry.size(), first + kStarsPerLaunch)));
    importance_round(chunk, *likelihood_of(chunk, opt), usable, kRetryFactor * ev.importance_draws);
    host_for(
        "kosmos::kepler::survey_evidence::estimate", chunk.size(),
        [&](const std::size_t i) {
          Work& w = *chunk[i];
          const Weights weights(w.log_weight);
          if (!(weights.log_top > kNegInf))
            w.fail("no draw has a finite weight");
          else
            estimate(w, weights, planets, false);
          w.rows = {};
          w.theta = {};
          w.log_weight = {};
        },
        2);
  }
  std::vector<ImportanceRun> out;
  for (std::size_t s = 0; s < work.size(); ++s) {
    Work& w = *work[s];
    ImportanceRun run = std::move(w.run);
    run.evidence.planets = planets;
    run.evidence.trend = w.model.L.n_trend;
    run.evidence.method = "importance";
    run.evidence.ln_z_ti = std::numeric_limits<double>::quiet_NaN();
    // The modes the draws cannot see: each planet's period alternatives, none higher in ln L
    // than the optimum found. A mode's width in ln P grows as its period (a peak's width in
    // frequency is 1 / baseline), so N independent frequencies (P_i = baseline / i) hold at
    // most sum_i P_i / P = (ln N + 0.58) baseline / P times the mode found; e (a factor 2.7)
    // for their other widths, which grow as their peaks fall.
    const double log_modes = log_period_modes(*stars[s].data, *stars[s].opt);
    for (int j = 0; j < planets; ++j) {
      const double P = std::exp((*stars[s].optimum)[std::size_t(ParamLayout::lnP(j))]);
      run.periods.push_back(P);
      run.margins.push_back(
          std::log(
              std::max(1.0, (log_modes + 0.58) * std::max(1.0, stars[s].data->baseline() / P))) +
          1);
      run.evidence.ln_z_margin += run.margins.back();
    }
    run.usable = w.usable;
    run.reason = w.reason;
    out.push_back(std::move(run));
  }
  return out;
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
