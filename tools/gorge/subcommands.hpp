// The gorge command line's subcommands: each registers its options on `app` and returns the
// function that runs it once the command line is parsed.
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace gorge_cli {

using runner = std::function<int()>;

runner add_filter(CLI::App& app);
runner add_fill(CLI::App& app);
runner add_thermal(CLI::App& app);
runner add_droplets(CLI::App& app);

}  // namespace gorge_cli
