#include "plots.hpp"

#include "options.hpp"

#include <kosmos/config.hpp>
#include <kosmos/core/error.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace kosmos {
namespace cli {
namespace {
std::string interpreter() {
  if (const char* python = std::getenv("KOSMOS_PYTHON")) return python;
  return KOSMOS_PYTHON_EXECUTABLE;
}

// Where the kosmos package is: beside an installed tool (<prefix>/bin/kosmos and
// <prefix>/<python dir>/kosmos), else in the build tree the tool was built in.
std::string package_path() {
  char self[4096];
  const auto n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string exe(self, std::size_t(n));
    const auto bin = exe.rfind('/');
    const std::string installed = exe.substr(0, bin) + "/../" KOSMOS_PYTHON_INSTALL_DIR;
    if (::access((installed + "/kosmos/cli_plots.py").c_str(), R_OK) == 0) return installed;
  }
  return KOSMOS_PYTHON_BUILD_DIR;
}

// Runs the interpreter with `args`, PYTHONPATH led by the package; its exit status (-1: could
// not run it). Standard output is silenced when `quiet`.
int run_python(const std::vector<std::string>& args, bool quiet) {
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    const char* old_path = std::getenv("PYTHONPATH");
    const std::string path = package_path() + (old_path ? std::string(":") + old_path : "");
    ::setenv("PYTHONPATH", path.c_str(), 1);
    ::setenv("MPLBACKEND", "Agg", 0);
    if (quiet && !std::freopen("/dev/null", "w", stdout)) ::_exit(127);
    const std::string python = interpreter();
    std::vector<char*> argv{const_cast<char*>(python.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
}  // namespace

void require_plotting(const std::string& option) {
  if (!KOSMOS_HAVE_PYTHON)
    throw usage_error("--" + option +
                      ": this kosmos was built without its Python package (configure with "
                      "-DKOSMOS_ENABLE_PYTHON=ON; Debian: pybind11-dev python3-numpy "
                      "python3-matplotlib)");
  if (run_python({"-c", "import kosmos.cli_plots"}, true) != 0)
    throw usage_error("--" + option + ": '" + interpreter() +
                      " -c \"import kosmos.cli_plots\"' failed (the message above says why; "
                      "matplotlib: Debian python3-matplotlib; another interpreter: KOSMOS_PYTHON)");
}

void run_plots(const std::vector<std::string>& args) {
  std::vector<std::string> full{"-m", "kosmos.cli_plots"};
  full.insert(full.end(), args.begin(), args.end());
  std::cout << "plots:\n";
  if (run_python(full, false) != 0)
    throw file_error(
        "the plots could not be made (python3 -m kosmos.cli_plots failed; the "
        "message above says why); the results themselves are written");
}

}  // namespace cli
}  // namespace kosmos
