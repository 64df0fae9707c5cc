// `kosmos rv`: global search and DE-MCMC posterior of n-planet Keplerian models for an RV file.
#include "options.hpp"

#include <kosmos/core/configuration.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/kepler/search.hpp>

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace {

void print_row(const kosmos::kepler::ParameterSummary& s, const char* unit, int precision) {
  std::cout << "  " << std::left << std::setw(14) << s.name << std::right << std::fixed << std::setprecision(precision)
            << std::setw(16) << s.median << "  +" << std::setw(precision + 5) << s.upper - s.median << "  -"
            << std::setw(precision + 5) << s.median - s.lower << "   (MAP " << s.best << ")  " << unit << "\n";
}

int run_rv(const std::vector<std::string>& args) {
  kosmos::cli::Options options(
      "rv",
      "Search an RV file (whitespace or CSV columns time velocity sigma [instrument], RadVel header names, any row order) for Keplerian planets: periodogram-seeded "
      "random search and differential-evolution optimization per planet, then differential-evolution MCMC "
      "(ter Braak 2006) over all orbits with per-instrument offsets and jitters, on the batched chi^2 kernels. "
      "Prints medians with 68% intervals and writes the posterior samples.");
  options.positional("data", "RV data file (e.g. data/rv/hd164922_radvel.txt)");
  options.option("planets", "N", "number of planets", "2");
  options.option("chains", "N", "DE-MCMC chains (also the DE population); even, >= 2 x parameters + 2", "160");
  options.option("burn", "N", "DE-MCMC burn-in generations", "1000");
  options.option("steps", "N", "DE-MCMC generations kept after burn-in", "1000");
  options.option("thin", "N", "keep every N-th generation", "4");
  options.option("generations", "N", "DE optimizer generations per planet", "150");
  options.option("candidates", "N", "random-search orbits per planet", "8192");
  options.option("period-min", "DAYS", "shortest period searched", "0.5");
  options.option("period-max", "DAYS", "longest period searched (0: twice the time span)", "0");
  options.option("epoch", "TIME", "reference time of M0 (0: middle of the data)", "0");
  options.option("precision", "P", "likelihood precision: double, mixed, or auto (mixed on GPUs)", "auto");
  options.option("solver", "S", "Kepler solver: markley or danby", "markley");
  options.option("seed", "N", "random seed", "1");
  options.option("output", "FILE", "posterior samples file", "rv_posterior.txt");
  options.option("summary", "FILE", "also write 'name median lower upper MAP' lines to FILE", "", true);
  options.flag("quiet", "no progress messages");
  if (!options.parse(args)) return 0;

  const std::string path = options.str("data");
  const auto data = kosmos::kepler::read_rv_file(path);
  kosmos::kepler::SearchOptions so;
  so.planets = int(options.integer("planets", 1));
  so.chains = int(options.integer("chains", 4));
  so.burn = int(options.integer("burn", 0));
  so.steps = int(options.integer("steps", 1));
  so.thin = int(options.integer("thin", 1));
  so.optimizer_generations = int(options.integer("generations", 1));
  so.random_candidates = int(options.integer("candidates", 1));
  so.period_min = options.number("period-min");
  so.period_max = options.number("period-max");
  so.epoch = options.number("epoch");
  so.seed = std::uint64_t(options.integer("seed", 0));
  const std::string precision = options.str("precision");
  const bool on_gpu = !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                                  Kokkos::DefaultExecutionSpace::memory_space>::accessible;
  if (precision == "mixed")
    so.mixed_precision = true;
  else if (precision == "double")
    so.mixed_precision = false;
  else if (precision == "auto")
    so.mixed_precision = on_gpu;
  else
    throw kosmos::cli::usage_error("--precision must be double, mixed or auto, not '" + precision + "'");
  const std::string solver = options.str("solver");
  if (solver == "markley")
    so.solver = kosmos::kepler::Solver::Markley;
  else if (solver == "danby")
    so.solver = kosmos::kepler::Solver::Danby;
  else
    throw kosmos::cli::usage_error("--solver must be markley or danby, not '" + solver + "'");
  const std::string output = options.str("output");
  if (output == path) throw kosmos::cli::usage_error("--output would overwrite the input file '" + path + "'");
  if (!options.is_set("quiet")) so.progress = [](const std::string& m) { std::cerr << "[kosmos rv] " << m << std::endl; };

  const auto config = kosmos::current_configuration();
  std::cout << "kosmos rv: " << path << ": " << data.size() << " observations, " << data.n_instruments()
            << " instrument(s) (";
  for (int i = 0; i < data.n_instruments(); ++i) std::cout << (i ? ", " : "") << data.instrument_names[i];
  std::cout << "), span " << std::fixed << std::setprecision(1) << data.baseline() << " d\n";
  std::cout << "search: " << so.planets << " planet(s), " << so.chains << " DE-MCMC chains, " << so.burn << " + "
            << so.steps << " generations, " << (so.mixed_precision ? "mixed" : "double") << " precision, "
            << solver << " solver, on " << config.backend << " (" << config.device << ")\n";

  const auto r = kosmos::kepler::search(data, so);
  kosmos::kepler::write_samples(output, r, data);

  std::cout << std::setprecision(1) << "done in " << r.seconds << " s: " << r.likelihood_evaluations
            << " likelihood evaluations (" << std::scientific << std::setprecision(2)
            << r.likelihood_evaluations / r.seconds << " models/s), DE-MCMC acceptance " << std::fixed
            << std::setprecision(2) << r.acceptance << ", max R-hat " << std::setprecision(3) << r.max_rhat << "\n";
  if (r.max_rhat > 1.1)
    std::cout << "note: max Gelman-Rubin R-hat " << std::setprecision(3) << r.max_rhat
              << " > 1.1: the chains have not fully mixed; use larger --burn/--steps (or more --chains on a GPU)\n";
  std::cout << "epoch (M0 reference) " << std::setprecision(4) << r.epoch << "; MAP chi^2 = " << std::setprecision(2)
            << r.best_chi2 << " (" << r.n_obs << " observations), ln L = " << r.best_loglike << "\n";
  std::cout << "\nposterior medians with 68% intervals:\n";
  const std::string letters = "bcdefghi";
  for (int j = 0; j < so.planets; ++j) {
    const std::string s = std::string("_") + letters[j];
    std::cout << "planet " << letters[j] << " (periodogram peak " << std::setprecision(3)
              << r.periodogram_periods[j] << " d):\n";
    print_row(r.get("P" + s), "d", 3);
    print_row(r.get("K" + s), "m/s", 3);
    print_row(r.get("e" + s), "", 3);
    print_row(r.get("omega_deg" + s), "deg", 1);
    print_row(r.get("M0_deg" + s), "deg", 1);
    print_row(r.get("Tc" + s), "(time of conjunction)", 2);
    print_row(r.get("Tp" + s), "(time of periastron)", 2);
  }
  std::cout << "instruments:\n";
  for (const auto& name : data.instrument_names) {
    print_row(r.get("gamma_" + name), "m/s", 2);
    print_row(r.get("jitter_" + name), "m/s", 2);
  }
  std::cout << "\nposterior samples (" << r.samples.size() << ") written to " << output << "\n";
  if (options.has("summary") && !options.str("summary").empty()) {
    kosmos::io::write_atomically(options.str("summary"), [&](std::ostream& out) {
      out << std::setprecision(10);
      for (const auto& s : r.summary) out << s.name << " " << s.median << " " << s.lower << " " << s.upper << " " << s.best << "\n";
      out << "max_rhat " << r.max_rhat << " 0 0 0\n";
    });
  }
  return 0;
}

const kosmos::cli::CommandRegistration registration{
    {"rv", "Keplerian planet search + DE-MCMC posterior for an RV data file", &run_rv}};
}  // namespace
