// Errors Kosmos throws for bad input: each message names the offending value and where it is.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace kosmos {

// Thrown for invalid arguments and data; what() names the function, the argument and the value.
class invalid_input : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Thrown for malformed or unreadable files; what() names the file and line.
class file_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace Impl {
template <class... Parts>
std::string concat(Parts&&... parts) {
  std::ostringstream out;
  out.precision(17);
  (out << ... << std::forward<Parts>(parts));
  return out.str();
}

// Throws invalid_input("<where>: <message parts...>") unless condition holds.
template <class... Parts>
void require(bool condition, const char* where, Parts&&... parts) {
  if (!condition) throw invalid_input(concat(where, ": ", std::forward<Parts>(parts)...));
}
}  // namespace Impl
}  // namespace kosmos
