// `kosmos series`: value and gradient of a polynomial system with power series coefficients at a
// point of power series, in N-fold double precision (Verschelde 2021); also writes the paper's
// test polynomials p1, p2, p3 in the same text format (or as HDF5); with --newton, the power-series
// solution of a polynomial homotopy by Newton's method. The work is done by
// kosmos::series::evaluate_file and solve_newton (series/pipeline.hpp), which the end-to-end
// benchmark calls too.
#include "options.hpp"
#include "ranks.hpp"

#include <kosmos/core/error.hpp>
#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>
#include <kosmos/series/pipeline.hpp>
#include <kosmos/series/text_format.hpp>
#include <kosmos/series/track.hpp>

#include <iostream>
#include <sstream>

namespace {
using namespace kosmos::series;

const char* kSummary =
    "Evaluate a polynomial system and its gradient at a point of truncated power series in\n"
    "N-fold double precision (N = 1, 2, 3, 4, 5, 8, 10; real or complex coefficients),\n"
    "with the layered convolution and addition jobs of Verschelde (2021). With --generate,\n"
    "write the paper's test polynomial p1, p2 or p3 (random coefficients and point) instead.\n"
    "\n"
    "Input format ('#' starts a comment; tokens separated by blanks):\n"
    "  variables 3                   the variables are x1 .. x3\n"
    "  degree 4                      every series has degree + 1 coefficients c_0 .. c_d\n"
    "  complex                       (optional) coefficients are written re,im\n"
    "  polynomial                    starts a polynomial (optional before the first)\n"
    "  constant : 1 0 0 0 0          constant series (default zero)\n"
    "  term x1 x3^2 : 0.5 1 0 0 -2   a monomial (distinct variables, exponents >= 1) and its\n"
    "                                coefficient series\n"
    "  point x1 : 1 0.25 0 0 0       the series substituted for x1 (one line per variable)\n"
    "\n"
    "Numbers are decimal (\"-1.5\", \"2e-3\", \"4.9e-324\"), read correctly rounded to N doubles\n"
    "(the N-double nearest to the decimal, every double exponent and subnormals included); a\n"
    "number beyond the largest double (1.7976931348623157e308) is an error naming file and line.\n"
    "Exponents are at most 1048576 (powers are computed by repeated squaring); a polynomial may\n"
    "be a constant alone.\n"
    "\n"
    "Output: for each polynomial k, a line 'value k : c_0 ... c_d' and one line\n"
    "'derivative k x<i> : c_0 ... c_d' per variable (complex: re,im), every coefficient correctly\n"
    "rounded to --digits digits, by default with enough digits to read back the same N-double.\n"
    "A value or derivative that overflows (inf) or is nan is an error naming file, line and\n"
    "coefficient.\n"
    "\n"
    "HDF5: an input or --output path ending in .h5 or .hdf5 is binary (layouts in\n"
    "src/kosmos/series/system.hpp and pipeline.hpp): the coefficients and the point as\n"
    "N-double limbs (converted to --precision, exactly when adding limbs), the values and\n"
    "gradients as limbs. --generate writes a .h5 system at --precision.\n"
    "\n"
    "Newton's method on power series (--newton SYSTEM): SYSTEM (either format) is a square\n"
    "homotopy H(x, t) = 0, n polynomials in x1 .. xn whose coefficient series are in t; its\n"
    "coefficients above the file's degree are zero. From the start point x0 (--start, else the\n"
    "constant terms of the point lines), with H(x0, 0) = 0 and the Jacobian of H at (x0, 0)\n"
    "invertible, Newton steps on truncated series at degrees 1, 3, 7, ..., --degree give the\n"
    "series solution x(t). Output: 'x<j> : c_0 ... c_d' per variable (printed as above),\n"
    "'residual : r' (the largest coefficient of H(x(t), t) up to t^d, of the printed series),\n"
    "'condition : c' (cond_1 of the Jacobian at t = 0), 'error : e' (estimated largest error of\n"
    "a coefficient: one more Newton correction, at least c u |x|), for d >= 1\n"
    "'ratio x<j> : |c_(d-1) / c_d|' (as PHCpack reports it) and for d >= 3 'radius x<j> : R'\n"
    "(radius of convergence from the poles of a Pade approximant of the last coefficients:\n"
    "trust the series well inside it); .h5 --output: layout in pipeline.hpp. Exit 1 with a\n"
    "message naming the step when a Jacobian is singular, when a result is not finite, the\n"
    "steps do not converge, or the start is not a root of H(x, 0): Newton would move it by more\n"
    "than 1e-6 max(1, |x0|); --refine-start lets it move to a root ('start_shift : s' then).\n"
    "Example: x^2 - 1 - t (variables 1, degree 1, 'constant : -1 -1', 'term x1^2 : 1 0',\n"
    "'point x1 : 1 0') with --newton FILE --degree 4 gives sqrt(1 + t) = 1 + t/2 - t^2/8 + ...\n"
    "\n"
    "Symbolic input (either mode): a file whose first word is no keyword above holds equations\n"
    "like 'x1^2*x2 - (1 + 2*t)*x3 + 0.5;' (PHCpack/Bertini style: variables by name in order of\n"
    "appearance, i or I the imaginary unit, t the series variable, an optional first line with\n"
    "the number of equations).\n"
    "\n"
    "Solving (--track SYSTEM): all isolated solutions of a square system without t, by a\n"
    "total-degree homotopy with random gamma (--seed), tracked on all paths at once with a Pade\n"
    "predictor in --precision 1, 2 or 4 doubles. Failed paths, path jumps (two paths at one\n"
    "regular solution) and lone singular ends are tracked again, in one launch of just those\n"
    "paths, in twice the precision up to --max-precision, then once more there, each time\n"
    "with smaller steps. Output: one block per distinct solution, 'solution k :\n"
    "regular|singular multiplicity m path p precision N residual r condition c' and\n"
    "'x<j> : re,im', a line per failed path, then the summary 'paths P regular R singular S\n"
    "at_infinity I failed F distinct D raised K passes Q precision1 A precision2 B precision4\n"
    "C' (paths by the precision of their final pass; .h5 --output: per-path arrays, layout in\n"
    "src/kosmos/series/track.hpp). With --generic GENERIC, a generic\n"
    "instance of the same family (coefficients affine in parameters, generic complex values)\n"
    "is solved by total degree and its regular solutions are tracked to SYSTEM along\n"
    "H = (1 - t) GENERIC + t SYSTEM: the parameter homotopy, as many paths as GENERIC has\n"
    "solutions.";

void emit(const std::string& output, const std::string& text) {
  if (output.empty() || output == "-") {
    std::cout << text;
    return;
  }
  kosmos::io::write_atomically(output, [&](std::ostream& out) { out << text; });
}

int precision(const kosmos::cli::Options& options) {
  const long long N = options.integer("precision", 1);
  if (N > 10 || !pipeline_supports(int(N)))
    throw kosmos::cli::usage_error("--precision " + options.str("precision") +
                                   " is not one of 1, 2, 3, 4, 5, 8, 10");
  return int(N);
}

// --newton SYSTEM: load_system -> solve_newton -> write_newton / write_newton_h5.
int run_newton(const kosmos::cli::Options& options, KernelChoice kernels) {
  const std::string system = options.str("newton"), output = options.str("output");
  if (!options.str("input").empty())
    throw kosmos::cli::usage_error("--newton takes the system file as its value, no <input>");
  kosmos::cli::check_output_files({{"newton", system}}, {{"output", output}});
  const int N = precision(options);
  std::vector<std::string> start;
  std::istringstream tokens(options.has("start") ? options.str("start") : "");
  for (std::string token; tokens >> token;) start.push_back(token);
  const NumericSystem sys = load_system(system, N);
  if (!start.empty() && start.size() != std::size_t(sys.num_variables))
    throw kosmos::cli::usage_error("--start has " + std::to_string(start.size()) +
                                   " value(s), expected one per variable (" +
                                   std::to_string(sys.num_variables) + ")");
  const int degree = int(options.integer("degree", 0, kosmos::series::max_degree));
  const NewtonSolution solution =
      solve_newton(sys, degree, start, kernels, options.is_set("timing") ? &std::cerr : nullptr,
                   options.is_set("refine-start"));
  if (kosmos::io::is_hdf5_path(output)) {
    write_newton_h5(output, solution, system);
    return 0;
  }
  std::ostringstream text;
  text << "# kosmos series --newton: " << system << ", " << N << "-fold double"
       << (sys.complex ? " complex" : "") << ", degree " << degree << ", " << sys.num_variables
       << " variables, " << solution.result.steps.size() << " Newton steps at degrees";
  for (const auto& step : solution.result.steps) text << ' ' << step.degree;
  text << "\n";
  write_newton(text, solution,
               int(options.integer("digits", 0, kosmos::series::max_output_digits)));
  emit(output, text.str());
  return 0;
}

// --track SYSTEM: load_system -> track -> write_track / write_track_h5.
int run_track(const kosmos::cli::Options& options) {
  const std::string system = options.str("track"), output = options.str("output");
  if (!options.str("input").empty())
    throw kosmos::cli::usage_error("--track takes the system file as its value, no <input>");
  options.reject_given(
      {"newton", "start", "refine-start", "degree", "kernels", "complex", "timing"},
      "does not apply to --track");
  const std::string generic = options.has("generic") ? options.str("generic") : "";
  if (generic.empty())
    kosmos::cli::check_output_files({{"track", system}}, {{"output", output}});
  else
    kosmos::cli::check_output_files({{"track", system}, {"generic", generic}},
                                    {{"output", output}});
  TrackOptions track_options;
  track_options.precision =
      options.given("precision") ? int(options.integer("precision", 1, 4)) : 1;
  track_options.max_precision = int(options.integer("max-precision", 1, 4));
  for (int N : {track_options.precision, track_options.max_precision})
    if (N == 3) throw kosmos::cli::usage_error("--track precisions are 1, 2 or 4 doubles, not 3");
  if (track_options.max_precision < track_options.precision)
    throw kosmos::cli::usage_error("--max-precision " + options.str("max-precision") +
                                   " is below --precision " + options.str("precision"));
  track_options.seed = std::uint64_t(options.integer("seed", 0, 4294967295LL));
  track_options.lanes_per_path = int(options.integer("lanes", 0, 32));
  std::istringstream numbers(options.has("paths") ? options.str("paths") : "");
  for (std::string token; numbers >> token;) {
    std::size_t used = 0;
    long long p = 0;
    try {
      p = std::stoll(token, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != token.size() || p < 1)
      throw kosmos::cli::usage_error("--paths: '" + token + "' is not a path number (1, 2, ...)");
    track_options.paths.push_back(p - 1);
  }
  const NumericSystem sys = load_system(system, track_options.max_precision);
  // Under mpirun each pass's paths are split over the ranks and every rank gets all results back
  // (the next pass depends on the deduplication of all of them); rank 0 writes.
  const Kokkos::DefaultExecutionSpace space;
  const auto schedule = kosmos::cli::schedule_from(
      options.integer("mpi-chunk", 0, kosmos::cli::Options::largest_integer), 4);
  TrackPass pass;
  if (kosmos::cli::ranks() > 1)
    pass = [&](int precision, const std::vector<std::int64_t>& paths, const TrackRun& run,
               TrackResult& result) {
      const std::size_t width = 9 + std::size_t(2 * precision * result.num_variables);
      std::vector<double> rows;
      const auto done = kosmos::cli::run_chunks(
          std::int64_t(paths.size()), schedule, [&](const kosmos::distributed::IndexRange& range) {
            const std::vector<std::int64_t> part(paths.begin() + range.begin,
                                                 paths.begin() + range.end);
            run(part);
            for (const std::int64_t p : part) {
              const auto& r = result.paths[std::size_t(p)];
              for (double v :
                   {double(r.status), double(r.precision), double(r.steps), double(r.rejections),
                    double(r.winding), r.t, r.residual, r.condition, r.max_abs})
                rows.push_back(v);
              rows.insert(rows.end(), r.limbs.begin(), r.limbs.end());
            }
          });
      rows = kosmos::cli::gather_rows(done, rows, width, std::int64_t(paths.size()), true);
      for (std::size_t k = 0; k < paths.size(); ++k) {
        const double* row = &rows[k * width];
        auto& r = result.paths[std::size_t(paths[k])];
        r.status = kosmos::series::PathStatus(int(row[0]));
        r.precision = int(row[1]);
        r.steps = int(row[2]);
        r.rejections = int(row[3]);
        r.winding = int(row[4]);
        r.t = row[5];
        r.residual = row[6];
        r.condition = row[7];
        r.max_abs = row[8];
        r.limbs.assign(row + 9, row + width);
      }
    };
  TrackResult result;
  if (generic.empty()) {
    result = track(space, sys, track_options, pass);
  } else {
    // the generic instance by total degree (all its paths), then its solutions moved to SYSTEM
    const NumericSystem start_system = load_system(generic, track_options.max_precision);
    TrackOptions generic_options = track_options;
    generic_options.paths.clear();
    const TrackResult start = track(space, start_system, generic_options, pass);
    if (start.failed > 0)
      throw kosmos::invalid_input(generic + ": " + std::to_string(start.failed) +
                                  " path(s) of the generic system failed; try another --seed");
    result = track_parameter(space, start_system, start, sys, track_options, pass);
  }
  if (!kosmos::cli::is_root()) return result.failed == 0 ? 0 : 1;  // rank 0 writes
  if (kosmos::io::is_hdf5_path(output)) {
    write_track_h5(output, result, system);
  } else {
    std::ostringstream text;
    write_track(text, result, system,
                int(options.integer("digits", 0, kosmos::series::max_output_digits)));
    emit(output, text.str());
  }
  return result.failed == 0 ? 0 : 1;
}

int run_series(const std::vector<std::string>& args) {
  kosmos::cli::Options options("series", kSummary);
  options.positional("input", "polynomial system file (format above)", false)
      .option("precision", "N", "N-fold double precision: 1, 2, 3, 4, 5, 8 or 10", "2")
      .option("output", "FILE", "write the result here instead of standard output (.h5: HDF5)", "",
              true)
      .option("digits", "D",
              "significant digits per coefficient (0: enough to read back the same N-double)", "0")
      .option("kernels", "KIND",
              "auto (CUDA specialization on GPUs) or generic (Kokkos kernels only)", "auto")
      .option("generate", "NAME", "write test polynomial p1, p2 or p3 with a random point and exit",
              "", true)
      .option("newton", "SYSTEM", "power-series solution of the homotopy SYSTEM (see above)", "",
              true)
      .option("track", "SYSTEM", "all isolated solutions of SYSTEM (see above)", "", true)
      .option("mpi-chunk", "N",
              "with --track under mpirun: paths per chunk of the ranks' work queue (0: a "
              "quarter of each rank's share)",
              "0")
      .option("max-precision", "N",
              "with --track: raise failed paths up to N doubles (1, 2 or 4; --precision, default 1 "
              "there,\n"
              "is the first pass)",
              "4")
      .option("lanes", "L",
              "with --track on a GPU: vector lanes a path (1, 2, 4, 8, 16 or 32; 0: the power of "
              "two\nat or above the unknowns + 1)",
              "0")
      .option("generic", "GENERIC",
              "with --track: solve GENERIC (a generic instance of SYSTEM's family, same variables "
              "in\nthe same order) by total degree, then move its solutions to SYSTEM (parameter "
              "homotopy)",
              "", true)
      .option("paths", "\"P1 .. Pk\"",
              "with --track: track only these paths (numbers as printed, from 1)", "", true)
      .option("start", "\"X1 .. Xn\"",
              "with --newton: start point, blank-separated (complex: re,im)", "", true)
      .option("degree", "D",
              "with --generate: truncation degree; with --newton: degree of the solution", "8")
      .option("seed", "S", "with --generate or --track (gamma): random seed, 0..4294967295", "1")
      .flag("refine-start",
            "with --newton: let Newton move a start that is not a root to a root (else refused)")
      .flag("complex", "with --generate: complex coefficients")
      .flag("timing", "print job counts and stage times to standard error");
  if (!options.parse(args)) return 0;
  const std::string input = options.str("input"), output = options.str("output");
  if (options.has("generate") && !options.str("generate").empty()) {
    if (!input.empty()) throw kosmos::cli::usage_error("--generate takes no input file");
    options.reject_given({"newton", "start", "refine-start", "digits", "kernels", "timing"},
                         "does not apply to --generate");
    const std::string name = options.str("generate");
    if (name != "p1" && name != "p2" && name != "p3")
      throw kosmos::cli::usage_error("--generate '" + name + "': expected p1, p2 or p3");
    const int degree = int(options.integer("degree", 0, kosmos::series::max_degree));
    const long long seed = options.integer("seed", 0, 4294967295LL);
    const auto sys = generate_system(name, degree, options.is_set("complex"), unsigned(seed));
    const std::string comment = "test polynomial " + name + " of Verschelde (2021), degree " +
                                std::to_string(degree) + ", seed " + options.str("seed") +
                                " (kosmos series --generate)";
    if (kosmos::io::is_hdf5_path(output)) {
      const int N = precision(options);
      write_system_h5(output, to_numeric(sys, N, "--generate " + name), comment);
      return 0;
    }
    std::ostringstream text;
    write_system(text, sys, comment);
    emit(output, text.str());
    return 0;
  }
  if (options.has("track") && !options.str("track").empty()) return run_track(options);
  options.reject_given({"max-precision", "paths", "generic", "mpi-chunk", "lanes"},
                       "applies to --track only");
  if (kosmos::cli::ranks() > 1)
    throw kosmos::cli::usage_error(
        "runs on one rank: under mpirun only --track splits its paths over ranks");
  const std::string kernels_name = options.str("kernels");
  if (kernels_name != "auto" && kernels_name != "generic")
    throw kosmos::cli::usage_error("--kernels '" + kernels_name + "': expected auto or generic");
  const KernelChoice kernels =
      kernels_name == "auto" ? KernelChoice::automatic : KernelChoice::generic;
  options.reject_given({"seed", "complex"}, "applies to --generate only");
  if (options.has("newton") && !options.str("newton").empty()) return run_newton(options, kernels);
  options.reject_given({"degree", "start", "refine-start"},
                       "applies to --generate and --newton, not to evaluating a system file");
  if (input.empty())
    throw kosmos::cli::usage_error(
        "missing argument <input> (or --generate NAME, --newton SYSTEM)");
  kosmos::cli::check_output_files({{"input", input}}, {{"output", output}});
  FileEvaluation job;
  job.input = input;
  job.output = output;
  job.precision = precision(options);
  job.kernels = kernels;
  job.digits = int(options.integer("digits", 0, kosmos::series::max_output_digits));
  job.timing = options.is_set("timing") ? &std::cerr : nullptr;
  evaluate_file(job, std::cout);
  return 0;
}
const kosmos::cli::CommandRegistration registration{
    {"series", "power series polynomial value + gradient, multi-double", &run_series}};
}  // namespace
