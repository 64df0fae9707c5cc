// `kosmos info`: what this build of Kosmos runs on.
#include "options.hpp"

#include <kosmos/core/configuration.hpp>

#include <iostream>

namespace {
int run_info(const std::vector<std::string>& args) {
  kosmos::cli::Options options("info", "Print the Kokkos version, backend, device and thread count.");
  options.flag("json", "print one JSON object instead of a table");
  if (!options.parse(args)) return 0;
  const auto entries = kosmos::current_configuration().entries();
  if (options.is_set("json")) {
    std::cout << "{";
    for (std::size_t i = 0; i < entries.size(); ++i)
      std::cout << (i ? ", " : "") << '"' << entries[i].first << "\": \"" << entries[i].second << '"';
    std::cout << "}\n";
  } else {
    for (const auto& [key, value] : entries)
      std::cout << key << std::string(16 - key.size(), ' ') << value << "\n";
  }
  return 0;
}
const kosmos::cli::CommandRegistration registration{{"info", "Kokkos version, backend, device, threads", &run_info}};
}  // namespace
