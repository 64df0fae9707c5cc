// A plain C++ (no Kokkos) Hermite integrator for one system, used to verify the Kokkos
// integrators: the same time-symmetric P(EC)^2 scheme, written independently, templated on the
// floating-point type so it can run in long double (or __float128) as a higher-precision reference.
#pragma once

#include <cmath>
#include <vector>

namespace kosmos {
namespace nbody {

template <class T>
struct ReferenceSystem {
  std::vector<T> m;                     // n
  std::vector<T> x, v;                  // 3n each
  T time = 0;
  int n() const { return int(m.size()); }
};

template <class T>
void reference_acc_jerk(const ReferenceSystem<T>& sys, std::vector<T>& a, std::vector<T>& j) {
  using std::sqrt;
  const int n = sys.n();
  a.assign(3 * n, T(0));
  j.assign(3 * n, T(0));
  for (int p = 0; p < n; ++p)
    for (int q = p + 1; q < n; ++q) {
      T d[3], w[3];
      for (int c = 0; c < 3; ++c) {
        d[c] = sys.x[3 * q + c] - sys.x[3 * p + c];
        w[c] = sys.v[3 * q + c] - sys.v[3 * p + c];
      }
      const T r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
      const T r = sqrt(r2);
      const T r3 = r2 * r;
      const T rv = T(3) * (d[0] * w[0] + d[1] * w[1] + d[2] * w[2]) / r2;
      for (int c = 0; c < 3; ++c) {
        const T k = d[c] / r3, kj = (w[c] - rv * d[c]) / r3;
        a[3 * p + c] += sys.m[q] * k;
        a[3 * q + c] -= sys.m[p] * k;
        j[3 * p + c] += sys.m[q] * kj;
        j[3 * q + c] -= sys.m[p] * kj;
      }
    }
}

// Integrates `sys` to `destination` with fixed step dt (the last step shortened to land on it).
// The accelerations are re-evaluated at the start of every step.
template <class T>
void reference_hermite(ReferenceSystem<T>& sys, T destination, T dt) {
  const int n3 = 3 * sys.n();
  std::vector<T> a0, j0, a1, j1, x0, v0;
  while (sys.time < destination) {
    const T h = destination - sys.time < dt ? destination - sys.time : dt;
    reference_acc_jerk(sys, a0, j0);
    x0 = sys.x;
    v0 = sys.v;
    for (int k = 0; k < n3; ++k) {
      sys.x[k] = x0[k] + h * (v0[k] + h * (a0[k] / 2 + h * j0[k] / 6));
      sys.v[k] = v0[k] + h * (a0[k] + h * j0[k] / 2);
    }
    for (int it = 0; it < 2; ++it) {
      reference_acc_jerk(sys, a1, j1);
      for (int k = 0; k < n3; ++k) {
        sys.v[k] = v0[k] + h / 2 * (a0[k] + a1[k]) + h * h / 12 * (j0[k] - j1[k]);
        sys.x[k] = x0[k] + h / 2 * (v0[k] + sys.v[k]) + h * h / 12 * (a0[k] - a1[k]);
      }
    }
    sys.time += h;
  }
}

// Total energy sum m v^2/2 - sum_{i<j} m_i m_j / r_ij.
template <class T>
T reference_energy(const ReferenceSystem<T>& sys) {
  using std::sqrt;
  const int n = sys.n();
  T e = 0;
  for (int p = 0; p < n; ++p)
    e += sys.m[p] * (sys.v[3 * p] * sys.v[3 * p] + sys.v[3 * p + 1] * sys.v[3 * p + 1] +
                     sys.v[3 * p + 2] * sys.v[3 * p + 2]) / 2;
  for (int p = 0; p < n; ++p)
    for (int q = p + 1; q < n; ++q) {
      T r2 = 0;
      for (int c = 0; c < 3; ++c) r2 += (sys.x[3 * q + c] - sys.x[3 * p + c]) * (sys.x[3 * q + c] - sys.x[3 * p + c]);
      e -= sys.m[p] * sys.m[q] / sqrt(r2);
    }
  return e;
}

}  // namespace nbody
}  // namespace kosmos
