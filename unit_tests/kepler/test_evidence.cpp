// Thermodynamic integration over parallel-tempered DE-MCMC against analytic evidences: models
// linear in their parameters (offsets, a linear trend) with Gaussian noise of known sigma and
// uniform priors wide enough to hold the whole likelihood, where
//   Z = L_max (2 pi)^(d/2) det(F)^(-1/2) / prod(prior widths),  F = X^T W X.
#include <kosmos/core/error.hpp>
#include <kosmos/kepler/evidence.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {
constexpr double kPi = 3.14159265358979323846;

kosmos::kepler::RVData two_instruments(int n, unsigned seed) {
  kosmos::kepler::RVData data;
  data.path = "linear";
  data.instrument_names = {"A", "B"};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int k = 0; k < n; ++k) {
    const double t = 1000 + 200.0 * k / n, sigma = 1 + u(rng);
    const int inst = k % 2;
    data.time.push_back(t);
    data.sigma.push_back(sigma);
    data.instrument.push_back(inst);
    data.velocity.push_back((inst ? -4.0 : 3.0) + 0.05 * (t - 1100) + sigma * g(rng));
  }
  return data;
}

// ln Z of the linear Gaussian model with design columns X (n x d) and uniform priors of the
// given widths: the maximum of ln L by the normal equations, det F by Gaussian elimination.
double analytic_ln_z(const kosmos::kepler::RVData& data, const std::vector<std::vector<double>>& X,
                     const std::vector<double>& widths) {
  const std::size_t n = data.size(), d = X.size();
  std::vector<std::vector<double>> F(d, std::vector<double>(d + 1, 0.0));
  for (std::size_t k = 0; k < n; ++k) {
    const double w = 1 / (data.sigma[k] * data.sigma[k]);
    for (std::size_t a = 0; a < d; ++a) {
      for (std::size_t b = 0; b < d; ++b) F[a][b] += w * X[a][k] * X[b][k];
      F[a][d] += w * X[a][k] * data.velocity[k];
    }
  }
  auto A = F;
  double log_det = 0;
  for (std::size_t c = 0; c < d; ++c) {  // elimination without pivoting (F is positive definite)
    log_det += std::log(A[c][c]);
    for (std::size_t r = c + 1; r < d; ++r) {
      const double f = A[r][c] / A[c][c];
      for (std::size_t q = c; q <= d; ++q) A[r][q] -= f * A[c][q];
    }
  }
  std::vector<double> beta(d);
  for (std::size_t c = d; c-- > 0;) {
    double s = A[c][d];
    for (std::size_t q = c + 1; q < d; ++q) s -= A[c][q] * beta[q];
    beta[c] = s / A[c][c];
  }
  double ln_l = 0;
  for (std::size_t k = 0; k < n; ++k) {
    double model = 0;
    for (std::size_t a = 0; a < d; ++a) model += X[a][k] * beta[a];
    const double r = data.velocity[k] - model, s2 = data.sigma[k] * data.sigma[k];
    ln_l += -0.5 * (r * r / s2 + std::log(2 * kPi * s2));
  }
  double ln_z = ln_l + 0.5 * double(d) * std::log(2 * kPi) - 0.5 * log_det;
  for (double w : widths) ln_z -= std::log(w);
  return ln_z;
}

kosmos::kepler::SearchOptions evidence_options() {
  kosmos::kepler::SearchOptions o;
  o.planets = 0;
  o.chains = 24;
  o.burn = 400;
  o.steps = 1200;
  o.thin = 2;
  o.epoch = 1100;
  o.priors = {kosmos::kepler::parse_prior("jitter_A fixed 0", "test"),
              kosmos::kepler::parse_prior("jitter_B fixed 0", "test"),
              kosmos::kepler::parse_prior("gamma_A uniform -30 30", "test"),
              kosmos::kepler::parse_prior("gamma_B uniform -40 40", "test")};
  return o;
}

TEST(KeplerEvidence, OffsetsMatchTheAnalyticEvidence) {
  using namespace kosmos::kepler;
  const auto data = two_instruments(40, 3);
  std::vector<std::vector<double>> X(2, std::vector<double>(data.size()));
  for (std::size_t k = 0; k < data.size(); ++k) {
    X[0][k] = data.instrument[k] == 0;
    X[1][k] = data.instrument[k] == 1;
  }
  // The data have a trend the model lacks: ln L is still Gaussian in the offsets.
  const double expected = analytic_ln_z(data, X, {60, 80});
  const auto r = planet_count_evidence(data, evidence_options());
  ASSERT_EQ(r.counts.size(), 1u);
  const auto& z = r.counts[0];
  std::printf("[kepler] evidence (2 offsets): ln Z = %.3f +- %.3f, analytic %.3f (%.1f s)\n",
              z.ln_z, z.ln_z_error, expected, r.seconds);
  EXPECT_NEAR(z.ln_z, expected, std::max(3 * z.ln_z_error, 0.1));
  EXPECT_LT(z.ln_z_error, 0.5);
}

TEST(KeplerEvidence, TrendModelMatchesAndIsPreferredByItsOdds) {
  using namespace kosmos::kepler;
  const auto data = two_instruments(40, 4);
  std::vector<std::vector<double>> X(3, std::vector<double>(data.size()));
  for (std::size_t k = 0; k < data.size(); ++k) {
    X[0][k] = data.instrument[k] == 0;
    X[1][k] = data.instrument[k] == 1;
    X[2][k] = data.time[k] - 1100;
  }
  auto o = evidence_options();
  o.trend = 1;
  o.priors.push_back(parse_prior("dvdt uniform -0.5 0.5", "test"));
  const double expected = analytic_ln_z(data, X, {60, 80, 1.0});
  const auto r = planet_count_evidence(data, o);
  const auto& z = r.counts[0];
  std::printf("[kepler] evidence (2 offsets + trend): ln Z = %.3f +- %.3f, analytic %.3f\n", z.ln_z,
              z.ln_z_error, expected);
  EXPECT_NEAR(z.ln_z, expected, std::max(3 * z.ln_z_error, 0.1));
  // The trend of 0.05 m/s/d over 200 d is strongly supported: the model without it loses.
  const double without = analytic_ln_z(data, {X[0], X[1]}, {60, 80});
  std::printf("[kepler] analytic ln Z without the trend %.3f\n", without);
  EXPECT_GT(z.ln_z - without, 5);
}

TEST(KeplerEvidence, ImproperOffsetPriorIsRefused) {
  using namespace kosmos::kepler;
  auto o = evidence_options();
  o.priors.pop_back();  // gamma_B: no prior of its own
  try {
    planet_count_evidence(two_instruments(20, 5), o);
    ADD_FAILURE() << "an improper prior was accepted";
  } catch (const kosmos::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("needs a proper prior on gamma_B"), std::string::npos)
        << e.what();
  }
}

}  // namespace
