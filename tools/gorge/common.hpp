// Shared parts of the gorge command line: exit codes, option bindings with JSON presets, outputs
// committed all together, and the progress bar.
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <gorge/grid/grid.hpp>
#include <gorge/io/heightmap_io.hpp>
#include <gorge/noise/hash.hpp>

namespace gorge_cli {

/// Exit codes: 0 success, 2 bad usage or input (the message names the option or file), 1 internal.
constexpr int exit_ok = 0;
constexpr int exit_internal = 1;
constexpr int exit_usage = 2;

/// Bad usage or input: printed as "gorge <subcommand>: <message>", exit code 2.
class usage_error : public std::runtime_error {
public:
    explicit usage_error(const std::string& message) : std::runtime_error(message) {}
};

/// Runs f() and returns what it returns; the library's exceptions about a map read from `input`
/// (std::invalid_argument: a cell it cannot take; std::overflow_error: an epsilon fill that would
/// step above the largest float) become usage errors that name the file before the message.
template <class F>
auto naming_input(const std::string& input, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const std::invalid_argument& e) {
        throw usage_error(input + ": " + e.what());
    } catch (const std::overflow_error& e) {
        throw usage_error(input + ": " + e.what());
    }
}

/// One parameter that is both a command line option and a key of a JSON preset.
struct binding {
    std::string key;              ///< preset key (the option name without "--", '-' as '_')
    CLI::Option* option;          ///< the command line option
    std::function<nlohmann::json()> get;
    std::function<void(const nlohmann::json&)> set;
    std::function<void()> from_command_line;  ///< copies a given option's parsed value in place
};

/// "scale" for "--scale", "gully_weight" for "--gully-weight".
std::string key_of(const std::string& name);

/// A JSON value as V; throws std::invalid_argument for a value of the wrong kind.
template <class V>
V json_value(const nlohmann::json& j) {
    if constexpr (std::is_same<V, bool>::value) {
        if (!j.is_boolean()) throw std::invalid_argument("must be true or false");
    } else if constexpr (std::is_integral<V>::value) {
        if (!j.is_number_integer()) throw std::invalid_argument("must be an integer");
        if (std::is_unsigned<V>::value && j.get<long long>() < 0) throw std::invalid_argument("must be >= 0");
    } else if constexpr (std::is_floating_point<V>::value) {
        if (!j.is_number()) throw std::invalid_argument("must be a number");
    } else {
        if (!j.is_string()) throw std::invalid_argument("must be a string");
    }
    return j.get<V>();
}

/// The parameters of one subcommand, with --preset and --save-preset.
class parameters {
public:
    explicit parameters(CLI::App& app);

    /// A scalar option (float, int, unsigned, std::uint64_t, bool or std::string) with its
    /// default shown in --help.
    template <class V>
    CLI::Option* add_value(const std::string& name, V& value, const std::string& help) {
        CLI::Option* opt = app_.add_option("--" + name, value, help)->capture_default_str();
        bindings_.push_back({key_of(name), opt, [&value] { return nlohmann::json(value); },
                             [&value](const nlohmann::json& j) { value = json_value<V>(j); },
                             [opt] { opt->run_callback(); }});
        return opt;
    }
    /// An N-component vector given as "a,b,..." on the command line and as an array in JSON.
    void add_floats(const std::string& name, float* values, std::size_t count, const std::string& help);
    /// Any other option: `b.key` in presets, `b.option` on the command line.
    void add_binding(binding b) { bindings_.push_back(std::move(b)); }

    /// After parsing: `base` (when given: defaults such as a library preset), then the values of
    /// --preset, then the options given on the command line. Throws usage_error naming the file
    /// or the key.
    void resolve(const std::function<void()>& base = {});
    /// The effective parameters as JSON (what --save-preset writes).
    nlohmann::json to_json() const;
    /// The --save-preset path, or empty.
    const std::string& save_path() const { return save_path_; }

private:
    CLI::App& app_;
    std::vector<binding> bindings_;
    std::vector<std::vector<float>> vector_storage_;
    std::string preset_path_, save_path_;
};

