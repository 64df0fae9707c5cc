// Reference MEGNO values from REBOUND's IAS15 for the unit tests of test_megno.cpp (not built by
// Kosmos): with REBOUND's C library (github.com/hannorein/rebound, src/: make), build
//   cc -O2 -I rebound/src megno_rebound.c -L rebound/src -lrebound -lm -o megno_rebound
// Usage: megno_rebound CASE [A2 [T [DT [CORRECTOR [OUTPUTS]]]]]  (CASE 0: the regular pair,
// a2 = 1.8; 1: the pair at a2 = A2, default 1.25; T default 2 pi 1000). IAS15 (epsilon 1e-9, first
// step 1e-3) unless DT > 0 is given: then WHFast with step DT, Jacobi coordinates, safe mode (what
// REBOUND's MEGNO needs) and the symplectic corrector of order CORRECTOR (default 0). Prints t,
// MEGNO <Y> and reb_simulation_lyapunov at OUTPUTS (default 10) evenly spaced times.
#include "rebound.h"
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

static void add(struct reb_simulation* r, double m, double x, double y, double z, double vx, double vy, double vz) {
  struct reb_particle p = {0};
  p.m = m; p.x = x; p.y = y; p.z = z; p.vx = vx; p.vy = vy; p.vz = vz;
  reb_simulation_add(r, p);
}

int main(int argc, char** argv) {
  const int which = argc > 1 ? atoi(argv[1]) : 0;
  struct reb_simulation* r = reb_simulation_create();
  const double whfast_dt = argc > 4 ? atof(argv[4]) : 0;
  if (whfast_dt > 0) {
    struct reb_integrator_whfast_state* whfast = reb_simulation_set_integrator(r, "whfast");
    whfast->coordinates = REB_INTEGRATOR_WHFAST_COORDINATES_JACOBI;
    whfast->safe_mode = 1;
    whfast->corrector = argc > 5 ? atoi(argv[5]) : 0;
    r->dt = whfast_dt;
  } else {
    struct reb_integrator_ias15_state* ias15 = reb_simulation_set_integrator(r, "ias15");
    ias15->epsilon = 1e-9;
    r->dt = 1e-3;
  }
  // Initial conditions shared with the unit test (exact decimal values, barycentric).
  double m1 = 1e-3, m2 = 1e-3, a2 = which == 0 ? 1.8 : atof(argc > 2 ? argv[2] : "1.25");
  double v1 = sqrt((1 + m1) / 1.0), v2 = sqrt((1 + m1 + m2) / a2);
  // Planets on the x axis (Jacobi-like speeds), star placed at the barycentre's opposite.
  double px = m1 * 1.0 + m2 * (-a2), pv = m1 * v1 + m2 * (-v2);
  add(r, 1.0, -px, 0, 0, 0, -pv, 0);
  add(r, m1, 1.0 - 0.0, 0, 0.01, 0, v1, 0.001);
  add(r, m2, -a2, 0, -0.02, 0, -v2 * 1.02, 0.002);
  reb_simulation_init_megno(r);
  // The deviation of the test: component k of the 6N vector (x of body 0 first, then v) is
  // (k % 5 - 2) + 0.5 (k % 3), normalized.
  double norm2 = 0;
  const int N = r->N;
  double d[6 * 8];
  for (int k = 0; k < 6 * N; ++k) { d[k] = (k % 5 - 2) + 0.5 * (k % 3); norm2 += d[k] * d[k]; }
  for (int i = 0; i < N; ++i) {
    struct reb_particle* p = &r->particles_var[i];
    p->x = d[3 * i] / sqrt(norm2); p->y = d[3 * i + 1] / sqrt(norm2); p->z = d[3 * i + 2] / sqrt(norm2);
    p->vx = d[3 * N + 3 * i] / sqrt(norm2); p->vy = d[3 * N + 3 * i + 1] / sqrt(norm2); p->vz = d[3 * N + 3 * i + 2] / sqrt(norm2);
  }
  const double T = argc > 3 ? atof(argv[3]) : 2 * M_PI * 1000;
  const int outputs = argc > 6 ? atoi(argv[6]) : 10;
  for (int k = 1; k <= outputs; ++k) {
    reb_simulation_integrate(r, T * k / outputs);
    printf("%.17g %.17g %.17g\n", r->t, reb_simulation_megno(r), reb_simulation_lyapunov(r));
  }
  reb_simulation_free(r);
  return 0;
}
