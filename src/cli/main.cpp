// The `kosmos` tool: `kosmos <command> [options]`. Commands register themselves (options.hpp).
#include "options.hpp"
#include "ranks.hpp"

#include <kosmos/core/compat.hpp>
#include <kosmos/core/error.hpp>
#include <kosmos/version.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include <unistd.h>

namespace {
void print_usage(std::ostream& out) {
  auto commands = kosmos::cli::command_registry();
  std::sort(commands.begin(), commands.end(),
            [](const auto& a, const auto& b) { return std::strcmp(a.name, b.name) < 0; });
  out << "kosmos " KOSMOS_VERSION_STRING
         " - performance-portable kernels for astrophysics and "
         "polynomial homotopy\n\nusage: kosmos <command> [options]   (kosmos <command> --help)\n\n"
         "commands:\n";
  for (const auto& c : commands)
    out << "  " << c.name << std::string(12 - std::strlen(c.name), ' ') << c.summary << "\n";
  out << "\nKokkos options (e.g. --kokkos-threads=N, --kokkos-device=N) are accepted before the "
         "command.\n";
}

// Results printed to standard output are lost when it cannot take them (a full disk, /dev/full,
// a closed pipe): that run failed, whatever the command returned.
int checked_standard_output(const char* command, int status) {
  errno = 0;
  std::cout.flush();
  if (std::cout && std::fflush(stdout) == 0 && !std::ferror(stdout)) return status;
  const int error = errno;
  std::cerr << "kosmos" << (command ? std::string(" ") + command : std::string())
            << ": error: could not write to standard output"
            << (error ? std::string(" (") + std::strerror(error) + ")" : "")
            << ": the results printed there are incomplete\n";
  return status == 0 ? 1 : status;
}
}  // namespace

// Kokkos' recommended OpenMP thread binding, unless the user chose one; under an MPI launcher
// with several ranks on a node, each rank's threads on its share of the CPUs (node_cpu_share),
// else every rank starts a thread per CPU of the node and their spinning threads crowd each
// other out. The OpenMP runtime reads OMP_* when the program loads, before main, so after setting
// them the tool runs itself again, once; without this every command also printed Kokkos' 4-line
// warning.
void default_openmp_environment([[maybe_unused]] char* argv[]) {
#if defined(KOKKOS_ENABLE_OPENMP) && defined(__linux__)
  bool changed = false;
  const auto set_default = [&](const char* name, const std::string& value) {
    if (std::getenv(name)) return;  // the user's choice stays
    ::setenv(name, value.c_str(), 1);
    changed = true;
  };
  const std::vector<int> share = kosmos::cli::node_cpu_share();
  if (!share.empty()) set_default("OMP_NUM_THREADS", std::to_string(share.size()));
  if (!std::getenv("OMP_PROC_BIND")) {
    std::string places = share.empty() ? "threads" : "";
    for (const int cpu : share) places += (places.empty() ? "{" : ",{") + std::to_string(cpu) + "}";
    set_default("OMP_PLACES", places);
    set_default("OMP_PROC_BIND", "spread");
  }
  if (changed) ::execv("/proc/self/exe", argv);  // returns only if it failed: run on as it is
#endif
}

// Where a failed command's message goes: standard error, on every rank (with its number when there
// are several), since only the failing rank knows it.
std::ostream& failed(const kosmos::cli::RankSession& ranks, const char* command) {
  std::ostream& out = ranks.error_stream();
  out << "kosmos " << command;
  if (kosmos::cli::ranks() > 1) out << " (rank " << kosmos::cli::rank() << ")";
  return out << ": error: ";
}

int main(int argc, char* argv[]) {
  default_openmp_environment(argv);
  // MPI (under mpirun) before Kokkos, finalized after it.
  kosmos::cli::RankSession ranks(argc, argv);
  // Only --kokkos-* arguments go to Kokkos: Kokkos 3.4 would also answer a bare --help itself.
  std::vector<std::string> kokkos_args;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--kokkos-", 9) == 0) {
      kokkos_args.push_back(kosmos::Impl::kokkos_argument_spelling(argv[i]));
    } else {
      args.emplace_back(argv[i]);
    }
  }
  for (auto& a : ranks.kokkos_arguments(kokkos_args)) kokkos_args.push_back(a);
  std::vector<char*> kokkos_argv{argv[0]};
  for (auto& a : kokkos_args) kokkos_argv.push_back(a.data());
  int kokkos_argc = int(kokkos_argv.size());
  kokkos_argv.push_back(nullptr);
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv.data());
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage(std::cout);
    return checked_standard_output(nullptr, args.empty() ? 2 : 0);
  }
  if (args[0] == "--version") {
    std::cout << "kosmos " KOSMOS_VERSION_STRING "\n";
    return checked_standard_output(nullptr, 0);
  }
  const auto& commands = kosmos::cli::command_registry();
  const auto command = std::find_if(commands.begin(), commands.end(),
                                    [&](const auto& c) { return args[0] == c.name; });
  if (command == commands.end()) {
    std::cerr << "kosmos: unknown command '" << args[0] << "'\n\n";
    print_usage(std::cerr);
    return 2;
  }
  try {
    return checked_standard_output(
        command->name, command->run(std::vector<std::string>(args.begin() + 1, args.end())));
  } catch (const kosmos::cli::usage_error& e) {
    std::cerr << "kosmos " << command->name << ": " << e.what() << " (see 'kosmos " << command->name
              << " --help')\n";
    return 2;
  } catch (const std::bad_alloc&) {
    failed(ranks, command->name)
        << "out of memory (std::bad_alloc): a size on the command line or in an input "
           "file asks for more memory than this machine has\n";
  } catch (const std::exception& e) {
    failed(ranks, command->name) << e.what() << "\n";
  }
  // Other ranks may wait for this one in a collective call: a failed run ends them all.
  if (kosmos::cli::ranks() > 1) ranks.abort(1);
  return 1;
}
