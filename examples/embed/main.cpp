// A user's own Kokkos program that calls into Kosmos: it sums the alternating harmonic series
// on the default execution space with Kosmos' compensated accumulator and checks it against ln 2.
#include <kosmos/config.hpp>
#include <kosmos/core/compensated.hpp>
#include <kosmos/core/configuration.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  const auto config = kosmos::current_configuration();
  std::printf("embedded Kosmos %s on %s (%s), built for %s with HDF5 %s\n",
              config.kosmos_version.c_str(), config.backend.c_str(), config.device.c_str(),
              KOSMOS_BACKEND_NAME, KOSMOS_HAVE_HDF5 ? "on" : "off");

  // Terms in float, accumulated per chunk with compensation: the sum keeps ~double accuracy.
  const int chunks = 1024, terms_per_chunk = 4096;
  Kokkos::View<double*> partial("partial", chunks);
  Kokkos::parallel_for(
      "embed::alternating_harmonic", chunks, KOKKOS_LAMBDA(const int c) {
        kosmos::CompensatedSum<double> sum;
        for (int k = 0; k < terms_per_chunk; ++k) {
          const long n = long(c) * terms_per_chunk + k + 1;
          sum.add((n % 2 ? 1.0 : -1.0) / double(n));
        }
        partial(c) = sum.value();
      });
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), partial);
  kosmos::CompensatedSum<double> total;
  for (int c = 0; c < chunks; ++c) total.add(host(c));
  const double n = double(chunks) * terms_per_chunk;
  // Alternating series: the truncation error after n terms is about 1/(2n).
  const double error = std::fabs(total.value() - (std::log(2.0) - 0.5 / n));
  std::printf("sum = %.15f, |sum - (ln 2 - 1/2n)| = %.3g\n", total.value(), error);
  return error < 1e-12 ? 0 : 1;
}
