#include "options.hpp"

#include <kosmos/core/hdf5.hpp>
#include <kosmos/core/io.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace kosmos {
namespace cli {

Options::Options(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)) {}

Options& Options::option(const std::string& name, const std::string& metavar, const std::string& help,
                         const std::string& default_value, bool optional) {
  Spec s;
  s.name = name;
  s.metavar = metavar;
  s.help = help;
  s.default_value = default_value;
  s.optional = optional || !default_value.empty();
  specs_.push_back(s);
  return *this;
}

Options& Options::flag(const std::string& name, const std::string& help) {
  Spec s;
  s.name = name;
  s.help = help;
  s.is_flag = true;
  s.optional = true;
  specs_.push_back(s);
  return *this;
}

Options& Options::positional(const std::string& name, const std::string& help, bool required) {
  Spec s;
  s.name = name;
  s.help = help;
  s.positional = true;
  s.required = required;
  s.optional = !required;
  specs_.push_back(s);
  return *this;
}

const Options::Spec& Options::spec(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name) return s;
  throw std::logic_error("kosmos cli: option '" + name + "' was never declared");
}

bool Options::parse(const std::vector<std::string>& args) {
  std::size_t next_positional = 0;
  std::vector<const Spec*> positionals;
  for (const auto& s : specs_)
    if (s.positional) positionals.push_back(&s);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << help();
      return false;
    }
    if (arg.rfind("--", 0) == 0) {
      std::string name = arg.substr(2), value;
      const auto eq = name.find('=');
      const bool inline_value = eq != std::string::npos;
      if (inline_value) {
        value = name.substr(eq + 1);
        name.erase(eq);
      }
      const Spec* found = nullptr;
      for (const auto& s : specs_)
        if (!s.positional && s.name == name) found = &s;
      if (!found) throw usage_error("unknown option '--" + name + "'");
      if (found->is_flag) {
        if (inline_value) throw usage_error("option '--" + name + "' takes no value");
        values_[name].assign(1, '1');  // not = "1": GCC 12 -Wrestrict false positive in C++20
        given_.insert(name);
        continue;
      }
      if (!inline_value) {
        if (i + 1 >= args.size()) throw usage_error("option '--" + name + "' needs a value (" + found->metavar + ")");
        value = args[++i];
      }
      if (!values_.emplace(name, value).second)
        throw usage_error("option '--" + name + "' is given twice ('" + values_[name] + "', then '" + value + "')");
      given_.insert(name);
      continue;
    }
    if (next_positional >= positionals.size()) throw usage_error("unexpected argument '" + arg + "'");
    given_.insert(positionals[next_positional]->name);
    values_[positionals[next_positional++]->name] = arg;
  }
  for (const auto& s : specs_) {
    if (s.is_flag || values_.count(s.name)) continue;
    if (!s.default_value.empty()) {
      values_[s.name] = s.default_value;
    } else if (!s.optional) {
      throw usage_error(s.positional ? "missing argument <" + s.name + ">"
                                     : "missing required option '--" + s.name + "'");
    }
  }
  return true;
}

bool Options::has(const std::string& name) const { return values_.count(name) != 0; }

std::string Options::str(const std::string& name) const {
  spec(name);
  const auto it = values_.find(name);
  return it == values_.end() ? std::string() : it->second;
}

double Options::number(const std::string& name) const {
  const std::string text = str(name);
  double value = 0;
  if (!io::parse_double(text, value))
    throw usage_error("--" + name + " '" + text + "' is not a finite number");
  return value;
}

long long Options::integer(const std::string& name, long long min_value, long long max_value) const {
  return parse_integer(name, str(name), min_value, max_value);
}

long long parse_integer(const std::string& name, const std::string& text, long long min_value,
                        long long max_value) {
  double value = 0;
  // Every range ends within +-largest_integer, where doubles hold integers exactly.
  if (!io::parse_double(text, value) || value != std::floor(value))
    throw usage_error("--" + name + " '" + text + "' is not an integer");
  if (value < double(min_value))
    throw usage_error("--" + name + " " + text + " is below the minimum " + std::to_string(min_value));
  if (value > double(max_value))
    throw usage_error("--" + name + " " + text + " is above the maximum " + std::to_string(max_value));
  return static_cast<long long>(value);
}

