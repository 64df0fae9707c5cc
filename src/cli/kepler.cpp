// `kosmos rv`: global search and DE-MCMC posterior of n-planet Keplerian models for an RV file.
#include "options.hpp"
#include "plots.hpp"
#include "ranks.hpp"

#include <kosmos/core/compat.hpp>
#include <kosmos/core/configuration.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/kepler/evidence.hpp>
#include <kosmos/kepler/search.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace {

// Decimals that show the smaller of the two uncertainties to two significant digits.
int decimals_for(double error) {
  if (!(error > 0) || !std::isfinite(error)) return 6;
  const int d = 1 - int(std::floor(std::log10(error)));
  return std::min(std::max(d, 0), 15);
}

void print_row(const kosmos::kepler::ParameterSummary& s, const char* unit) {
  const double up = s.upper - s.median, down = s.median - s.lower;
  const int precision = decimals_for(std::min(up, down));
  std::cout << "  " << std::left << std::setw(16) << s.name << std::right << std::fixed
            << std::setprecision(precision) << std::setw(18) << s.median << "  +"
            << std::setw(precision + 4) << up << "  -" << std::setw(precision + 4) << down
            << "   (MAP " << s.best << ")  " << unit;
  if (s.fixed)  // diagnostics of a fixed quantity would measure round-off
    std::cout << "   ESS n/a  R-hat n/a (fixed)\n";
  else
    std::cout << std::setprecision(0) << "   ESS " << s.ess << "/" << s.ess_tail
              << std::setprecision(3) << "  R-hat " << s.rhat << "\n";
}

void print_warnings(const std::string& prefix, const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::cout << "warning: " << prefix << w << "\n";
}

// "auto" (0..max_planets by evidence: true), "N" or "A..B" planets.
bool parse_planets(const std::string& text, int max_planets, int& min_planets, int& planets) {
  if (text == "auto") {
    min_planets = 0;
    planets = max_planets;
    return true;
  }
  const auto dots = text.find("..");
  auto to_int = [&](const std::string& t) {
    double v = 0;
    if (!kosmos::io::parse_double(t, v) || v != std::floor(v) || v < 0 || v > 8)
      throw kosmos::cli::usage_error(
          "--planets must be auto, N or A..B with 0 <= A < B <= 8, not '" + text + "'");
    return int(v);
  };
  if (dots == std::string::npos) {
    planets = to_int(text);
    min_planets = -1;
    return false;
  }
  min_planets = to_int(text.substr(0, dots));
  planets = to_int(text.substr(dots + 2));
  if (min_planets >= planets)
    throw kosmos::cli::usage_error("--planets must be auto, N or A..B with 0 <= A < B <= 8, not '" +
                                   text + "'");
  return false;
}

// The evidence table of select_model: ln Z per model, probability, odds, the supported model.
void print_evidence(const kosmos::kepler::EvidenceResult& z,
                    const kosmos::kepler::SearchOptions& so, int temperatures) {
  std::cout << "\nmodel comparison by evidence (stepping stones over parallel tempering, "
            << temperatures << " temperatures, " << std::fixed << std::setprecision(1) << z.seconds
            << " s):\n";
  if (!z.default_priors.empty()) {
    std::cout << "  priors added (offsets and trend need proper ones):";
    for (const auto& p : z.default_priors)
      std::cout << "  " << kosmos::kepler::format_prior(p) << ";";
    std::cout << "\n";
  }
  std::cout << "  planets  trend        ln Z      +-    probability   ln odds vs supported\n";
  const double best = z.get(z.preferred, z.preferred_trend).ln_z;
  for (const auto& c : z.counts)
    std::cout << "  " << std::setw(7) << c.planets << std::setw(7) << c.trend
              << std::setprecision(3) << std::setw(12) << c.ln_z << std::setw(8) << c.ln_z_error
              << std::setw(15) << c.probability << std::setw(18) << c.ln_z - best
              << (c.planets == z.preferred && c.trend == z.preferred_trend ? "  <- supported" : "")
              << "\n";
  std::cout << "supported: " << z.preferred << " planet(s), trend " << z.preferred_trend
            << "; rule: " << z.rule << "\n";
  if (z.top_of_range)
    std::cout << "note: the supported count is the largest compared (" << so.planets
              << "): more planets may be there; compare more (--max-planets " << so.planets + 1
              << ")\n";
  std::cout << "\n";
}