/// --hash NAME: the exact hash policy of every noise and filter evaluation of a command (input
/// noise and erosion filter alike). Names: "pcg3d" (gorge::pcg3d_hash, the default), "prime_mix"
/// (gorge::prime_mix_hash), "prime_xor" (gorge::prime_xor_hash); shadertoy_hash is left out (a
/// float hash, not exact across back ends).
constexpr const char* default_hash = "pcg3d";
/// The accepted --hash names, in the order --help lists them, and the same joined by ", " (for
/// messages).
const std::vector<std::string>& hash_names();
const std::string& hash_names_list();
/// Registers --hash as a parameter of `params` (preset key "hash"); a name outside hash_names()
/// is refused on the command line (naming --hash) and in a preset (naming the file and the key).
void add_hash_option(CLI::App& app, parameters& params, std::string& name);
/// Calls `f(Hash{})` with the hash policy named `name` and returns its result: the one run-time
/// dispatch from --hash to the kernels' Hash template argument. Throws usage_error naming --hash
/// and the allowed names for any other name.
template <class F>
decltype(auto) with_hash(const std::string& name, F&& f) {
    if (name == "pcg3d") return f(gorge::pcg3d_hash{});
    if (name == "prime_mix") return f(gorge::prime_mix_hash{});
    if (name == "prime_xor") return f(gorge::prime_xor_hash{});
    throw usage_error("--hash: '" + name + "' (allowed: " + hash_names_list() + ")");
}

/// Output file formats chosen by extension.
enum class file_kind { png16, r16, exr, geotiff };
/// The kind of a heightmap output path; throws usage_error naming the file and the allowed ones.
file_kind output_kind(const std::string& path);

/// How heights become integer codes: --normalise (default) or --range lo,hi [--clamp]. These are
/// parameters too: --save-preset stores them ("range": [] when not given) and --preset reads them.
struct mapping_options {
    std::vector<float> range;  ///< effective: from the preset, or the command line
    bool clamp = false;
    bool normalise = false;
    std::vector<float> parsed_range;  ///< as parsed from the command line
    /// --range, or --normalise, or `fallback` when neither is given.
    gorge::io::height_mapping mapping(
        const gorge::io::height_mapping& fallback = gorge::io::height_mapping::normalise()) const;
};
/// Registers --range, --normalise and --clamp on `app` and as parameters of `params`.
void add_mapping_options(CLI::App& app, parameters& params, mapping_options& options);

/// Input, output and height units shared by the subcommands that work on the grid itself (fill,
/// thermal, droplets): heights = height_offset + height_scale * stored value.
struct grid_io_options {
    std::string input, output, preview;
    float height_scale = 0.0f;  ///< 0: 1 / largest code for integer files (heights 0..1), else 1
    float height_offset = 0.0f;
    mapping_options mapping;
    bool progress = false;
    bool timings = false;
    std::unique_ptr<parameters> params;
};
/// Registers IN, OUT, --preview, the mapping and progress options and --preset/--save-preset, plus the
/// --height-scale and --height-offset parameters.
void add_grid_io(CLI::App& app, grid_io_options& options);
/// What load_grid read: the heights in world units and how to write them back.
struct loaded_grid {
    gorge::grid<float> heights;
    gorge::io::height_mapping default_mapping = gorge::io::height_mapping::normalise();
    /// The input's no-data value in world units (height_offset + height_scale * value; NaN stays
    /// NaN, and NaN is used instead when the converted value is not finite or equals a converted
    /// data cell); empty when the input has none (only GDAL rasters have one).
    std::optional<float> no_data;
    /// Cells of `heights` that hold no_data.
    std::size_t no_data_cells = 0;
    /// The input's north-up geotransform (GDAL rasters), written again to .tif outputs.
    std::optional<gorge::io::geo_placement> placement;
};
/// Reads IN and scales it to world units. Integer files default to writing back with their own
/// range (codes 0..max of the input, clamped); float files to normalising. The no-data value and
/// placement of a GDAL raster are kept.
loaded_grid load_grid(const grid_io_options& options);
/// Writes OUT (and the preset when asked) all or nothing, prints the range used on stdout.
void save_grid(const grid_io_options& options, const loaded_grid& grid, const std::string& summary);

/// Outputs written to temporary names first and renamed into place only when all succeeded, so
/// that a failure leaves every target as it was.
class output_set {
public:
    output_set() = default;
    output_set(const output_set&) = delete;
    output_set& operator=(const output_set&) = delete;
    ~output_set();
    /// A temporary path next to `target`, with the same extension; committed by commit().
    std::string stage(const std::string& target);
    /// Renames every staged file over its target.
    void commit();

private:
    std::vector<std::pair<std::string, std::string>> staged_;  // (temporary, target)
    bool committed_ = false;
};

