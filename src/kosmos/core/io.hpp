// Plain-text I/O shared by the modules: a line reader whose errors name file and line, strict
// number parsing, and writes that never leave a half-written file behind.
#pragma once

#include <kosmos/core/error.hpp>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace kosmos {
namespace io {

// One non-empty, non-comment line split into whitespace-separated fields.
struct Record {
  std::size_t line_number = 0;
  std::vector<std::string> fields;
};

// Reads whitespace-separated records; '#' starts a comment. Errors name the file and line.
class TextReader {
 public:
  explicit TextReader(const std::string& path);
  // Next record into `record`; false at end of file.
  bool next(Record& record);
  // Throws file_error "<path>:<line>: <message>".
  [[noreturn]] void fail(std::size_t line_number, const std::string& message) const;
  // Field `index` of `record` parsed as a finite double; `what` names it in errors.
  double number(const Record& record, std::size_t index, const char* what) const;
  // Field `index` parsed as a non-negative integer.
  long long integer(const Record& record, std::size_t index, const char* what) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::ifstream in_;
  std::size_t line_number_ = 0;
};

// Strict double parsing, the one number parser of every text reader: the whole token must be a
// decimal number ("1e3", "-0.5", ".5", "2."); hexadecimal floats ("0x1p3") are refused, and "nan",
// "inf", "infinity" (any case, signed) unless allow_nonfinite. Returns false on failure.
bool parse_double(const std::string& token, double& value, bool allow_nonfinite = false);

// Where a file written to `path` goes: a symbolic link's target (so the link stays a link), else
// `path` itself.
std::string write_destination(const std::string& path);
// The temporary a file bound for `destination` is written to before it is renamed there: beside
// it, named after this process.
std::string temporary_path(const std::string& destination);
// Removes the temporaries of `destination` (NAME.tmp.PID beside it) whose process no longer runs on
// this machine: what a killed run left behind. Live processes' temporaries stay.
void remove_stale_temporaries(const std::string& destination);
// Makes a finished temporary the file at `destination` durably: its data flushed to disk, renamed
// over `destination`, the folder flushed. Errors (naming `path`) remove the temporary.
void commit_temporary(const std::string& temporary, const std::string& destination,
                      const std::string& path);
// True for an existing file that is neither regular nor a folder (/dev/null, a FIFO): written in
// place, never replaced by a renamed temporary.
bool is_special_file(const std::string& path);

// Writes a file through `write` into a temporary beside `path` (a link's target), then renames it
// over that: readers see the old file or the complete new one, never a torn write. A special
// file (/dev/stdout, a FIFO) is written in place.
void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

// Appends to `path` and flushes; used for logs that must survive an interrupted run.
class AppendLog {
 public:
  explicit AppendLog(const std::string& path);
  void write_line(const std::string& line);

 private:
  std::string path_;
  std::ofstream out_;
};
}  // namespace io
}  // namespace kosmos