// Splits "a; b" / "a,b" lists.
std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, separator);)
    if (item.find_first_not_of(" \t") != std::string::npos) out.push_back(item);
  return out;
}

// The .txt, .csv and .dat files of a directory (sorted) or the files of a list file (one per line,
// '#' comments, relative to the list's directory).
std::vector<std::string> batch_files(const std::string& source) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  if (fs::is_directory(source)) {
    for (const auto& entry : fs::directory_iterator(source))
      if (entry.is_regular_file() &&
          (entry.path().extension() == ".txt" || entry.path().extension() == ".csv" ||
           entry.path().extension() == ".dat"))
        files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
  } else {
    kosmos::io::TextReader reader(source);
    kosmos::io::Record r;
    const fs::path base = fs::path(source).parent_path();
    while (reader.next(r)) {
      const fs::path f(r.fields[0]);
      files.push_back(f.is_absolute() ? f.string() : (base / f).string());
    }
  }
  if (files.empty()) throw kosmos::file_error(source + ": no RV files for --batch");
  return files;
}

// `--batch`: one survey over every star, one summary line each; --summary: every parameter of
// every star (kosmos::kepler::write_survey_table); --output: the posteriors, a group per star.
// ev: the planet counts by evidence (kosmos::kepler::survey_evidence; null: by BIC).
int run_survey(const std::string& source, const kosmos::kepler::SearchOptions& so,
               const kosmos::cli::Options& options, const std::string& output,
               const kosmos::kepler::EvidenceOptions* ev) {
  if (so.trend < 0)
    throw kosmos::cli::usage_error("--batch fits one trend order: --trend 0, 1 or 2");
  if (!output.empty() && kosmos::cli::ranks() > 1)
    throw kosmos::cli::usage_error(
        "--output with --batch writes one HDF5 file from one rank: "
        "under mpirun use --summary (every parameter of every star)");
  std::vector<kosmos::kepler::RVData> stars;
  for (const auto& f : batch_files(source)) stars.push_back(kosmos::kepler::read_rv_file(f));
  const auto config = kosmos::current_configuration();
  std::cout << "kosmos rv --batch: " << stars.size() << " stars, "
            << (so.min_planets >= 0 ? std::to_string(so.min_planets) + ".." : std::string())
            << so.planets << " planet(s)"
            << (ev ? " by evidence (" + std::to_string(ev->temperatures) + " temperatures)"
                   : std::string(so.min_planets >= 0 ? " by BIC" : ""))
            << ", trend " << so.trend << ", " << so.chains << " DE-MCMC chains per star, on "
            << config.backend << " (" << config.device << ")\n";
  const int first_count = so.min_planets >= 0 ? so.min_planets : so.planets;
  const auto start = std::chrono::steady_clock::now();
  // Per star its warnings, its line and its parameter-table lines; under mpirun each rank fits its
  // chunks of the stars (a survey each: the stars of a chunk share kernel launches, and a star's
  // result does not depend on its chunk) and rank 0 prints them in star order.
  std::vector<std::string> warnings, rows, table_rows;
  std::vector<kosmos::kepler::SearchResult> results;  // one rank: kept for --output
  auto fit_chunk = [&](const kosmos::distributed::IndexRange& range) {
    const std::vector<kosmos::kepler::RVData> part(stars.begin() + range.begin,
                                                   stars.begin() + range.end);
    std::vector<kosmos::kepler::SearchResult> part_results;
    std::vector<kosmos::kepler::EvidenceResult> part_evidence;
    if (ev) {
      for (auto& selection : kosmos::kepler::survey_evidence(part, so, *ev, range.begin)) {
        part_results.push_back(std::move(selection.posterior));
        part_evidence.push_back(std::move(selection.evidence));
      }
    } else {
      part_results = kosmos::kepler::survey(part, so, range.begin);
    }
    for (std::size_t s = 0; s < part.size(); ++s) {
      const auto& r = part_results[s];
      const kosmos::kepler::EvidenceResult* z = ev ? &part_evidence[s] : nullptr;
      std::ostringstream w, row, table;
      for (const auto& text : r.warnings) w << "warning: " << part[s].path << ": " << text << "\n";
      kosmos::kepler::write_survey_line(row, part[s], r, so.planets, z);
      kosmos::kepler::write_survey_table_rows(table, part[s], r, z);
      if (z && z->top_of_range)
        w << "note: " << part[s].path << ": the supported count is the largest compared ("
          << so.planets << "): more planets may be there (compare more: --planets " << first_count
          << ".." << so.planets + 1 << ")\n";
      warnings.push_back(w.str());
      rows.push_back(row.str());
      table_rows.push_back(table.str());
    }
    if (!output.empty())
      results.insert(results.end(), std::make_move_iterator(part_results.begin()),
                     std::make_move_iterator(part_results.end()));
  };
  const std::int64_t n = std::int64_t(stars.size());
  const auto done = kosmos::cli::run_chunks(
      n,
      kosmos::cli::schedule_from(
          options.integer("mpi-chunk", 0, kosmos::cli::Options::largest_integer), 1),
      fit_chunk);
  warnings = kosmos::cli::gather_strings(done, warnings, n);
  rows = kosmos::cli::gather_strings(done, rows, n);
  table_rows = kosmos::cli::gather_strings(done, table_rows, n);
  if (!kosmos::cli::is_root()) return 0;  // rank 0 prints and writes
  for (const auto& w : warnings) std::cout << w;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  kosmos::kepler::write_survey_lines_header(std::cout, so.planets, first_count, ev != nullptr);
  for (const auto& row : rows) std::cout << row;
  std::cout << "done in " << std::setprecision(3) << seconds << " s (" << stars.size() / seconds
            << " stars/s)\n";
  if (options.has("summary") && !options.str("summary").empty())
    kosmos::io::write_atomically(options.str("summary"), [&](std::ostream& out) {
      kosmos::kepler::write_survey_table_header(out);
      for (const auto& lines : table_rows) out << lines;
    });
  if (!output.empty()) {
    kosmos::kepler::write_survey_samples(output, stars, results);
    std::cout << "posteriors of " << stars.size() << " stars (a group each) written to " << output
              << "\n";
  }
  return 0;
}