/// Writes a heightmap by extension; returns a line describing the range used (integer formats).
/// Cells equal to `no_data` (every NaN cell when it is NaN) stay no-data: .tif writes the value
/// as the band's no-data value (and `placement` as the geotransform when given), .exr stores the
/// value itself, and integer formats (.png, .r16) map only the data cells (--normalise: their
/// minimum..maximum) and write code 0 in the no-data cells. Without no-data cells the output is
/// the same as without `no_data`.
std::string write_heights(const std::string& path, const std::string& shown_path, gorge::grid_view<const float> heights,
                          const gorge::io::height_mapping& mapping, const std::optional<float>& no_data = std::nullopt,
                          const std::optional<gorge::io::geo_placement>& placement = std::nullopt);

/// --preview FILE.png: an 8-bit grayscale preview of the heights, normalised.
void add_preview_option(CLI::App& app, std::string& path);
/// --progress: a progress bar on stderr (without it, only when stderr is a terminal).
void add_progress_flag(CLI::App& app, bool& progress);
/// IN, a heightmap in any format the command reads (`more`: what the command adds to that list).
void add_heightmap_input(CLI::App& app, std::string& path, const std::string& more = std::string());
/// OUT, a heightmap in any format write_heights writes (`more`: what the command adds to that).
void add_heightmap_output(CLI::App& app, std::string& path, const std::string& more = std::string());
/// --ridge FILE: the filter's ridge map beside the heights.
void add_ridge_option(CLI::App& app, std::string& path);
/// Fails (usage_error naming the file) unless `path` is empty or a .png file.
void check_preview_path(const std::string& path);
/// Stages the preview (when `path` is set) in `outputs`; returns the line reporting its range, or
/// an empty string. No-data cells are written as 0 and left out of the range, as in write_heights.
std::string write_preview(output_set& outputs, const std::string& path, gorge::grid_view<const float> heights,
                          const std::optional<float>& no_data = std::nullopt);

/// Writes JSON text to `path` (a staged temporary name); errors name `shown_path`.
void write_json(const std::string& path, const std::string& shown_path, const nlohmann::json& value);

/// Cells of `heights` equal to `no_data` (every NaN cell when it is NaN); 0 without a value.
std::size_t count_no_data(gorge::grid_view<const float> heights, const std::optional<float>& no_data);
/// For the computations without no-data support: throws usage_error naming `path`, the number of
/// no-data cells and `what` (the computation) when `cells` > 0.
void refuse_no_data(const std::string& path, std::size_t cells, const std::string& what);

/// Reads a heightmap; io_error and invalid_argument become usage_error naming the file.
gorge::io::heightmap read_input(const std::string& path);

/// A progress bar on stderr, drawn only when enabled (stderr is a terminal, or --progress).
class progress {
public:
    progress(bool enabled, std::string label);
    void update(double fraction);
    void finish();
    /// A callback for the library's progress options: draws the fraction, never cancels.
    std::function<bool(double)> callback() {
        return [this](double fraction) {
            update(fraction);
            return true;
        };
    }

private:
    bool enabled_;
    std::string label_;
    int shown_ = -1;
};

/// One bar over several stages of known relative cost: stage i covers the share weights[i] /
/// sum of weights of the bar, after the stages before it.
class staged_progress {
public:
    staged_progress(progress& bar, std::vector<double> weights);
    /// Starts stage `index` (0-based; reports its start).
    void begin(std::size_t index);
    /// The fraction done within the current stage.
    void update(double fraction);
    std::function<bool(double)> callback() {
        return [this](double fraction) {
            update(fraction);
            return true;
        };
    }

private:
    progress& bar_;
    std::vector<double> starts_;  // cumulative shares; starts_.back() == 1
    std::size_t stage_ = 0;
};
/// True when the progress bar should be drawn: forced by --progress, else when stderr is a terminal.
bool progress_wanted(bool forced);

/// "--octaves" for an invalid_parameter text "octaves (must be ...)" or "erosion.octaves (...)".
std::string option_of_parameter(const std::string& member_and_rule);

}  // namespace gorge_cli
