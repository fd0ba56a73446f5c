// gorge/gorge.hpp — everything gorge offers, in one include.
//
// gorge is a header-only C++17 library for eroded terrain: the analytic erosion filter (Rune
// Skovbo Johansen, after Clay John and Felix Westin), the differentiable noise that feeds it, and
// grids for the simulations that later headers add. See README.md for a tour and the credits.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include "config.hpp"
#include "thread_pool.hpp"
#include "noise/hash.hpp"
#include "noise/gradient_noise.hpp"
#include "noise/value_noise.hpp"
#include "noise/simplex.hpp"
#include "noise/perlin_noise.hpp"
#include "noise/fractal.hpp"
#include "noise/field.hpp"
#include "noise/island.hpp"
#include "filter/phacelle.hpp"
#include "filter/erosion_filter.hpp"
#include "filter/demo_pipeline.hpp"
#include "grid/grid.hpp"
#include "grid/no_data.hpp"
#include "grid/grid_field.hpp"
#include "erosion/droplet_params.hpp"
#include "erosion/droplet.hpp"
#include "erosion/thermal.hpp"
#include "erosion/landscape_evolution.hpp"
#include "drainage/d8.hpp"
#include "drainage/depression_fill.hpp"
#include "drainage/flow.hpp"
#include "biome/biome.hpp"