int run_rv(const std::vector<std::string>& args) {
  kosmos::cli::Options options(
      "rv",
      "Search an RV file (whitespace or CSV columns time velocity sigma [instrument], RadVel "
      "header names, any row order) for Keplerian planets: periodogram-seeded "
      "random search, differential-evolution optimization and a Nelder-Mead polish per planet "
      "(priors and fixed parameters included), then "
      "differential-evolution MCMC "
      "(ter Braak 2006) over all orbits with per-instrument offsets and jitters, on the batched "
      "chi^2 kernels. "
      "Prints medians with 68% intervals, ESS and split R-hat and writes the posterior samples.");
  options.positional("data", "RV data file (e.g. data/rv/hd164922_radvel.txt); omit with --batch",
                     false);
  options.option(
      "batch", "DIR|LIST",
      "survey mode: fit every RV file (.txt, .csv, .dat) of a directory, or listed one per line in "
      "a text file (paths "
      "relative to it): with white noise every stage (periodograms, random search, DE, "
      "Nelder-Mead) runs for all stars in shared kernel launches; --planets A..B compares the "
      "counts per star (BIC) and samples each count's stars together; one summary line per star",
      "", true);
  options.option("planets", "auto|N|A..B",
                 "auto: compare 0..--max-planets planets by their evidence (ln Z per count, odds, "
                 "the supported count) and sample the supported one; N: that many; A..B: fit every "
                 "count, print ln L (at the polished optimum), BIC and AICc, sample the preferred "
                 "count (by evidence instead with --evidence or --trend auto)",
                 "auto");
  options.option("max-planets", "N", "the largest count --planets auto compares (<= 8)", "2");
  options.option("trend", "auto|D",
                 "polynomial trend: 0 none, 1 dvdt, 2 dvdt and curv (about the printed epoch); "
                 "auto: the order 0..2 chosen by evidence with the planet count (--batch: 0)",
                 "auto");
  options.option("odds-threshold", "X",
                 "ln odds by which a model with more planets (or a higher trend order) must "
                 "beat a simpler one to be supported",
                 "5");
  options.option("e-prior", "uniform|kipping",
                 "eccentricity prior of every planet: uniform, or kipping: Beta(0.867, 3.03) "
                 "(Kipping 2013)",
                 "uniform");
  options.option(
      "prior", "SPECS",
      "priors, ';'-separated 'NAME KIND ARGS': KIND uniform A B | loguniform A B | "
      "gauss MU SIGMA | "
      "tgauss MU SIGMA A B | beta A B | fixed V; NAME P_b K_b e_b omega_b (deg) Tc_b gamma_<inst> "
      "jitter_<inst> "
      "dvdt curv (e.g. \"P_b gauss 4.2308 0.0002; K_b uniform 0 30\")",
      "", true);
  options.option("priors", "FILE", "more priors, one 'NAME KIND ARGS' per line ('#' comments)", "",
                 true);
  options.option(
      "fix", "LIST",
      "fixed parameters, 'NAME=V,...' (P, K, e in [0, 1), omega [deg], Tc, gamma, jitter, dvdt, "
      "curv)",
      "", true);
  options.option("stellar-mass", "M[,SIGMA]",
                 "stellar mass in M_sun (and its 1-sigma uncertainty): adds m sin i (M_jup, "
                 "M_earth) and a (au) "
                 "per planet",
                 "", true);
  options.option("chains", "N",
                 "DE-MCMC chains (also the DE population); even, >= 2 x parameters + 2", "160");
  options.option("burn", "N", "DE-MCMC burn-in generations", "1000");
  options.option("steps", "N", "DE-MCMC generations kept after burn-in", "1000");
  options.option("thin", "N", "keep every N-th generation", "4");
  options.option("max-extensions", "N",
                 "rounds of more generations for chains not converged (each doubles the "
                 "generations after burn-in and the thinning); 0: exactly --steps",
                 "3");
  options.option("target-rhat", "X",
                 "convergence: rank-normalized split R-hat of every free parameter and ln L "
                 "below X",
                 "1.01");
  options.option("generations", "N", "DE optimizer generations per planet", "150");
  options.option("candidates", "N", "random-search orbits per planet (at most 1e7)", "8192");
  options.option("period-min", "DAYS", "shortest period searched", "0.5");
  options.option("period-max", "DAYS", "longest period searched (0: twice the time span)", "0");
  options.option("k-max", "M/S", "largest K searched and sampled (the base prior's bound)", "1000");
  options.option("e-max", "E", "eccentricities below E (0 < E < 1)", "0.95");
  options.option("jitter-max", "M/S", "largest jitter per instrument", "100");
  std::string noise_names;
  for (const auto& n : kosmos::kepler::noise_model_names())
    noise_names += (noise_names.empty() ? "" : " | ") + n;
  options.option("noise", "MODEL",
                 "noise model: " + noise_names +
                     " (white: jitter per instrument; see the kepler README for the GP models)",
                 "white");
  options.option("activity", "NAME[,NAME]",
                 "activity indicators (data columns named in the header, e.g. fwhm,bis,svalue; "
                 "at most 4) as linear regressors: v += c_NAME (NAME - mean), one coefficient "
                 "per indicator, uniform prior (see the kepler README)",
                 "", true);
  options.flag("activity-per-instrument",
               "one --activity coefficient per indicator and instrument (c_NAME_INSTRUMENT), each "
               "indicator centred per instrument");
  options.option("epoch", "TIME", "reference time of M0 (0: middle of the data)", "0");
  options.option(
      "mpi-chunk", "N",
      "--batch under mpirun: stars per chunk of the ranks' work queue (0: each rank's share "
      "in one chunk, one survey)",
      "0");
  options.option("precision", "P", "likelihood precision: double, mixed, or auto (mixed on GPUs)",
                 "auto");
  options.option("solver", "S", "Kepler solver: markley or danby", "markley");
  options.option("seed", "N", "random seed", "1");
  options.option("output", "FILE",
                 "posterior samples file (HDF5 when it ends in .h5 or .hdf5, else text; default "
                 "rv_posterior.txt); with --batch: one HDF5 file, a group per star (default: none)",
                 "", true);
  options.option("summary", "FILE",
                 "also write 'name median lower upper MAP ess rhat' lines to FILE (with --batch: "
                 "'star planets parameter median lower upper map rhat ess_bulk ess_tail', every "
                 "parameter of every star)",
                 "", true);
  options.flag("evidence",
               "compare the planet counts of --planets by their evidence (thermodynamic "
               "integration over parallel-tempered DE-MCMC; offsets and trend without a prior "
               "get data-derived uniform ones) and sample the supported count (the default with "
               "--planets auto or --trend auto); with --batch: every star's count by evidence, "
               "all stars' temperature ladders in shared launches (default there: BIC)");
  options.option("temperatures", "N", "temperatures of the evidence's ladder (>= 3)", "32");
  options.option("ladder-chains", "N",
                 "DE-MCMC chains per temperature of the evidence's ladder where --chains is more "
                 "(even; raised to 2 x parameters + 2 where fewer; 0: --chains)",
                 "32");
  options.flag("ladder-all",
               "with --batch --evidence: run every star's temperature ladders (default: "
               "importance sampling decides the stars it can, the others run the ladders)");
  options.option("plot", "DIR",
                 "after the fit, draw the data with the MAP model, phase folds, the residual "
                 "periodogram, corner and trace plots into DIR as PNG (the Python package's "
                 "kosmos.cli_plots, matplotlib)",
                 "", true);
  options.flag("quiet", "no progress messages");
  if (!options.parse(args)) return 0;

  const bool batch = options.has("batch") && !options.str("batch").empty();
  const std::string path = options.has("data") ? options.str("data") : std::string();
  if (batch == !path.empty())
    throw kosmos::cli::usage_error("give either an RV data file or --batch DIR|LIST");
  const std::string plot_dir = options.given("plot") ? options.str("plot") : std::string();
  if (!plot_dir.empty()) {
    if (batch) options.reject_given({"plot"}, "draws one star's fit, not a --batch survey");
    kosmos::cli::require_plotting("plot");
  }
  kosmos::kepler::SearchOptions so;
  const int max_planets = int(options.integer("max-planets", 0, 8));
  bool by_evidence = parse_planets(options.str("planets"), max_planets, so.min_planets, so.planets);
  if (options.str("trend") == "auto") {
    so.trend = batch ? 0 : kosmos::kepler::kAutoTrend;
    by_evidence = by_evidence || !batch;
  } else {
    so.trend = int(options.integer("trend", 0));
    if (so.trend > 2) throw kosmos::cli::usage_error("--trend must be auto, 0, 1 or 2");
  }
  by_evidence = by_evidence || options.is_set("evidence");
  const std::string e_prior = options.str("e-prior");
  if (e_prior == "kipping") {
    for (const auto& p : kosmos::kepler::kipping_eccentricity_prior(so.planets))
      so.priors.push_back(p);
  } else if (e_prior != "uniform") {
    throw kosmos::cli::usage_error("--e-prior must be uniform or kipping, not '" + e_prior + "'");
  }
  if (options.has("prior"))
    for (const auto& spec : split(options.str("prior"), ';'))
      so.priors.push_back(kosmos::kepler::parse_prior(spec, "--prior"));
  if (options.has("priors") && !options.str("priors").empty())
    for (const auto& p : kosmos::kepler::read_prior_file(options.str("priors")))
      so.priors.push_back(p);
  if (options.has("fix"))
    for (const auto& item : split(options.str("fix"), ',')) {
      const auto eq = item.find('=');
      if (eq == std::string::npos)
        throw kosmos::cli::usage_error("--fix expects NAME=VALUE, not '" + item + "'");
      so.priors.push_back(kosmos::kepler::parse_prior(
          item.substr(0, eq) + " fixed " + item.substr(eq + 1), "--fix"));
    }
  if (options.has("stellar-mass") && !options.str("stellar-mass").empty()) {
    const auto parts = split(options.str("stellar-mass"), ',');
    double m = 0, sigma = 0;
    if (parts.empty() || parts.size() > 2 || !kosmos::io::parse_double(parts[0], m) || !(m > 0) ||
        (parts.size() == 2 && (!kosmos::io::parse_double(parts[1], sigma) || sigma < 0)))
      throw kosmos::cli::usage_error(
          "--stellar-mass must be M or M,SIGMA with M > 0, SIGMA >= 0, not '" +
          options.str("stellar-mass") + "'");
    so.stellar_mass = m;
    so.stellar_mass_sigma = sigma;
  }
  so.chains = int(options.integer("chains", 4));
  so.burn = int(options.integer("burn", 0));
  so.steps = int(options.integer("steps", 1));
  so.thin = int(options.integer("thin", 1));
  so.max_extensions = int(options.integer("max-extensions", 0, 10));
  so.target_rhat = options.number("target-rhat");
  if (!(so.target_rhat > 1))
    throw kosmos::cli::usage_error("--target-rhat " + options.str("target-rhat") + " must be > 1");
  // Split R-hat halves each chain: with fewer than 4 kept samples it reported 1.000, not "unknown".
  const int kept = (so.steps + so.thin - 1) / so.thin;  // generations 0, thin, 2 thin, ... < steps
  if (kept < 4)
    throw kosmos::cli::usage_error("--steps " + options.str("steps") + " with --thin " +
                                   options.str("thin") + " keeps " + std::to_string(kept) +
                                   " sample(s) per chain: R-hat and ESS need at least 4");
  so.optimizer_generations = int(options.integer("generations", 1));
  so.random_candidates =
      int(options.integer("candidates", 1, 10000000));  // each holds a parameter vector
  so.period_min = options.number("period-min");
  so.period_max = options.number("period-max");
  if (so.period_max < 0)
    throw kosmos::cli::usage_error("--period-max " + options.str("period-max") +
                                   " must be >= 0 (0: twice the time span)");
  so.k_max = options.number("k-max");
  so.e_max = options.number("e-max");
  so.jitter_max = options.number("jitter-max");
  if (!(so.k_max > 0) || !(so.e_max > 0 && so.e_max < 1) || !(so.jitter_max > 0))
    throw kosmos::cli::usage_error("--k-max " + options.str("k-max") + ", --e-max " +
                                   options.str("e-max") + ", --jitter-max " +
                                   options.str("jitter-max") +
                                   ": need K and jitter bounds > 0 and 0 < e-max < 1");
  so.noise = options.str("noise");
  if (options.has("activity") && !options.str("activity").empty()) {
    std::string list = options.str("activity");
    for (std::size_t start = 0; start <= list.size();) {
      const std::size_t comma = std::min(list.find(',', start), list.size());
      const std::string name = list.substr(start, comma - start);
      if (name.empty())
        throw kosmos::cli::usage_error("--activity '" + list +
                                       "': expected column names separated by commas");
      so.activity.push_back(name);
      start = comma + 1;
    }
  }
  so.activity_per_instrument = options.is_set("activity-per-instrument");
  so.epoch = options.number("epoch");
  so.seed = std::uint64_t(options.integer("seed", 0, kosmos::cli::Options::largest_integer));
  const std::string precision = options.str("precision");
  const bool on_gpu = !kosmos::Impl::is_host_space<Kokkos::DefaultExecutionSpace>();
  if (precision == "mixed")
    so.mixed_precision = true;
  else if (precision == "double")
    so.mixed_precision = false;
  else if (precision == "auto")
    so.mixed_precision = on_gpu;
  else
    throw kosmos::cli::usage_error("--precision must be double, mixed or auto, not '" + precision +
                                   "'");
  const std::string solver = options.str("solver");
  if (solver == "markley")
    so.solver = kosmos::kepler::Solver::Markley;
  else if (solver == "danby")
    so.solver = kosmos::kepler::Solver::Danby;
  else
    throw kosmos::cli::usage_error("--solver must be markley or danby, not '" + solver + "'");
  const bool output_given = options.has("output") && !options.str("output").empty();
  const double odds_threshold = options.number("odds-threshold");
  if (!(odds_threshold >= 0))
    throw kosmos::cli::usage_error("--odds-threshold " + options.str("odds-threshold") +
                                   " must be >= 0");
  if (batch && output_given && !kosmos::io::is_hdf5_path(options.str("output")))
    throw kosmos::cli::usage_error("--output " + options.str("output") +
                                   ": with --batch the posteriors of all stars go to one HDF5 "
                                   "file (.h5 or .hdf5), a group per star");
  const std::string output = output_given ? options.str("output")
                             : batch      ? std::string()
                                          : "rv_posterior.txt";
  kosmos::cli::check_output_files(
      {{"data", path}, {"priors", options.has("priors") ? options.str("priors") : ""}},
      {{"output", output}, {"summary", options.has("summary") ? options.str("summary") : ""}});
  if (!options.is_set("quiet"))
    so.progress = [](const std::string& m) { std::cerr << "[kosmos rv] " << m << std::endl; };

  kosmos::kepler::EvidenceOptions ev;
  ev.temperatures = int(options.integer("temperatures", 3));
  ev.ladder_chains = int(options.integer("ladder-chains", 0));
  ev.log_odds_threshold = odds_threshold;
  ev.screen_by_importance = !options.is_set("ladder-all");
  if (batch)
    return run_survey(options.str("batch"), so, options, output,
                      options.is_set("evidence") ? &ev : nullptr);
  if (kosmos::cli::ranks() > 1)
    throw kosmos::cli::usage_error(
        "one star's fit runs on one rank: under mpirun, --batch splits a survey's stars");
  const auto data = kosmos::kepler::read_rv_file(path);
  const auto config = kosmos::current_configuration();
  std::cout << "kosmos rv: " << path << ": " << data.size() << " observations, "
            << data.n_instruments() << " instrument(s) (";
  for (int i = 0; i < data.n_instruments(); ++i)
    std::cout << (i ? ", " : "") << data.instrument_names[i];
  std::cout << "), span " << std::fixed << std::setprecision(1) << data.baseline() << " d\n";
  std::cout << "search: "
            << (so.min_planets >= 0 ? std::to_string(so.min_planets) + ".." : std::string())
            << so.planets << " planet(s), trend "
            << (so.trend == kosmos::kepler::kAutoTrend ? std::string("0..2")
                                                       : std::to_string(so.trend))
            << (by_evidence ? " (compared by evidence)" : "") << ", " << so.priors.size()
            << " prior(s)/fixed, " << so.chains << " DE-MCMC chains, " << so.burn << " + "
            << so.steps << " generations, " << (so.mixed_precision ? "mixed" : "double")
            << " precision, " << solver << " solver, on " << config.backend << " (" << config.device
            << ")\n";

  kosmos::kepler::ModelSelection selection;
  if (by_evidence) selection = kosmos::kepler::select_model(data, so, ev);
  const auto r = by_evidence ? std::move(selection.posterior) : kosmos::kepler::search(data, so);
  if (by_evidence) print_evidence(selection.evidence, so, ev.temperatures);
  kosmos::kepler::write_samples(output, r, data);

  std::cout << std::setprecision(1) << "done in " << r.seconds << " s: " << r.likelihood_evaluations
            << " likelihood evaluations (" << std::scientific << std::setprecision(2)
            << r.likelihood_evaluations / r.seconds << " models/s), DE-MCMC acceptance "
            << std::fixed << std::setprecision(2) << r.acceptance
            << ", max R-hat (rank-normalized split) " << std::setprecision(3) << r.max_rhat
            << ", min ESS (bulk, tail) " << std::setprecision(0) << r.min_ess << ", "
            << r.generations << " generations (" << r.extensions << " extension round(s))\n";
  print_warnings("", r.warnings);
  if (!(r.max_rhat < so.target_rhat))
    std::cout << "note: max R-hat " << std::setprecision(3) << r.max_rhat
              << " >= " << so.target_rhat
              << ": the chains have not converged; use larger --steps or --max-extensions (or "
                 "more --chains on a GPU)\n";
  if (!r.comparison.empty()) {
    std::cout << "\nmodel comparison (ln L at the polished optimum; n = " << r.n_obs << "):\n"
              << "  planets  free      ln L             BIC          AICc      delta BIC\n";
    const double best_bic = r.comparison[std::size_t(r.planets - r.comparison.front().planets)].bic;
    for (const auto& c : r.comparison)
      std::cout << "  " << std::setw(7) << c.planets << std::setw(6) << c.n_free
                << std::setprecision(3) << std::setw(14) << c.loglike << std::setw(14) << c.bic
                << std::setw(14) << c.aicc << std::setw(12) << c.bic - best_bic
                << (c.planets == r.planets ? "  <- preferred" : "") << "\n";
    std::cout << "preferred: " << r.planets << " planet(s); rule: " << r.comparison_rule << "\n";
    if (r.planets == so.planets)
      std::cout << "note: the preferred count is the largest compared (" << so.planets
                << "): more planets may be there; try a larger range\n";
  }
  std::cout << "\nepoch (reference of M0, lambda and the trend) " << std::setprecision(6) << r.epoch
            << "; MAP (polished optimum): chi^2 = " << std::setprecision(3) << r.best_chi2 << " ("
            << r.n_obs << " observations, " << r.n_free
            << " free parameters), ln L = " << r.best_loglike << "\n";
  std::cout << "\nposterior medians with 68% intervals:\n";
  const std::string letters = "bcdefghi";
  for (int j = 0; j < r.planets; ++j) {
    const std::string s = std::string("_") + letters[j];
    std::cout << "planet " << letters[j] << " (periodogram peak " << std::setprecision(6)
              << r.periodogram_periods[std::size_t(j)] << " d, false-alarm probability "
              << std::defaultfloat << std::setprecision(2) << r.false_alarm[std::size_t(j)]
              << std::fixed << "):\n";
    const auto& modes = r.period_modes[std::size_t(j)];
    if (modes.size() > 1) {
      std::cout << "  period modes (the median of P spans them):";
      for (const auto& m : modes)
        std::cout << std::defaultfloat << std::setprecision(8) << "  " << m.period << " d ("
                  << m.lower << " - " << m.upper << ", weight " << std::setprecision(2) << m.weight
                  << ")";
      std::cout << std::fixed << "\n";
    }
    print_row(r.get("P" + s), "d");
    print_row(r.get("K" + s), "m/s");
    print_row(r.get("e" + s), "");
    print_row(r.get("omega_deg" + s), "deg");
    print_row(r.get("M0_deg" + s), "deg");
    print_row(r.get("Tc" + s), "(time of conjunction)");
    print_row(r.get("Tp" + s), "(time of periastron)");
    if (so.stellar_mass > 0) {
      print_row(r.get("msini_jup" + s), "M_jup");
      print_row(r.get("msini_earth" + s), "M_earth");
      print_row(r.get("a_au" + s), "au");
    }
  }
  std::cout << "instruments:\n";
  for (const auto& name : data.instrument_names) {
    print_row(r.get("gamma_" + name), "m/s");
    print_row(r.get("jitter_" + name), "m/s");
  }
  if (r.trend >= 1) {
    std::cout << "trend (about the epoch):\n";
    print_row(r.get("dvdt"), "m/s/d");
    if (r.trend >= 2) print_row(r.get("curv"), "m/s/d^2");
  }
  bool noise_header = false;
  for (const auto& s : r.summary)
    if (s.name.rfind("gp_", 0) == 0) {
      if (!noise_header) std::cout << "noise model (" << so.noise << "):\n";
      noise_header = true;
      print_row(s, s.name == "gp_sigma"                                                ? "m/s"
                   : s.name == "gp_rho" || s.name == "gp_tau" || s.name == "gp_period" ? "d"
                                                                                       : "");
    }
  bool activity_header = false;
  for (const auto& s : r.summary)
    if (s.name.rfind("c_", 0) == 0) {
      if (!activity_header) std::cout << "activity indicators (v += c (x - mean x)):\n";
      activity_header = true;
      print_row(s, "m/s per unit");
    }
  std::cout << "\nposterior samples (" << r.samples.size() << ") written to " << output << "\n";
  if (options.has("summary") && !options.str("summary").empty()) {
    kosmos::io::write_atomically(options.str("summary"), [&](std::ostream& out) {
      out << std::setprecision(17);
      for (const auto& s : r.summary)
        out << s.name << " " << s.median << " " << s.lower << " " << s.upper << " " << s.best << " "
            << s.ess << " " << s.rhat << "\n";
      out << "max_rhat " << r.max_rhat << " 0 0 0 0 0\n";
      out << "planets " << r.planets << " 0 0 0 0 0\n";
      out << "trend " << r.trend << " 0 0 0 0 0\n";
      for (const auto& c : selection.evidence.counts)
        out << "lnZ_" << c.planets << "_planets_trend_" << c.trend << " " << c.ln_z << " "
            << c.ln_z - c.ln_z_error << " " << c.ln_z + c.ln_z_error << " 0 0 0\n";
    });
  }
  if (!plot_dir.empty())
    kosmos::cli::run_plots({"rv", "--data", path, "--posterior", output, "--output", plot_dir});
  return 0;
}

const kosmos::cli::CommandRegistration registration{
    {"rv", "Keplerian planet search + DE-MCMC posterior for an RV data file", &run_rv}};
}  // namespace
