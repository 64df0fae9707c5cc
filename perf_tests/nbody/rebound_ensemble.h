// Reads a kosmos nbody text ensemble for the REBOUND reference programs of this folder (not built
// by Kosmos): per system and body m x y z vx vy vz, into state[7 (bodies s + b) + k].
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
