// The wavelengths at which the P(T) emission evaluates its photon occupation sums when
// StochasticOptions::emission_node_spacing > 0, and how the others are interpolated from them.
// S(x) = sum_j P_j n(x / T_j) is a sum of smooth positive functions of x = hc / (lambda k), so
// ln S is smooth in ln lambda; the grid's features (PAH bands, edges) are in the cross sections,
// which multiply S afterwards, exactly, at every wavelength.
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace kosmos {
namespace dust {
namespace Impl {

// Nodes: wavelength indices, ascending, the first and the last among them, each next one the
// farthest wavelength within `spacing` in ln lambda of the previous (or its neighbour, where the
// grid is coarser). A wavelength between nodes takes the cubic through the four nearest nodes in
// ln lambda (three or two where there are no more) applied to ln S; a node takes its own S.
constexpr int emission_stencil_size = 4;

template <class DeviceType>
struct EmissionNodes {
  Kokkos::View<int*, DeviceType> wavelength;  // (N): node k's wavelength index
  Kokkos::View<int*, DeviceType> node_at;     // (L): k where wavelength l is node k, else -1
  Kokkos::View<int*, DeviceType> stencil;     // (L): the first node of l's stencil
  // (L, 4): its Lagrange weights, a stencil node's for neighbouring wavelengths contiguous (read
  // by neighbouring threads)
  Kokkos::View<double**, Kokkos::LayoutLeft, DeviceType> weight;
  KOKKOS_INLINE_FUNCTION int count() const { return int(wavelength.extent(0)); }
};

// The nodes of a grid of photon energies x (any order; a GrainModel's x, descending in l).
template <class DeviceType, class ExecSpace, class X>
EmissionNodes<DeviceType> make_emission_nodes(const ExecSpace& space, const X& x, double spacing) {
  const auto host_x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  const int nl = int(host_x.extent(0));
  std::vector<double> log_x(static_cast<std::size_t>(nl));
  for (int l = 0; l < nl; ++l) log_x[std::size_t(l)] = std::log(double(host_x(l)));
  std::vector<int> nodes;
  for (int l = 0; l < nl;) {
    nodes.push_back(l);
    if (l == nl - 1) break;
    int next = l + 1;
    while (next + 1 < nl &&
           std::fabs(log_x[std::size_t(next + 1)] - log_x[std::size_t(l)]) <= spacing)
      ++next;
    l = next;
  }
  const int n = int(nodes.size()), width = n < emission_stencil_size ? n : emission_stencil_size;
  EmissionNodes<DeviceType> e;
  e.wavelength = decltype(e.wavelength)(
      Kokkos::view_alloc(space, std::string("kosmos::dust::emission_nodes")), n);
  e.node_at = decltype(e.node_at)(
      Kokkos::view_alloc(space, std::string("kosmos::dust::emission_node_at")), nl);
  e.stencil = decltype(e.stencil)(
      Kokkos::view_alloc(space, std::string("kosmos::dust::emission_stencil")), nl);
  e.weight =
      decltype(e.weight)(Kokkos::view_alloc(space, std::string("kosmos::dust::emission_weight")),
                         nl, emission_stencil_size);
  const auto wavelength = Kokkos::create_mirror_view(e.wavelength);
  const auto node_at = Kokkos::create_mirror_view(e.node_at);
  const auto stencil = Kokkos::create_mirror_view(e.stencil);
  const auto weight = Kokkos::create_mirror_view(e.weight);
  Kokkos::deep_copy(weight, 0.0);
  for (int k = 0; k < n; ++k) wavelength(k) = nodes[std::size_t(k)];
  for (int l = 0, k = 0; l < nl; ++l) {
    while (k + 1 < n && nodes[std::size_t(k + 1)] <= l) ++k;  // nodes[k] <= l < nodes[k + 1]
    node_at(l) = nodes[std::size_t(k)] == l ? k : -1;
    // The interval's two nodes and one more on each side, shifted inside [0, n).
    int first = k - 1;
    if (first + width > n) first = n - width;
    if (first < 0) first = 0;
    stencil(l) = first;
    for (int i = 0; i < width; ++i) {
      double w = 1;
      const double t_i = log_x[std::size_t(nodes[std::size_t(first + i)])];
      for (int m = 0; m < width; ++m)
        if (m != i) {
          const double t_m = log_x[std::size_t(nodes[std::size_t(first + m)])];
          w *= (log_x[std::size_t(l)] - t_m) / (t_i - t_m);
        }
      weight(l, i) = w;
    }
  }
  Kokkos::deep_copy(space, e.wavelength, wavelength);
  Kokkos::deep_copy(space, e.node_at, node_at);
  Kokkos::deep_copy(space, e.stencil, stencil);
  Kokkos::deep_copy(space, e.weight, weight);
  space.fence();  // the host mirrors go out of scope
  return e;
}
}  // namespace Impl
}  // namespace dust
}  // namespace kosmos
