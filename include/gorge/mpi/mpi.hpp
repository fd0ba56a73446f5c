// gorge/mpi/mpi.hpp — the optional gorge::mpi component: tiled worlds and depression filling
// across the ranks of an MPI job, and D8 flow directions and accumulation across them (see
// fill.hpp, flow.hpp and tiled_world.hpp). Needs an MPI implementation
// (Debian: libopenmpi-dev); CMake: find_package(gorge COMPONENTS mpi), target gorge::mpi.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include "fill.hpp"
#include "flow.hpp"
#include "tiled_world.hpp"
