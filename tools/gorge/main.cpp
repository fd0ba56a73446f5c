// gorge — command line front end of the gorge library: subcommands over heightmap files.
// Exit codes: 0 success; 2 bad usage or input (the message names the option or the file and
// what is allowed); 1 internal error. Nothing is written when a run fails.
// SPDX-License-Identifier: MPL-2.0
#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "subcommands.hpp"

int main(int argc, char** argv) {
    using namespace gorge_cli;
    CLI::App app("gorge: eroded terrain from heightmap files (analytic erosion filter and more)", "gorge");
    app.set_version_flag("--version", std::string("gorge ") + GORGE_VERSION_STRING);
    app.require_subcommand(1);

    std::vector<std::pair<CLI::App*, runner>> commands;
    {
        CLI::App* sub = app.add_subcommand("filter", "The analytic erosion filter on an existing heightmap");
        commands.emplace_back(sub, add_filter(*sub));
        sub = app.add_subcommand("generate", "A terrain tile from noise, eroded (demo or island recipe), seamless across tiles");
        commands.emplace_back(sub, add_generate(*sub));
        sub = app.add_subcommand("fill", "Fill depressions so that every cell drains off the map");
        commands.emplace_back(sub, add_fill(*sub));
        sub = app.add_subcommand("biomes", "A biome map (RGBA PNG) from heights, moisture and slope");
        commands.emplace_back(sub, add_biomes(*sub));
        sub = app.add_subcommand("rivers", "D8 flow directions, flow accumulation and a river mask (PNG)");
        commands.emplace_back(sub, add_rivers(*sub));
        sub = app.add_subcommand("thermal", "Thermal (talus) erosion");
        commands.emplace_back(sub, add_thermal(*sub));
        sub = app.add_subcommand("droplets", "Hydraulic droplet erosion");
        commands.emplace_back(sub, add_droplets(*sub));
    }

    if (argc > 1 && argv[1][0] != '-' &&
        std::none_of(commands.begin(), commands.end(), [&](const auto& c) { return c.first->get_name() == argv[1]; })) {
        std::string known;
        for (const auto& c : commands) known += (known.empty() ? "" : ", ") + c.first->get_name();
        std::fprintf(stderr, "gorge: unknown subcommand '%s' (allowed: %s; see gorge --help)\n", argv[1], known.c_str());
        return exit_usage;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? exit_ok : exit_usage;
    }

    std::string name = "gorge";
    try {
        for (auto& c : commands)
            if (c.first->parsed()) {
                name = "gorge " + c.first->get_name();
                return c.second();
            }
        std::fprintf(stderr, "gorge: no subcommand given (see gorge --help)\n");
        return exit_usage;
    } catch (const usage_error& e) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
        return exit_usage;
    } catch (const gorge::io::io_error& e) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
        return exit_usage;
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
        return exit_usage;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "%s: out of memory\n", name.c_str());
        return exit_internal;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: internal error: %s\n", name.c_str(), e.what());
        return exit_internal;
    }
}
