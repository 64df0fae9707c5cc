// One-core REBOUND WHFast + MEGNO timing on the initial conditions of bench_stability.cpp (not
// built by Kosmos). With REBOUND's C library (github.com/hannorein/rebound, src/: make), build
//   cc -O3 -I rebound/src rebound_whfast_megno.c -L rebound/src -lrebound -lm -o
//   rebound_whfast_megno
// and write the systems with the benchmark (KOSMOS_BENCH_INITIAL_ENSEMBLE=initial.txt, see
// bench_stability.cpp). Usage: rebound_whfast_megno ENSEMBLE.txt DT T [SYSTEMS]: integrates the
// first SYSTEMS (default all) systems of the kosmos text ensemble one after the other with WHFast
// (Jacobi coordinates, step DT, safe mode as MEGNO needs, no corrector, exact finish time) and
// MEGNO to time T, and prints the seconds taken (building, integrating, reading MEGNO; not the file
// reading), systems per second and the median MEGNO.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "rebound.h"
#include "rebound_ensemble.h"

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s ENSEMBLE.txt DT T [SYSTEMS]\n", argv[0]);
    return 2;
  }
  const double dt = atof(argv[2]), T = atof(argv[3]);
  long systems = 0, bodies = 0;
  double* state = read_kosmos_ensemble(argv[1], argc > 4 ? atol(argv[4]) : 0, &systems, &bodies);
  if (!state) return 1;
  double* megno = malloc(sizeof(double) * systems);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long s = 0; s < systems; ++s) {
    struct reb_simulation* r = reb_simulation_create();
    struct reb_integrator_whfast_state* whfast = reb_simulation_set_integrator(r, "whfast");
    whfast->coordinates = REB_INTEGRATOR_WHFAST_COORDINATES_JACOBI;
    whfast->safe_mode = 1;
    r->dt = dt;
    add_kosmos_system(r, state, bodies, s, 0);
    reb_simulation_init_megno_seed(r, (unsigned int)(s + 1));
    reb_simulation_integrate(r, T);
    megno[s] = reb_simulation_megno(r);
    reb_simulation_free(r);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  const double seconds = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  qsort(megno, systems, sizeof(double), by_value);
  printf(
      "REBOUND WHFast + MEGNO, one core: %ld systems of %ld bodies to T = %g (dt %g): %.3f s, "
      "%.2f systems/s, median MEGNO %.6g\n",
      systems, bodies, T, dt, seconds, systems / seconds, megno[systems / 2]);
  free(state);
  free(megno);
  return 0;
}
