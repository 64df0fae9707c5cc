// Activity indicators as linear regressors: the data columns that SearchOptions::activity names,
// centred per star, and their coefficients c_<name> (extra parameters after the noise model's).
#include <kosmos/core/error.hpp>
#include <kosmos/core/validation.hpp>
#include <kosmos/kepler/impl/noise_model.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

namespace kosmos {
namespace kepler {
namespace Impl {
namespace {
constexpr const char* kWhere = "kosmos::kepler::search";

std::string lower_case(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char ch) { return char(std::tolower(ch)); });
  return s;
}

// The column of d named `name` (case-insensitive); invalid_input listing the columns otherwise.
const RVColumn& indicator_column(const RVData& d, const std::string& name) {
  for (const auto& c : d.columns)
    if (lower_case(c.name) == lower_case(name)) return c;
  std::string names;
  for (const auto& c : d.columns) names += (names.empty() ? "" : ", ") + c.name;
  throw invalid_input(kosmos::Impl::concat(
      kWhere, ": ", d.path, ": no activity indicator column '", name, "' (the header names ",
      names.empty() ? std::string("no other columns") : "the other columns " + names,
      "; name it in the file's first line, e.g. 'time mnvel errvel ", name, "')"));
}
}  // namespace

int activity_columns(const RVData& d, const SearchOptions& opt) {
  return int(opt.activity.size()) * (opt.activity_per_instrument ? d.n_instruments() : 1);
}

std::vector<double> centred_activity(const RVData& d, const SearchOptions& opt) {
  const std::size_t n = d.size(), m = std::size_t(activity_columns(d, opt));
  kosmos::Impl::require(m <= std::size_t(kMaxActivity), kWhere, d.path, ": ", m,
                        " activity coefficients, at most ", kMaxActivity);
  const std::size_t groups = opt.activity_per_instrument ? std::size_t(d.n_instruments()) : 1;
  std::vector<double> out(n * m, 0.0);
  for (std::size_t i = 0; i < opt.activity.size(); ++i) {
    const RVColumn& c = indicator_column(d, opt.activity[i]);
    kosmos::Impl::require(c.values.size() == n, kWhere, d.path, ": activity indicator '", c.name,
                          "' has ", c.values.size(), " values for ", n, " observations");
    std::vector<double> sum(groups, 0.0), count(groups, 0.0);
    auto group = [&](std::size_t k) {
      return opt.activity_per_instrument ? std::size_t(d.instrument[k]) : 0;
    };
    for (std::size_t k = 0; k < n; ++k) {
      if (!std::isfinite(c.values[k])) {
        const bool known = k < d.line.size() && d.line[k] > 0;
        throw invalid_input(kosmos::Impl::concat(
            kWhere, ": ", d.path, known ? ":" + std::to_string(d.line[k]) : std::string(),
            ": activity indicator '", c.name, "' of observation ", k, " (time ", d.time[k],
            ") is missing or not a finite number"));
      }
      sum[group(k)] += c.values[k];
      count[group(k)] += 1;
    }
    for (std::size_t k = 0; k < n; ++k)
      out[k * m + i * groups + group(k)] = c.values[k] - sum[group(k)] / count[group(k)];
  }
  return out;
}

std::vector<HyperParameter> activity_parameters(const RVData& d, const SearchOptions& opt) {
  const std::size_t n = d.size(), m = std::size_t(activity_columns(d, opt));
  if (m == 0) return {};
  const std::vector<double> a = centred_activity(d, opt);
  // Velocities less each instrument's weighted mean, weights 1 / sigma^2.
  std::vector<double> sw(std::size_t(d.n_instruments()), 0.0), swv(sw);
  double v_min = d.velocity[0], v_max = v_min, s_max = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double w = 1 / (d.sigma[k] * d.sigma[k]);
    sw[std::size_t(d.instrument[k])] += w;
    swv[std::size_t(d.instrument[k])] += w * d.velocity[k];
    v_min = std::min(v_min, d.velocity[k]);
    v_max = std::max(v_max, d.velocity[k]);
    s_max = std::max(s_max, d.sigma[k]);
  }
  // Weighted normal equations (A^T W A) c = A^T W r, solved by Gaussian elimination with
  // partial pivoting (m <= kMaxActivity).
  std::vector<double> ata(m * m, 0.0), atr(m, 0.0);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t inst = std::size_t(d.instrument[k]);
    const double w = 1 / (d.sigma[k] * d.sigma[k]), r = d.velocity[k] - swv[inst] / sw[inst];
    for (std::size_t i = 0; i < m; ++i) {
      atr[i] += w * a[k * m + i] * r;
      for (std::size_t j = 0; j < m; ++j) ata[i * m + j] += w * a[k * m + i] * a[k * m + j];
    }
  }
  std::vector<double> c(m, 0.0);
  bool solved = true;
  for (std::size_t col = 0; col < m && solved; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < m; ++r)
      if (std::fabs(ata[r * m + col]) > std::fabs(ata[pivot * m + col])) pivot = r;
    if (!(std::fabs(ata[pivot * m + col]) > 1e-300)) solved = false;
    if (!solved) break;
    for (std::size_t j = 0; j < m; ++j) std::swap(ata[col * m + j], ata[pivot * m + j]);
    std::swap(atr[col], atr[pivot]);
    for (std::size_t r = col + 1; r < m; ++r) {
      const double f = ata[r * m + col] / ata[col * m + col];
      for (std::size_t j = col; j < m; ++j) ata[r * m + j] -= f * ata[col * m + j];
      atr[r] -= f * atr[col];
    }
  }
  for (std::size_t col = m; col-- > 0 && solved;) {
    double s = atr[col];
    for (std::size_t j = col + 1; j < m; ++j) s -= ata[col * m + j] * c[j];
    c[col] = s / ata[col * m + col];
  }
  const double spread = v_max - v_min + 10 * s_max;
  std::vector<HyperParameter> out;
  for (std::size_t i = 0; i < m; ++i) {
    double lo = a[i], hi = a[i];
    for (std::size_t k = 0; k < n; ++k) {
      lo = std::min(lo, a[k * m + i]);
      hi = std::max(hi, a[k * m + i]);
    }
    const std::size_t groups = opt.activity_per_instrument ? std::size_t(d.n_instruments()) : 1;
    std::string name = indicator_column(d, opt.activity[i / groups]).name;
    if (opt.activity_per_instrument) name += "_" + d.instrument_names[i % groups];
    kosmos::Impl::require(hi > lo, kWhere, d.path, ": activity indicator '", name,
                          "' is constant: its coefficient is not defined by the data");
    const double bound = 10 * spread / (hi - lo);
    const double start =
        solved && std::isfinite(c[i]) ? std::min(std::max(c[i], -bound), bound) : 0;
    out.push_back({"c_" + name, false, -bound, bound, start, true});
  }
  return out;
}

std::vector<HyperParameter> extra_parameters(const RVData& d, const SearchOptions& opt) {
  auto out = noise_model(opt.noise).hyper_parameters(d, opt);
  const auto act = activity_parameters(d, opt);
  out.insert(out.end(), act.begin(), act.end());
  return out;
}
}  // namespace Impl
}  // namespace kepler
}  // namespace kosmos
