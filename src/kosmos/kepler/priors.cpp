// User priors: parsing, densities, and binding each to the parameter it constrains.
#include <kosmos/core/error.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/impl/search_model.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace kosmos {
namespace kepler {
double Prior::log_density(double x) const {
  static_assert(int(uniform) == Impl::kind_uniform && int(log_uniform) == Impl::kind_log_uniform &&
                    int(gaussian) == Impl::kind_gaussian &&
                    int(truncated_gaussian) == Impl::kind_truncated_gaussian &&
                    int(fixed) == Impl::kind_fixed && int(beta) == Impl::kind_beta,
                "kosmos::kepler::Prior: the kinds must be numbered as Impl::PriorKind");
  return Impl::prior_log_density(int(kind), a, b, lower, upper, x);
}

const char* prior_kind_name(Prior::Kind kind) {
  switch (kind) {
    case Prior::uniform:
      return "uniform";
    case Prior::log_uniform:
      return "loguniform";
    case Prior::gaussian:
      return "gauss";
    case Prior::truncated_gaussian:
      return "tgauss";
    case Prior::beta:
      return "beta";
    case Prior::fixed:
      return "fixed";
  }
  throw invalid_input("kosmos::kepler::prior_kind_name: unknown prior kind " +
                      std::to_string(int(kind)));
}

std::string format_prior(const Prior& prior) {
  std::ostringstream out;
  out << std::setprecision(17) << prior.parameter << " " << prior_kind_name(prior.kind) << " "
      << prior.a;
  if (prior.kind != Prior::fixed) out << " " << prior.b;
  if (prior.kind == Prior::truncated_gaussian) out << " " << prior.lower << " " << prior.upper;
  return out.str();
}

Prior parse_prior(const std::string& spec, const std::string& where) {
  std::istringstream in(spec);
  std::vector<std::string> f;
  for (std::string w; in >> w;) f.push_back(w);
  const std::string usage =
      " (expected NAME uniform A B | loguniform A B | gauss MU SIGMA | tgauss MU SIGMA A B | beta "
      "A "
      "B | fixed V)";
  if (f.size() < 2) throw invalid_input(where + ": prior '" + spec + "' is incomplete" + usage);
  Prior p;
  p.parameter = f[0];
  const std::string& kind = f[1];
  std::size_t n_args = 0;
  if (kind == "uniform")
    p.kind = Prior::uniform, n_args = 2;
  else if (kind == "loguniform")
    p.kind = Prior::log_uniform, n_args = 2;
  else if (kind == "gauss")
    p.kind = Prior::gaussian, n_args = 2;
  else if (kind == "tgauss")
    p.kind = Prior::truncated_gaussian, n_args = 4;
  else if (kind == "beta")
    p.kind = Prior::beta, n_args = 2;
  else if (kind == "fixed")
    p.kind = Prior::fixed, n_args = 1;
  else
    throw invalid_input(where + ": unknown prior kind '" + kind + "' for " + p.parameter + usage);
  if (f.size() != 2 + n_args)
    throw invalid_input(where + ": prior " + kind + " for " + p.parameter + " takes " +
                        std::to_string(n_args) + " number(s), got " + std::to_string(f.size() - 2) +
                        usage);
  double v[4] = {0, 0, 0, 0};
  for (std::size_t i = 0; i < n_args; ++i)
    if (!io::parse_double(f[2 + i], v[i]) || !(std::fabs(v[i]) <= largest_rv_magnitude))
      throw invalid_input(where + ": prior on " + p.parameter + ": '" + f[2 + i] +
                          "' is not a finite number within +-1e100");
  p.a = v[0];
  p.b = v[1];
  p.lower = v[2];
  p.upper = v[3];
  const bool ok = p.kind == Prior::fixed ||
                  ((p.kind == Prior::uniform || p.kind == Prior::log_uniform) && p.b > p.a &&
                   (p.kind == Prior::uniform || p.a > 0)) ||
                  ((p.kind == Prior::gaussian || p.kind == Prior::truncated_gaussian) && p.b > 0 &&
                   (p.kind == Prior::gaussian || p.upper > p.lower)) ||
                  (p.kind == Prior::beta && p.a > 0 && p.b > 0);
  if (!ok)
    throw invalid_input(where + ": prior '" + spec +
                        "' is empty or improper (need B > A, A > 0 for loguniform, SIGMA > 0, "
                        "upper > lower, A > 0 and B > 0 for beta)");
  return p;
}

std::vector<Prior> read_prior_file(const std::string& path) {
  io::TextReader reader(path);
  std::vector<Prior> out;
  io::Record r;
  while (reader.next(r)) {
    std::string line;
    for (const auto& w : r.fields) line += (line.empty() ? "" : " ") + w;
    try {
      out.push_back(parse_prior(line, "prior"));
    } catch (const invalid_input& e) {
      reader.fail(r.line_number, e.what());
    }
  }
  return out;
}

std::vector<Prior> kipping_eccentricity_prior(int planets) {
  std::vector<Prior> out;
  const std::string letters = "bcdefghi";
  for (int j = 0; j < planets && j < int(letters.size()); ++j)
    out.push_back(parse_prior(std::string("e_") + letters[std::size_t(j)] + " beta 0.867 3.03",
                              "kosmos::kepler::kipping_eccentricity_prior"));
  return out;
}

namespace Impl {
double draw_prior(const Prior& p, std::mt19937_64& rng, std::uniform_real_distribution<double>& u,
                  std::normal_distribution<double>& gauss) {
  switch (p.kind) {
    case Prior::uniform:
      return p.a + (p.b - p.a) * u(rng);
    case Prior::log_uniform:
      return p.a * std::pow(p.b / p.a, u(rng));
    case Prior::gaussian:
      return p.a + p.b * gauss(rng);
    case Prior::truncated_gaussian:
      return std::min(std::max(p.a + p.b * gauss(rng), p.lower), p.upper);
    case Prior::beta: {  // X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b)
      const double x = std::gamma_distribution<double>(p.a)(rng),
                   y = std::gamma_distribution<double>(p.b)(rng);
      return x / (x + y);
    }
    case Prior::fixed:
      break;
  }
  return p.a;
}

std::vector<BoundPrior> bind_priors(const std::vector<Prior>& priors,
                                    const std::vector<std::string>& instruments, int max_planets,
                                    int trend, const std::vector<HyperParameter>& noise) {
  constexpr const char* where = "kosmos::kepler::search";
  const std::string letters = "bcdefghi";
  std::vector<BoundPrior> out;
  for (const auto& p : priors) {
    const std::string& name = p.parameter;
    const auto underscore = name.rfind('_');
    const std::string base = name.substr(0, underscore),
                      suffix = underscore == std::string::npos ? "" : name.substr(underscore + 1);
    BoundPrior bp{p, target_P, 0};
    bool known = true;
    const auto hyper = std::find_if(noise.begin(), noise.end(),
                                    [&](const HyperParameter& h) { return h.name == name; });
    if (hyper != noise.end()) {
      bp.target = target_noise;
      bp.index = int(hyper - noise.begin());
      kosmos::Impl::require(p.kind != Prior::fixed || !hyper->log || p.a > 0, where, name, " = ",
                            p.a, " must be > 0");
    } else if (name == "dvdt" || name == "curv") {
      bp.target = name == "dvdt" ? target_dvdt : target_curv;
      kosmos::Impl::require(trend >= (name == "dvdt" ? 1 : 2), where, "prior on ", name,
                            " needs trend >= ", name == "dvdt" ? 1 : 2, " (trend = ", trend, ")");
    } else if ((name.rfind("gamma_", 0) == 0 || name.rfind("jitter_", 0) == 0)) {
      const std::string inst = name.substr(name.find('_') + 1);
      const auto it = std::find(instruments.begin(), instruments.end(), inst);
      kosmos::Impl::require(it != instruments.end(), where, "prior on ", name, ": no instrument '",
                            inst, "' in the data");
      bp.target = name[0] == 'g' ? target_gamma : target_jitter;
      bp.index = int(it - instruments.begin());
    } else if (suffix.size() == 1 && letters.find(suffix[0]) != std::string::npos) {
      bp.index = int(letters.find(suffix[0]));
      kosmos::Impl::require(bp.index < max_planets, where, "prior on ", name, ": planet ", suffix,
                            " is beyond the ", max_planets, " planet(s) fitted");
      if (base == "P")
        bp.target = target_P;
      else if (base == "K")
        bp.target = target_K;
      else if (base == "e")
        bp.target = target_e;
      else if (base == "omega")
        bp.target = target_omega;
      else if (base == "Tc")
        bp.target = target_Tc;
      else
        known = false;
    } else {
      known = false;
    }
    std::string noise_names;
    for (const auto& h : noise) noise_names += ", " + h.name;
    kosmos::Impl::require(known, where, "unknown parameter '", name,
                          "' in a prior (P_b, K_b, e_b, omega_b, Tc_b, gamma_<instrument>, "
                          "jitter_<instrument>, dvdt, "
                          "curv",
                          noise_names, ")");
    if (p.kind == Prior::fixed) {
      kosmos::Impl::require(bp.target != target_e || (p.a >= 0 && p.a < 1), where, name, " = ", p.a,
                            " is outside [0, 1)");
      kosmos::Impl::require(bp.target != target_omega || (p.a >= -360 && p.a <= 360), where, name,
                            " = ", p.a, " deg is outside [-360, 360]");
      kosmos::Impl::require(bp.target != target_P || p.a > 0, where, name, " = ", p.a,
                            " is not a positive period");
      for (const auto& other : out)
        kosmos::Impl::require(!(other.prior.kind == Prior::fixed && other.target == bp.target &&
                                other.index == bp.index),
                              where, name, " is fixed twice");
    }
    out.push_back(bp);
  }
  return out;
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
