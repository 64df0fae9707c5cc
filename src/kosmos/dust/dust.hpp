// Kosmos dust module: equilibrium grain temperatures and emission SEDs (Jonsson & Primack 2010).
#pragma once

#include <kosmos/dust/dust_models.hpp>
#include <kosmos/dust/dustem.hpp>
#include <kosmos/dust/equilibrium.hpp>
#include <kosmos/dust/fields.hpp>
#include <kosmos/dust/grain_inputs.hpp>
#include <kosmos/dust/grains.hpp>
#include <kosmos/dust/photometry.hpp>
#include <kosmos/dust/planck.hpp>
#include <kosmos/dust/size_distribution.hpp>
#include <kosmos/dust/stochastic.hpp>
