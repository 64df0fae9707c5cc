// Umbrella header of the nbody module: ensembles of few-body systems (Swarm-NG).
#pragma once

#include <kosmos/nbody/analysis.hpp>
#include <kosmos/nbody/checkpoint.hpp>
#include <kosmos/nbody/elements.hpp>
#include <kosmos/nbody/ensemble.hpp>
#include <kosmos/nbody/forces.hpp>
#include <kosmos/nbody/gravity.hpp>
#include <kosmos/nbody/integrate.hpp>
#include <kosmos/nbody/io.hpp>
#include <kosmos/nbody/kepler_drift.hpp>
#include <kosmos/nbody/reference.hpp>
#include <kosmos/nbody/solar_system.hpp>
#include <kosmos/nbody/stability.hpp>
#include <kosmos/nbody/stability_map.hpp>
#include <kosmos/nbody/stability_run.hpp>
