// Long-double references of the Kepler solver tests.
#pragma once

#include <cmath>

namespace kosmos_test {
using LD = long double;
const LD kTwoPiL = 6.283185307179586476925286766559005768L;

// E in [0, 2pi) with E - e sin E = m, safeguarded Newton in long double.
inline LD solve_reference(LD m, LD e) {
  LD lo = 0, hi = kTwoPiL;  // f(0) = -m <= 0, f(2pi) = 2pi - m > 0; f increasing
  LD E = m + 0.85L * e * (m < kTwoPiL / 2 ? 1 : -1);
  if (E <= lo || E >= hi) E = m;
  for (int it = 0; it < 200; ++it) {
    const LD f = E - e * sinl(E) - m;
    if (f == 0) break;
    if (f > 0)
      hi = E;
    else
      lo = E;
    LD next = E - f / (1 - e * cosl(E));
    if (!(next > lo && next < hi)) next = 0.5L * (lo + hi);
    if (fabsl(next - E) <= 1e-19L * (1 + fabsl(E))) {
      E = next;
      break;
    }
    E = next;
  }
  return E;
}

inline LD angle_distance(LD a, LD b) {
  LD d = fmodl(fabsl(a - b), kTwoPiL);
  return d > kTwoPiL / 2 ? kTwoPiL - d : d;
}

}  // namespace kosmos_test
