// The gorge command line's subcommands: each registers its options on `app` and returns the
// function that runs it once the command line is parsed.
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include <gorge/simd/tile.hpp>

#include "common.hpp"

namespace gorge_cli {

using runner = std::function<int()>;

/// Registers every erosion_params member, the filter seed and the output height offset (and,
/// with fade_rule, the valley/peak altitudes of the fade target rule) as parameters.
void add_erosion_options(parameters& p, gorge::tile_settings<float>& settings, bool fade_rule);

runner add_filter(CLI::App& app);
runner add_generate(CLI::App& app);
runner add_fill(CLI::App& app);
runner add_thermal(CLI::App& app);
runner add_droplets(CLI::App& app);
runner add_rivers(CLI::App& app);
runner add_biomes(CLI::App& app);

}  // namespace gorge_cli
