// Command-line options for `kosmos <command>`: declared once, parsed strictly, documented by --help.
#pragma once

#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace kosmos {
namespace cli {

// Bad command line; main() prints it with a pointer to --help and exits with status 2.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Options {
 public:
  Options(std::string command, std::string summary);

  // --name VALUE, with a default ("" = required unless `optional`).
  Options& option(const std::string& name, const std::string& metavar, const std::string& help,
                  const std::string& default_value = "", bool optional = false);
  // --name (boolean).
  Options& flag(const std::string& name, const std::string& help);
  // Positional argument, in order.
  Options& positional(const std::string& name, const std::string& help, bool required = true);

  // Parses args (without the command name). Returns false when --help was asked for (and printed).
  bool parse(const std::vector<std::string>& args);

  bool has(const std::string& name) const;  // given on the command line or has a default
  std::string str(const std::string& name) const;
  double number(const std::string& name) const;
  // An integer in [min_value, max_value] (by default one that fits an int); anything else is a
  // usage error naming the value, never a silent wrap or clamp.
  static constexpr long long largest_integer = 9000000000000000LL;  // below 2^53: exact in a double
  long long integer(const std::string& name, long long min_value = 0,
                    long long max_value = std::numeric_limits<int>::max()) const;
  bool is_set(const std::string& name) const;  // for flags
  bool given(const std::string& name) const;   // on the command line (not a default)
  // A usage error "--NAME <why>" for the first of `names` given on the command line: options that
  // do not apply to the mode the command runs in are refused, not silently ignored.
  void reject_given(std::initializer_list<const char*> names, const std::string& why) const;

  std::string help() const;
  const std::string& command() const { return command_; }

 private:
  struct Spec {
    std::string name, metavar, help, default_value;
    bool is_flag = false, optional = false, positional = false, required = false;
  };
  const Spec& spec(const std::string& name) const;

  std::string command_, summary_;
  std::vector<Spec> specs_;
  std::map<std::string, std::string> values_;
  std::set<std::string> given_;
};

// The integer `text` of option --name in [min_value, max_value] (both within
// +-Options::largest_integer), or a usage error naming it (Options::integer; also for settings
// read back from a checkpoint).
long long parse_integer(const std::string& name, const std::string& text, long long min_value,
                        long long max_value = std::numeric_limits<int>::max());

// A file named on the command line: its option (without "--") and path.
struct FileArgument {
  std::string option, path;
};
// Before any work: a usage error when an output is the same file as an input, or as another
// output, however the paths are spelled (./x, absolute, through links; outputs that are HDF5
// files may share one file: each writes its own datasets), and a file_error naming an output that
// cannot be written (its temporary cannot be created beside it). Empty paths are skipped.
void check_output_files(const std::vector<FileArgument>& inputs, const std::vector<FileArgument>& outputs);

// A subcommand of the `kosmos` tool; registering one makes it appear in `kosmos --help`.
struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

// Static registration: `static const CommandRegistration reg{{"info", "...", &run_info}};`
std::vector<Command>& command_registry();
struct CommandRegistration {
  explicit CommandRegistration(Command command) { command_registry().push_back(command); }
};
}  // namespace cli
}  // namespace kosmos