namespace {
// Outputs are written to a temporary beside them and renamed (io::write_atomically, H5Writer):
// creating and removing one now finds a missing or read-only folder before the run, not after.
void require_writable(const FileArgument& out) {
  std::error_code ec;
  if (std::filesystem::is_directory(out.path, ec))
    throw usage_error("--" + out.option + " '" + out.path + "' is a folder, not a file");
  const std::string destination = io::write_destination(out.path);
  if (io::is_special_file(destination)) {  // written in place (/dev/null, a FIFO)
    if (::access(destination.c_str(), W_OK) != 0)
      throw file_error("--" + out.option + " '" + out.path + "' cannot be written: " + std::strerror(errno));
    return;
  }
  const std::string probe = io::temporary_path(destination);
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0)
    throw file_error("--" + out.option + " '" + out.path + "' cannot be written: " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

// Whether two paths name one file: the same inode where both exist, else the same absolute
// path with links resolved as far as the path exists.
bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  const auto canonical = [](const std::string& path) {
    std::error_code e;
    const auto p = fs::weakly_canonical(fs::absolute(path, e), e);
    return e ? fs::absolute(path, e).lexically_normal() : p;
  };
  return canonical(a) == canonical(b);
}
}  // namespace

void check_output_files(const std::vector<FileArgument>& inputs, const std::vector<FileArgument>& outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const FileArgument& out = outputs[i];
    if (out.path.empty()) continue;
    for (const FileArgument& in : inputs)
      if (!in.path.empty() && same_file(out.path, in.path))
        throw usage_error("--" + out.option + " '" + out.path + "' would overwrite the input --" + in.option +
                          " '" + in.path + "'");
    for (std::size_t j = 0; j < i; ++j) {
      const FileArgument& other = outputs[j];
      if (other.path.empty()) continue;
      if (io::is_hdf5_path(out.path) && io::is_hdf5_path(other.path)) {
        // Outputs may share an HDF5 file (one writer per name): under one spelling only.
        if (out.path != other.path && same_file(out.path, other.path))
          throw usage_error("--" + out.option + " '" + out.path + "' and --" + other.option + " '" + other.path +
                            "' are one HDF5 file under two names: spell it the same way for both");
        continue;
      }
      if (same_file(out.path, other.path))
        throw usage_error("--" + out.option + " '" + out.path + "' and --" + other.option + " '" + other.path +
                          "' are one file: each text output needs its own");
    }
  }
  for (const FileArgument& out : outputs)
    if (!out.path.empty()) require_writable(out);
}

bool Options::is_set(const std::string& name) const { return spec(name).is_flag && values_.count(name); }

bool Options::given(const std::string& name) const {
  spec(name);
  return given_.count(name) != 0;
}

void Options::reject_given(std::initializer_list<const char*> names, const std::string& why) const {
  for (const char* name : names)
    if (given(name)) throw usage_error(std::string("--") + name + " " + why);
}

std::string Options::help() const {
  std::ostringstream out;
  out << "usage: kosmos " << command_;
  for (const auto& s : specs_)
    if (s.positional) out << (s.required ? " <" : " [") << s.name << (s.required ? ">" : "]");
  out << " [options]\n\n" << summary_ << "\n\n";
  for (const auto& s : specs_) {
    std::string lhs = s.positional ? "  <" + s.name + ">"
                                   : "  --" + s.name + (s.is_flag ? "" : " " + s.metavar);
    out << lhs;
    out << std::string(lhs.size() < 28 ? 28 - lhs.size() : 1, ' ') << s.help;
    if (!s.default_value.empty()) out << " (default: " << s.default_value << ")";
    else if (!s.optional && !s.positional) out << " (required)";
    out << "\n";
  }
  out << "  --help" << std::string(22, ' ') << "show this help\n";
  return out.str();
}

std::vector<Command>& command_registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace cli
}  // namespace kosmos
