// REBOUND MERCURIUS on a scattering ensemble, one core, for the statistical comparison with
// `kosmos nbody --integrator mercurius` (not built by Kosmos). With REBOUND's C library
// (github.com/hannorein/rebound, src/: make), build
//   cc -O3 -I rebound/src rebound_mercurius_scattering.c -L rebound/src -lrebound -lm -o
//   rebound_mercurius_scattering
// Usage: rebound_mercurius_scattering ENSEMBLE.txt DT T RADIUS EJECTION [SYSTEMS]: integrates
// each system of the kosmos text ensemble with MERCURIUS (its defaults: r_crit_hill 3, Chambers'
// changeover, safe mode, IAS15 through encounters) at step DT to time T, every body of collision
// radius RADIUS (direct search, the run halts at the first collision), and stops a system when a
// planet is farther than EJECTION from body 0 on an unbound heliocentric orbit (the
// `--ejection` rule of kosmos nbody, checked after every step). Prints per system its outcome
// (survived, collision, ejection), its time and |dE/E| there, then the fractions, the |dE/E|
// quantiles, the seconds (integration only) and the steps per second.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "rebound.h"
#include "rebound_ensemble.h"

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static int ejected(const struct reb_simulation* r, double distance) {
  const struct reb_particle* p = r->particles;
  for (size_t i = 1; i < r->N; ++i) {
    const double dx = p[i].x - p[0].x, dy = p[i].y - p[0].y, dz = p[i].z - p[0].z;
    const double dvx = p[i].vx - p[0].vx, dvy = p[i].vy - p[0].vy, dvz = p[i].vz - p[0].vz;
    const double d = sqrt(dx * dx + dy * dy + dz * dz);
    const double energy = 0.5 * (dvx * dvx + dvy * dvy + dvz * dvz) - r->G * (p[0].m + p[i].m) / d;
    if (d > distance && energy >= 0) return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s ENSEMBLE.txt DT T RADIUS EJECTION [SYSTEMS]\n", argv[0]);
    return 2;
  }
  const double dt = atof(argv[2]), T = atof(argv[3]), radius = atof(argv[4]),
               ejection = atof(argv[5]);
  long systems = 0, bodies = 0;
  double* state = read_kosmos_ensemble(argv[1], argc > 6 ? atol(argv[6]) : 0, &systems, &bodies);
  if (!state) return 1;
  double* error = malloc(sizeof(double) * systems);
  long counts[3] = {0, 0, 0}, steps = 0;
  const char* names[3] = {"survived", "collision", "ejection"};
  const long n_steps = lround(T / dt);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long s = 0; s < systems; ++s) {
    struct reb_simulation* r = reb_simulation_create();
    reb_simulation_set_integrator(r, "mercurius");
    r->dt = dt;
    r->collision = REB_COLLISION_DIRECT;
    r->collision_resolve = reb_collision_resolve_halt;
    add_kosmos_system(r, state, bodies, s, radius);
    const double e0 = reb_simulation_energy(r);
    int outcome = 0;
    for (long k = 0; k < n_steps && outcome == 0; ++k) {
      reb_simulation_steps(r, 1);
      ++steps;
      if (r->status == REB_STATUS_COLLISION)
        outcome = 1;
      else if (ejected(r, ejection))
        outcome = 2;
    }
    error[s] = fabs((reb_simulation_energy(r) - e0) / e0);
    ++counts[outcome];
    printf("%ld %s %.10g %.3e\n", s, names[outcome], r->t, error[s]);
    reb_simulation_free(r);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  const double seconds = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  qsort(error, systems, sizeof(double), by_value);
  printf(
      "REBOUND MERCURIUS, one core: %ld systems of %ld bodies to T = %g (dt %g): survived %.4f, "
      "collision %.4f, ejection %.4f; |dE/E| median %.3g, 90%% %.3g, max %.3g; %.3f s, %.4g "
      "steps/s\n",
      systems, bodies, T, dt, (double)counts[0] / systems, (double)counts[1] / systems,
      (double)counts[2] / systems, error[systems / 2], error[(long)(0.9 * (systems - 1))],
      error[systems - 1], seconds, steps / seconds);
  free(state);
  free(error);
  return 0;
}
