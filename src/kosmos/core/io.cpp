#include <kosmos/core/io.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <csignal>
#include <fcntl.h>
#include <unistd.h>

namespace kosmos {
namespace io {

TextReader::TextReader(const std::string& path) : path_(path), in_(path) {
  if (!in_) throw file_error(path + ": cannot open for reading");
}

bool TextReader::next(Record& record) {
  std::string line;
  while (std::getline(in_, line)) {
    ++line_number_;
    // A UTF-8 byte order mark (some editors write one) is not part of the first field.
    if (line_number_ == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    // Split at the whitespace istream's >> skips, without a stream per line (that stream was a
    // third of `kosmos dust`'s set-up, mostly reading its Draine table: 26 -> 18 ms on 2 cores);
    // the record's strings keep their capacity.
    const std::size_t end = std::min(line.find('#'), line.size());
    std::size_t count = 0;
    for (std::size_t i = 0; i < end;) {
      while (i < end && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      const std::size_t first = i;
      while (i < end && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      if (i == first) break;
      if (count == record.fields.size()) record.fields.emplace_back();
      record.fields[count++].assign(line, first, i - first);
    }
    record.fields.resize(count);
    if (count > 0) {
      record.line_number = line_number_;
      return true;
    }
  }
  if (in_.bad()) throw file_error(path_ + ": read error after line " + std::to_string(line_number_));
  return false;
}

void TextReader::fail(std::size_t line_number, const std::string& message) const {
  throw file_error(path_ + ":" + std::to_string(line_number) + ": " + message);
}

double TextReader::number(const Record& record, std::size_t index, const char* what) const {
  if (index >= record.fields.size())
    fail(record.line_number, std::string("missing ") + what + " (field " + std::to_string(index + 1) +
                                 ", the line has " + std::to_string(record.fields.size()) + ")");
  double value = 0;
  if (!parse_double(record.fields[index], value))
    fail(record.line_number, std::string(what) + " '" + record.fields[index] + "' is not a finite number");
  return value;
}

long long TextReader::integer(const Record& record, std::size_t index, const char* what) const {
  const double value = number(record, index, what);
  if (value < 0 || value != std::floor(value) || value > 9.0e15)
    fail(record.line_number, std::string(what) + " '" + record.fields[index] +
                                 "' is not a non-negative integer");
  return static_cast<long long>(value);
}

namespace {
// A decimal number as people write them: [+-] digits [. digits] [e [+-] digits], with digits on at
// least one side of the point. strtod alone also takes hexadecimal floats ("0x1p3") and "infinity".
bool is_decimal_number(const std::string& token) {
  std::size_t i = (token[0] == '+' || token[0] == '-') ? 1 : 0;
  const auto digits = [&] {
    const std::size_t start = i;
    while (i < token.size() && std::isdigit(static_cast<unsigned char>(token[i]))) ++i;
    return i - start;
  };
  std::size_t mantissa = digits();
  if (i < token.size() && token[i] == '.') {
    ++i;
    mantissa += digits();
  }
  if (mantissa == 0) return false;
  if (i < token.size() && (token[i] == 'e' || token[i] == 'E')) {
    ++i;
    if (i < token.size() && (token[i] == '+' || token[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == token.size();
}

bool is_nonfinite_word(const std::string& token) {
  std::string word = token.substr((token[0] == '+' || token[0] == '-') ? 1 : 0);
  for (auto& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return word == "nan" || word == "inf" || word == "infinity";
}
}  // namespace

bool parse_double(const std::string& token, double& value, bool allow_nonfinite) {
  if (token.empty()) return false;
  if (!is_decimal_number(token) && !(allow_nonfinite && is_nonfinite_word(token))) return false;
  errno = 0;
  char* end = nullptr;
  value = std::strtod(token.c_str(), &end);
  if (end != token.c_str() + token.size()) return false;
  if (errno == ERANGE && std::fabs(value) > 1.0) return false;  // overflow; underflow is fine
  return allow_nonfinite || std::isfinite(value);
}

std::string write_destination(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec))) return path;
  const auto target = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : target.string();
}

std::string temporary_path(const std::string& destination) {
  return destination + ".tmp." + std::to_string(::getpid());
}

void remove_stale_temporaries(const std::string& destination) {
  namespace fs = std::filesystem;
  const fs::path target(destination);
  const std::string prefix = target.filename().string() + ".tmp.";
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  for (fs::directory_iterator entry(folder, ec), end; !ec && entry != end; entry.increment(ec)) {
    const std::string name = entry->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid > 0 && pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove(entry->path(), ignored);
    }
  }
}

void commit_temporary(const std::string& temporary, const std::string& destination,
                      const std::string& path) {
  const auto sync = [](const std::string& name, int flags) {
    const int fd = ::open(name.c_str(), flags | O_CLOEXEC);
    const bool ok = fd >= 0 && ::fsync(fd) == 0;
    if (fd >= 0) ::close(fd);
    return ok;
  };
  if (!sync(temporary, O_RDONLY)) {
    const int error = errno;
    std::remove(temporary.c_str());
    throw file_error(path + ": cannot flush the finished temporary file to disk: " + std::strerror(error));
  }
  if (std::rename(temporary.c_str(), destination.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw file_error(path + ": cannot rename the finished temporary file into place");
  }
  // The rename itself is durable once the folder is: a failure here leaves the new file in place.
  const auto folder = std::filesystem::path(destination).parent_path();
  sync(folder.empty() ? "." : folder.string(), O_RDONLY | O_DIRECTORY);
}

bool is_special_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  return !ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
         !std::filesystem::is_directory(status);
}

void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::string target = write_destination(path);
  if (is_special_file(target)) {
    std::ofstream out(target, std::ios::binary);
    if (!out) throw file_error(path + ": cannot open for writing");
    write(out);
    out.flush();
    if (!out) throw file_error(path + ": write failed");
    return;
  }
  remove_stale_temporaries(target);
  const std::string tmp = temporary_path(target);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw file_error(path + ": cannot open '" + tmp + "' for writing");
    write(out);
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw file_error(path + ": write failed (disk full?)");
    }
  }
  commit_temporary(tmp, target, path);
}

AppendLog::AppendLog(const std::string& path) : path_(path), out_(path, std::ios::app) {
  if (!out_) throw file_error(path + ": cannot open log for appending");
}

void AppendLog::write_line(const std::string& line) {
  out_ << line << '\n';
  out_.flush();
  if (!out_) throw file_error(path_ + ": log write failed");
}
}  // namespace io
}  // namespace kosmos
