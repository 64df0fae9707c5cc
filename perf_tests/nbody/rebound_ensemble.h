// Reads a kosmos nbody text ensemble for the REBOUND reference programs of this folder (not built
// by Kosmos): per system and body m x y z vx vy vz, into state[7 (bodies s + b) + k]; adds a
// system's bodies to a REBOUND simulation. Include after rebound.h.
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The first `limit` systems (0: all) of `path`; systems and bodies set; NULL after a message.
static double* read_kosmos_ensemble(const char* path, long limit, long* systems, long* bodies) {
  FILE* in = fopen(path, "r");
  if (!in) {
    fprintf(stderr, "%s: cannot open\n", path);
    return NULL;
  }
  char line[4096];
  long attributes = -1;
  *systems = *bodies = -1;
  while (fgets(line, sizeof line, in))
    if (sscanf(line, "systems %ld bodies %ld attributes %ld", systems, bodies, &attributes) == 3)
      break;
  if (*systems < 1 || *bodies < 2) {
    fprintf(stderr, "%s: not a kosmos nbody text ensemble\n", path);
    fclose(in);
    return NULL;
  }
  if (limit > 0 && limit < *systems) *systems = limit;
  double* state = malloc(sizeof(double) * 7 * (*bodies) * (*systems));
  for (long s = 0; s < *systems; ++s) {
    if (!fgets(line, sizeof line, in) || strncmp(line, "system ", 7) != 0) {
      fprintf(stderr, "%s: system %ld: expected its header line\n", path, s);
      free(state);
      fclose(in);
      return NULL;
    }
    for (long b = 0; b < *bodies; ++b) {
      double* p = state + 7 * ((*bodies) * s + b);
      if (!fgets(line, sizeof line, in) || sscanf(line, "%lf %lf %lf %lf %lf %lf %lf", p, p + 1,
                                                  p + 2, p + 3, p + 4, p + 5, p + 6) != 7) {
        fprintf(stderr, "%s: system %ld body %ld: expected m x y z vx vy vz\n", path, s, b);
        free(state);
        fclose(in);
        return NULL;
      }
    }
  }
  fclose(in);
  return state;
}

// Adds the bodies of system s (of `bodies` bodies in state) to r, each of collision radius `radius`.
static void add_kosmos_system(struct reb_simulation* r, const double* state, long bodies, long s,
                              double radius) {
  for (long b = 0; b < bodies; ++b) {
    const double* p = state + 7 * (bodies * s + b);
    struct reb_particle q = {0};
    q.m = p[0];
    q.r = radius;
    q.x = p[1];
    q.y = p[2];
    q.z = p[3];
    q.vx = p[4];
    q.vy = p[5];
    q.vz = p[6];
    reb_simulation_add(r, q);
  }
}
