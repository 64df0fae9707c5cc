// The outer solar system test problem (Sun + Jupiter, Saturn, Uranus, Neptune) of Hairer,
// Lubich & Wanner, "Geometric Numerical Integration" (2nd ed. 2006), Section I.2.4, pp. 13-14:
// positions (AU) and velocities (AU/day) on 1994-09-05 0h, masses relative to the Sun, whose mass
// includes the inner planets. Converted to the module's units (G = 1, time unit = 1/k days with
// k = 0.01720209895 the Gaussian constant, i.e. a year / 2 pi) and to the barycentric frame.
#pragma once

#include <kosmos/nbody/ensemble.hpp>

#include <cstdint>

namespace kosmos {
namespace nbody {

// n_systems copies; with perturbation > 0, every planet coordinate of copy s > 0 is scaled by
// (1 + perturbation u), u uniform in [-1, 1) from a reproducible hash of (seed, s, coordinate).
inline HostEnsemble outer_solar_system(int n_systems, double perturbation = 0,
                                       unsigned long long seed = 1) {
  constexpr int n = 5;
  const double k = 0.01720209895;
  const double m[n] = {1.00000597682, 0.000954786104043, 0.000285583733151, 0.0000437273164546,
                       0.0000517759138449};
  const double x[n][3] = {{0, 0, 0},
                          {-3.5023653, -3.8169847, -1.5507963},
                          {9.0755314, -3.0458353, -1.6483708},
                          {8.3101420, -16.2901086, -7.2521278},
                          {11.4707666, -25.7294829, -10.8169456}};
  const double v[n][3] = {{0, 0, 0},
                          {0.00565429, -0.00412490, -0.00190589},
                          {0.00168318, 0.00483525, 0.00192462},
                          {0.00354178, 0.00137102, 0.00055029},
                          {0.00288930, 0.00114527, 0.00039677}};
  HostEnsemble ens(n_systems, n);
  for (int s = 0; s < n_systems; ++s) {
    double xs[n][3], vs[n][3], mx[3] = {0, 0, 0}, mv[3] = {0, 0, 0}, M = 0;
    for (int b = 0; b < n; ++b) {
      M += m[b];
      for (int c = 0; c < 3; ++c) {
        double f = 1;
        if (perturbation > 0 && s > 0) {
          std::uint64_t z =
              seed * 0x9E3779B97F4A7C15ULL + std::uint64_t(s) * 0xBF58476D1CE4E5B9ULL + 3 * b + c;
          z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
          z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
          z ^= z >> 31;
          f = 1 + perturbation * (double(z >> 11) * 0x1.0p-52 - 1);
        }
        xs[b][c] = x[b][c] * f;
        vs[b][c] = v[b][c] / k;
        mx[c] += m[b] * xs[b][c];
        mv[c] += m[b] * vs[b][c];
      }
    }
    for (int b = 0; b < n; ++b) {
      ens.m(s, b) = m[b];
      for (int c = 0; c < 3; ++c) {
        ens.x(s, b, c) = xs[b][c] - mx[c] / M;
        ens.v(s, b, c) = vs[b][c] - mv[c] / M;
      }
    }
  }
  return ens;
}

}  // namespace nbody
}  // namespace kosmos
