// Evaluate and differentiate the paper's p1 (16 variables, all 1820 products of four) at a
// vector of power series truncated at degree 8, in quad double precision, and check one
// coefficient by hand: with every coefficient series and every z_i equal to the constant 1/3,
// each of the 1820 monomials is (1/3)^5, so p1(z) = 1/3 + 1820 / 243 (a constant series).
#include <kosmos/series/evaluate.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  using namespace kosmos::series;
  constexpr int N = 4;  // quad double
  const int d = 8;
  const Polynomial p = make_p1();
  PolynomialEvaluator<N> eval(p, d);
  std::printf("p1: %lld convolutions in %zu layers, %lld additions in %zu layers\n",
              (long long)eval.plan().num_convolutions(), eval.plan().convolution_layers.size(),
              (long long)eval.plan().num_additions(), eval.plan().addition_layers.size());

  using V3 = Kokkos::View<double***, Kokkos::LayoutLeft>;
  V3 a("a", d + 1, p.monomials.size() + 1, N), z("z", d + 1, p.num_variables, N), grad("grad", d + 1, p.num_variables, N);
  Kokkos::View<double**, Kokkos::LayoutLeft> value("value", d + 1, N);
  const kosmos::MultiDouble<N> third = kosmos::MultiDouble<N>(1.0) / kosmos::MultiDouble<N>(3.0);
  auto ha = Kokkos::create_mirror_view(a);
  auto hz = Kokkos::create_mirror_view(z);
  for (int l = 0; l < N; ++l) {
    for (std::size_t s = 0; s < ha.extent(1); ++s) ha(0, s, l) = third.limb[l];
    for (std::size_t s = 0; s < hz.extent(1); ++s) hz(0, s, l) = third.limb[l];
  }
  Kokkos::deep_copy(a, ha);
  Kokkos::deep_copy(z, hz);
  eval.evaluate(a, z, value, grad);
  auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), value);
  kosmos::MultiDouble<N> v0;
  for (int l = 0; l < N; ++l) v0.limb[l] = hv(0, l);
  const auto exact = third + kosmos::MultiDouble<N>(1820.0) / kosmos::MultiDouble<N>(243.0);
  std::printf("p1(z)_0 = %s\nexpected  %s\n", kosmos::to_string(v0).c_str(), kosmos::to_string(exact).c_str());
  const double rel = std::fabs(kosmos::to_double(v0 - exact)) / kosmos::to_double(exact);
  std::printf("relative difference %.3g\n", rel);
  return rel < 1e-60 ? 0 : 1;
}
