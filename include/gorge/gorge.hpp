// gorge/gorge.hpp — everything gorge offers, in one include.
//
// gorge is a header-only C++17 library for eroded terrain: the analytic erosion filter (Rune
// Skovbo Johansen, after Clay John and Felix Westin), the differentiable noise that feeds it, and
// grids for the simulations that later headers add. See README.md for a tour and the credits.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include "config.hpp"
#include "hash.hpp"
#include "noise.hpp"
#include "value_noise.hpp"
#include "simplex.hpp"
#include "fractal.hpp"
#include "field.hpp"
#include "island.hpp"
#include "phacelle.hpp"
#include "erosion_filter.hpp"
#include "demo_pipeline.hpp"
#include "grid.hpp"
#include "droplet.hpp"
#include "depression_fill.hpp"
#include "flow.hpp"
#include "biome.hpp"
