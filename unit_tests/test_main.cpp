// The one test main: initializes Kokkos around all suites and prints where they run.
#include <kosmos/core/configuration.hpp>

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <iostream>

int main(int argc, char* argv[]) {
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  for (const auto& [key, value] : kosmos::current_configuration().entries())
    std::cout << "[kosmos] " << key << ": " << value << "\n";
  return RUN_ALL_TESTS();
}
