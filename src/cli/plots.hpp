// `--plot DIR` of the tool: the Python package's kosmos.cli_plots draws the files a command wrote.
#pragma once

#include <string>
#include <vector>

namespace kosmos {
namespace cli {

// A usage error unless the plots can be made (the tool built with the Python package, whose
// interpreter imports kosmos.cli_plots and matplotlib): checked before a long run, not after.
void require_plotting(const std::string& option);

// Runs `python3 -m kosmos.cli_plots ARGS...` and prints the PNG files written; a file_error when
// it fails (the command's own outputs are already written then).
void run_plots(const std::vector<std::string>& args);

}  // namespace cli
}  // namespace kosmos
