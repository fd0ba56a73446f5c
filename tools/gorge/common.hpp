// Shared parts of the gorge command line: exit codes, option bindings with JSON presets, outputs
// committed all together, and the progress bar.
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <gorge/grid/grid.hpp>
#include <gorge/io/heightmap_io.hpp>

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

/// One parameter that is both a command line option and a key of a JSON preset.
struct binding {
    std::string key;              ///< preset key (the option name without "--", '-' as '_')
    CLI::Option* option;          ///< the command line option
    std::function<nlohmann::json()> get;
    std::function<void(const nlohmann::json&)> set;
    std::function<void()> from_command_line;  ///< copies a given option's parsed value in place
};

/// The parameters of one subcommand, with --preset and --save-preset.
class parameters {
public:
    explicit parameters(CLI::App& app);

    void add_float(const std::string& name, float& value, const std::string& help);
    void add_int(const std::string& name, int& value, const std::string& help);
    void add_unsigned(const std::string& name, unsigned& value, const std::string& help);
    /// An N-component vector given as "a,b,..." on the command line and as an array in JSON.
    void add_floats(const std::string& name, float* values, std::size_t count, const std::string& help);

    /// After parsing: values from --preset for every option not given on the command line, then the
    /// command line's own values. Throws usage_error naming the file or the key.
    void resolve();
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

/// Output file formats chosen by extension.
enum class file_kind { png16, r16, exr };
/// The kind of a heightmap output path; throws usage_error naming the file and the allowed ones.
file_kind output_kind(const std::string& path);

/// How heights become integer codes: --normalise (default) or --range lo,hi [--clamp].
struct mapping_options {
    std::vector<float> range;
    bool clamp = false;
    gorge::io::height_mapping mapping() const;
};
void add_mapping_options(CLI::App& app, mapping_options& options);

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
std::string write_heights(const std::string& path, const std::string& shown_path, gorge::grid_view<const float> heights,
                          const gorge::io::height_mapping& mapping);

/// Writes JSON text to `path` (a staged temporary name); errors name `shown_path`.
void write_json(const std::string& path, const std::string& shown_path, const nlohmann::json& value);

/// Reads a heightmap; io_error and invalid_argument become usage_error naming the file.
gorge::io::heightmap read_input(const std::string& path);

/// A progress bar on stderr, drawn only when enabled (stderr is a terminal, or --progress).
class progress {
public:
    progress(bool enabled, std::string label);
    void update(double fraction);
    void finish();

private:
    bool enabled_;
    std::string label_;
    int shown_ = -1;
};
/// True when the progress bar should be drawn: forced by --progress, else when stderr is a terminal.
bool progress_wanted(bool forced);

/// "--octaves" for an invalid_parameter text "octaves (must be ...)" or "erosion.octaves (...)".
std::string option_of_parameter(const std::string& member_and_rule);

}  // namespace gorge_cli
