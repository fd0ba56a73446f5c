// SPDX-License-Identifier: MPL-2.0
#include "common.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include <unistd.h>

#include <gorge/grid/no_data.hpp>

namespace gorge_cli {

std::string key_of(const std::string& name) {
    std::string key = name;
    std::replace(key.begin(), key.end(), '-', '_');
    return key;
}

namespace {

std::string lower_extension(const std::string& path) {
    const std::size_t slash = path.find_last_of("/\\");
    const std::size_t dot = path.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return std::string();
    std::string ext = path.substr(dot);
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return ext;
}

std::atomic<unsigned> temp_counter{0};

/// The heights an integer writer gets when some cells are no-data: each no-data cell replaced by
/// the height that becomes code 0 (the mapping's lo; when it normalises, the minimum of the data
/// cells, or 0 when no cell has data), so that the range is that of the data cells and the
/// no-data cells are written as code 0.
gorge::grid<float> no_data_as_code_zero(gorge::grid_view<const float> heights, const std::optional<float>& no_data,
                                        const gorge::io::height_mapping& mapping) {
    float code_zero = 0.0f;
    if (mapping.normalises()) {
        bool any = false;
        for (std::ptrdiff_t y = 0; y < heights.height(); ++y) {
            const float* r = heights.row(y);
            for (std::ptrdiff_t x = 0; x < heights.width(); ++x)
                if (!gorge::detail::is_no_data(r[x], no_data) && (!any || r[x] < code_zero)) {
                    code_zero = r[x];
                    any = true;
                }
        }
    } else {
        code_zero = mapping.range().lo;
    }
    gorge::grid<float> out(heights.width(), heights.height());
    for (std::ptrdiff_t y = 0; y < heights.height(); ++y) {
        const float* r = heights.row(y);
        float* o = out.view().row(y);
        for (std::ptrdiff_t x = 0; x < heights.width(); ++x)
            o[x] = gorge::detail::is_no_data(r[x], no_data) ? code_zero : r[x];
    }
    return out;
}

}  // namespace

std::size_t count_no_data(gorge::grid_view<const float> heights, const std::optional<float>& no_data) {
    if (!no_data) return 0;
    std::size_t n = 0;
    for (std::ptrdiff_t y = 0; y < heights.height(); ++y) {
        const float* r = heights.row(y);
        for (std::ptrdiff_t x = 0; x < heights.width(); ++x) n += gorge::detail::is_no_data(r[x], no_data) ? 1 : 0;
    }
    return n;
}

void refuse_no_data(const std::string& path, std::size_t cells, const std::string& what) {
    if (cells == 0) return;
    throw usage_error(path + ": " + std::to_string(cells) + " no-data cells; " + what +
                      " does not support no-data (it would treat them as terrain): fill them or crop them away first");
}

parameters::parameters(CLI::App& app) : app_(app) {
    // Room for every vector option, so that the references CLI11 keeps stay valid.
    vector_storage_.reserve(32);
    app.add_option("--preset", preset_path_,
                   "Load parameters from a JSON preset (keys as the long options, '-' written '_'); options "
                   "given on the command line win");
    app.add_option("--save-preset", save_path_,
                   "Write the effective parameters as a JSON preset (after a successful run)");
}

void parameters::add_floats(const std::string& name, float* values, std::size_t count, const std::string& help) {
    vector_storage_.emplace_back(values, values + count);
    std::vector<float>& parsed = vector_storage_.back();
    std::string defaults;
    for (std::size_t i = 0; i < count; ++i) {
        std::ostringstream s;
        s << values[i];
        defaults += (i ? "," : "") + s.str();
    }
    CLI::Option* opt = app_.add_option("--" + name, parsed, help + " (" + std::to_string(count) + " values a,b,...)")
                           ->delimiter(',')
                           ->expected(static_cast<int>(count))
                           ->default_str(defaults);
    const std::string option = "--" + name;
    bindings_.push_back(
        {key_of(name), opt,
         [values, count] { return nlohmann::json(std::vector<float>(values, values + count)); },
         [values, count](const nlohmann::json& j) {
             const std::vector<float> v = j.get<std::vector<float>>();
             if (v.size() != count)
                 throw std::invalid_argument("needs " + std::to_string(count) + " numbers, got " +
                                             std::to_string(v.size()));
             std::copy(v.begin(), v.end(), values);
         },
         [values, count, &parsed, option, opt] {
             opt->run_callback();
             if (parsed.size() != count)
                 throw usage_error(option + ": needs " + std::to_string(count) + " comma-separated numbers, got " +
                                   std::to_string(parsed.size()));
             std::copy(parsed.begin(), parsed.end(), values);
         }});
}

void parameters::resolve(const std::function<void()>& base) {
    if (base) base();
    if (!preset_path_.empty()) {
        std::ifstream in(preset_path_, std::ios::binary);
        if (!in) throw usage_error(preset_path_ + ": cannot open the preset");
        nlohmann::json preset;
        try {
            preset = nlohmann::json::parse(in);
        } catch (const nlohmann::json::exception& e) {
            throw usage_error(preset_path_ + ": not a valid JSON preset (" + e.what() + ")");
        }
        if (!preset.is_object()) throw usage_error(preset_path_ + ": a preset must be a JSON object");
        for (auto it = preset.begin(); it != preset.end(); ++it) {
            const auto b = std::find_if(bindings_.begin(), bindings_.end(),
                                        [&](const binding& x) { return x.key == it.key(); });
            if (b == bindings_.end()) {
                std::string known;
                for (const binding& x : bindings_) known += (known.empty() ? "" : ", ") + x.key;
                throw usage_error(preset_path_ + ": unknown key '" + it.key() + "' (allowed: " + known + ")");
            }
            try {
                b->set(it.value());
            } catch (const std::exception& e) {  // wrong kind of value (nlohmann type_error or ours)
                throw usage_error(preset_path_ + ": key '" + it.key() + "': " + e.what());
            }
        }
    }
    // The command line wins over the base and the preset.
    for (binding& b : bindings_)
        if (b.option->count() > 0) b.from_command_line();
}

nlohmann::json parameters::to_json() const {
    nlohmann::json j = nlohmann::json::object();
    for (const binding& b : bindings_) j[b.key] = b.get();
    return j;
}

file_kind output_kind(const std::string& path) {
    const std::string ext = lower_extension(path);
    if (ext == ".png") return file_kind::png16;
    if (ext == ".r16" || ext == ".raw") return file_kind::r16;
    if (ext == ".exr") return file_kind::exr;
    if (ext == ".tif" || ext == ".tiff") {
        if (!gorge::io::has_gdal())
            throw usage_error(path + ": GeoTIFF output needs a gorge built with GDAL (Debian: libgdal-dev)");
        return file_kind::geotiff;
    }
    throw usage_error(path + ": unknown output format '" + ext +
                      "' (allowed: .png 16-bit, .r16 or .raw, .exr float32, .tif/.tiff float32 GeoTIFF)");
}

gorge::io::height_mapping mapping_options::mapping(const gorge::io::height_mapping& fallback) const {
    if (clamp && (normalise || range.empty())) throw usage_error("--clamp: only with --range");
    if (normalise) return gorge::io::height_mapping::normalise();
    if (range.empty()) return fallback;
    if (range.size() != 2) throw usage_error("--range: needs two numbers lo,hi");
    try {
        return gorge::io::height_mapping::absolute(
            range[0], range[1], clamp ? gorge::io::out_of_range::clamp : gorge::io::out_of_range::reject);
    } catch (const std::invalid_argument& e) {
        throw usage_error(std::string("--range: ") + e.what());
    }
}

void add_mapping_options(CLI::App& app, parameters& params, mapping_options& o) {
    // Parsed into parsed_range and plain flags; the effective values are set by parameters::resolve
    // (base, preset, then what the command line gave), so that presets store and restore them.
    CLI::Option* range = app.add_option("--range", o.parsed_range,
                                        "Integer outputs (PNG, .r16): heights lo..hi map to codes 0..max (lo < hi); the "
                                        "range used is printed on stdout")
                             ->delimiter(',')
                             ->expected(2);
    CLI::Option* normalise =
        app.add_flag("--normalise", "Integer outputs: map the data's minimum..maximum to codes 0..max (the default of filter)")
            ->excludes(range);
    CLI::Option* clamp = app.add_flag("--clamp", "With --range: clamp heights outside lo..hi instead of failing");
    params.add_binding(
        {"range", range, [&o] { return o.range.empty() ? nlohmann::json::array() : nlohmann::json(o.range); },
         [&o](const nlohmann::json& j) {
             const std::vector<float> v = j.get<std::vector<float>>();
             if (!v.empty() && v.size() != 2) throw std::invalid_argument("needs [] or two numbers [lo, hi]");
             o.range = v;
         },
         [&o] {
             if (o.parsed_range.size() != 2) throw usage_error("--range: needs two numbers lo,hi");
             o.range = o.parsed_range;
             o.normalise = false;
         }});
    params.add_binding({"normalise", normalise, [&o] { return nlohmann::json(o.normalise); },
                        [&o](const nlohmann::json& j) { o.normalise = json_value<bool>(j); },
                        [&o] {
                            o.normalise = true;
                            o.range.clear();
                            o.clamp = false;
                        }});
    params.add_binding({"clamp", clamp, [&o] { return nlohmann::json(o.clamp); },
                        [&o](const nlohmann::json& j) { o.clamp = json_value<bool>(j); }, [&o] { o.clamp = true; }});
}

const std::vector<std::string>& hash_names() {
    static const std::vector<std::string> names{"pcg3d", "prime_mix", "prime_xor"};
    return names;
}

const std::string& hash_names_list() {
    static const std::string list = [] {
        std::string joined;
        for (const std::string& n : hash_names()) joined += (joined.empty() ? "" : ", ") + n;
        return joined;
    }();
    return list;
}

void add_hash_option(CLI::App& app, parameters& params, std::string& name) {
    const std::string& allowed = hash_names_list();
    CLI::Option* opt =
        app.add_option("--hash", name,
                       "Hash policy of the noise and the filter (" + allowed +
                           "): pcg3d gives the reference values, prime_mix and prime_xor are faster (prime_xor the "
                           "fastest); each is exact on the CPU and in every shader port, and each gives its own terrain")
            ->capture_default_str()
            ->check(CLI::IsMember(hash_names()));
    params.add_binding({"hash", opt, [&name] { return nlohmann::json(name); },
                        [&name, allowed](const nlohmann::json& j) {
                            const std::string v = json_value<std::string>(j);
                            const std::vector<std::string>& names = hash_names();
                            if (std::find(names.begin(), names.end(), v) == names.end())
                                throw std::invalid_argument("'" + v + "' (allowed: " + allowed + ")");
                            name = v;
                        },
                        [opt] { opt->run_callback(); }});
}

void add_preview_option(CLI::App& app, std::string& path) {
    app.add_option("--preview", path,
                   "Also write an 8-bit grayscale PNG preview of the heights, normalised (the range used is printed)");
}

void add_progress_flag(CLI::App& app, bool& progress) {
    app.add_flag("--progress", progress, "Draw a progress bar on stderr (default: only when stderr is a terminal)");
}

void add_heightmap_input(CLI::App& app, std::string& path, const std::string& more) {
    app.add_option("IN", path, "Input heightmap (.png 8/16-bit, .r16/.raw, .exr, GDAL rasters" + more + ")")->required();
}

void add_heightmap_output(CLI::App& app, std::string& path, const std::string& more) {
    app.add_option("OUT", path, "Output heightmap: .png (16-bit), .r16/.raw, .exr (float32), .tif/.tiff (float32 GeoTIFF)" + more)
        ->required();
}

void add_ridge_option(CLI::App& app, std::string& path) {
    app.add_option("--ridge", path, "Also write the ridge map (-1 creases .. +1 ridges; integer formats map -1..1)");
}

void check_preview_path(const std::string& path) {
    if (!path.empty() && output_kind(path) != file_kind::png16)
        throw usage_error("--preview: " + path + " must be a .png file");
}

std::string write_preview(output_set& outputs, const std::string& path, gorge::grid_view<const float> heights,
                          const std::optional<float>& no_data) {
    if (path.empty()) return std::string();
    try {
        const gorge::io::height_mapping mapping = gorge::io::height_mapping::normalise();
        const std::size_t holes = count_no_data(heights, no_data);
        const gorge::io::height_range used =
            holes == 0 ? gorge::io::write_png8(outputs.stage(path), heights, mapping)
                       : gorge::io::write_png8(outputs.stage(path), no_data_as_code_zero(heights, no_data, mapping).view(),
                                               mapping);
        std::ostringstream s;
        s.precision(9);
        s << path << ": 8-bit preview, codes 0..255 = heights " << used.lo << " .. " << used.hi;
        if (holes != 0) s << " (data cells); " << holes << " no-data cells written as code 0";
        return s.str();
    } catch (const gorge::io::io_error& e) {
        throw usage_error(path + ": " + e.what());
    } catch (const std::invalid_argument& e) {
        throw usage_error(path + ": " + e.what());
    }
}

output_set::~output_set() {
    if (committed_) return;
    for (const auto& s : staged_) std::remove(s.first.c_str());
}

std::string output_set::stage(const std::string& target) {
    const std::size_t slash = target.find_last_of('/');
    const std::string dir = slash == std::string::npos ? std::string() : target.substr(0, slash + 1);
    const std::string name = slash == std::string::npos ? target : target.substr(slash + 1);
    const std::string temp = dir + ".gorge-" + std::to_string(static_cast<long>(::getpid())) + "-" +
                             std::to_string(temp_counter++) + "-" + name;
    staged_.emplace_back(temp, target);
    return temp;
}

void output_set::commit() {
    for (const auto& s : staged_)
        if (std::rename(s.first.c_str(), s.second.c_str()) != 0)
            throw usage_error(s.second + ": cannot write (rename from its temporary file failed)");
    committed_ = true;
}

std::string write_heights(const std::string& path, const std::string& shown_path, gorge::grid_view<const float> heights,
                          const gorge::io::height_mapping& mapping, const std::optional<float>& no_data,
                          const std::optional<gorge::io::geo_placement>& placement) {
    try {
        const std::size_t holes = count_no_data(heights, no_data);
        std::ostringstream s;
        s.precision(9);
        gorge::io::height_range used{};
        switch (output_kind(shown_path)) {
            case file_kind::png16:
            case file_kind::r16: {
                const bool png = output_kind(shown_path) == file_kind::png16;
                gorge::grid<float> filled;
                if (holes != 0) filled = no_data_as_code_zero(heights, no_data, mapping);
                const gorge::grid_view<const float> written = holes != 0 ? filled.view() : heights;
                used = png ? gorge::io::write_png16(path, written, mapping) : gorge::io::write_r16(path, written, mapping);
                break;
            }
            case file_kind::exr:
                gorge::io::write_exr(path, heights, no_data);
                s << shown_path << ": float32 heights";
                if (holes != 0) s << "; " << holes << " no-data cells stored as " << *no_data;
                return s.str();
            case file_kind::geotiff: {
                gorge::io::geotiff_options options;
                options.no_data = no_data;
                options.placement = placement;
                gorge::io::write_geotiff(path, heights, options);
                s << shown_path << ": float32 GeoTIFF heights";
                if (no_data) s << "; no-data value " << *no_data << " (" << holes << " no-data cells)";
                return s.str();
            }
        }
        s << shown_path << ": codes 0..65535 = heights " << used.lo << " .. " << used.hi;
        if (holes != 0) s << " (data cells); " << holes << " no-data cells written as code 0";
        return s.str();
    } catch (const gorge::io::io_error& e) {
        throw usage_error(shown_path + ": " + e.what());
    } catch (const std::invalid_argument& e) {
        throw usage_error(shown_path + ": " + e.what());
    }
}

void write_json(const std::string& path, const std::string& shown_path, const nlohmann::json& value) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << value.dump(2) << '\n';
    out.close();
    if (!out) throw usage_error(shown_path + ": cannot write the preset");
}

gorge::io::heightmap read_input(const std::string& path) {
    try {
        return gorge::io::read_heightmap(path);
    } catch (const gorge::io::io_error& e) {
        throw usage_error(e.what());
    } catch (const std::invalid_argument& e) {
        throw usage_error(path + ": " + e.what());
    }
}

void add_grid_io(CLI::App& app, grid_io_options& o) {
    add_heightmap_input(app, o.input, "; fill and thermal keep a raster's no-data cells as no-data, droplets refuses them");
    add_heightmap_output(app, o.output,
                         "; no-data cells: .tif no-data value (and the input's geotransform), .exr the value itself, "
                         ".png/.r16 code 0 (the range covers the data cells)");
    add_preview_option(app, o.preview);
    add_progress_flag(app, o.progress);
    app.add_flag("--timings", o.timings, "Print the read, compute and write times on stderr");
    o.params = std::make_unique<parameters>(app);
    add_mapping_options(app, *o.params, o.mapping);
    o.params->add_value("height-scale", o.height_scale,
                        "World height per stored unit; 0: 1 / largest code for integer files (heights 0..1), 1 for "
                        "float files. Integer outputs default to the input's own range");
    o.params->add_value("height-offset", o.height_offset, "World height added after the scale");
}

loaded_grid load_grid(const grid_io_options& o) {
    output_kind(o.output);
    check_preview_path(o.preview);
    o.mapping.mapping();  // a bad --range fails before any work
    const gorge::io::heightmap map = read_input(o.input);
    const float scale = o.height_scale != 0.0f ? o.height_scale
                        : map.max_code != 0   ? 1.0f / static_cast<float>(map.max_code)
                                              : 1.0f;
    if (!std::isfinite(scale) || !std::isfinite(o.height_offset))
        throw usage_error("--height-scale, --height-offset: must be finite");
    loaded_grid g;
    g.heights = gorge::grid<float>(map.heights.width(), map.heights.height());
    g.placement = map.placement;
    const float* src = map.heights.data();
    float* dst = g.heights.data();
    // No-data cells get the converted no-data value; NaN instead when that is not finite or a
    // converted data cell lands on it (a data cell must never read as no-data).
    const float nan = std::numeric_limits<float>::quiet_NaN();
    float marker = map.no_data ? o.height_offset + scale * *map.no_data : nan;
    bool collision = !std::isfinite(marker);
    for (std::size_t i = 0; i < g.heights.size(); ++i) {
        if (gorge::detail::is_no_data(src[i], map.no_data)) {
            dst[i] = marker;
            ++g.no_data_cells;
        } else {
            dst[i] = o.height_offset + scale * src[i];
            collision = collision || dst[i] == marker;
        }
    }
    if (map.no_data) {
        if (collision) {
            marker = nan;
            for (std::size_t i = 0; i < g.heights.size(); ++i)
                if (gorge::detail::is_no_data(src[i], map.no_data)) dst[i] = marker;
        }
        g.no_data = marker;
    }
    if (map.max_code != 0) {
        const float lo = o.height_offset, hi = o.height_offset + scale * static_cast<float>(map.max_code);
        if (lo < hi)
            g.default_mapping = gorge::io::height_mapping::absolute(lo, hi, gorge::io::out_of_range::clamp);
        else if (hi < lo)
            g.default_mapping = gorge::io::height_mapping::absolute(hi, lo, gorge::io::out_of_range::clamp);
    }
    return g;
}

void save_grid(const grid_io_options& o, const loaded_grid& g, const std::string& summary) {
    output_set outputs;
    std::string report = write_heights(outputs.stage(o.output), o.output, g.heights.view(),
                                       o.mapping.mapping(g.default_mapping), g.no_data, g.placement);
    if (!o.preview.empty()) report += "\n" + write_preview(outputs, o.preview, g.heights.view(), g.no_data);
    if (!o.params->save_path().empty())
        write_json(outputs.stage(o.params->save_path()), o.params->save_path(), o.params->to_json());
    outputs.commit();
    std::printf("%s\n%s\n", report.c_str(), summary.c_str());
}

bool progress_wanted(bool forced) { return forced || ::isatty(STDERR_FILENO) == 1; }

progress::progress(bool enabled, std::string label) : enabled_(enabled), label_(std::move(label)) {}

void progress::update(double fraction) {
    if (!enabled_) return;
    constexpr int width = 40;
    const int filled = static_cast<int>(std::clamp(fraction, 0.0, 1.0) * width);
    if (filled == shown_) return;
    shown_ = filled;
    std::fprintf(stderr, "\r%s [%s%s] %3d%%", label_.c_str(), std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(width - filled), ' ').c_str(), filled * 100 / width);
    std::fflush(stderr);
}

staged_progress::staged_progress(progress& bar, std::vector<double> weights) : bar_(bar) {
    double total = 0;
    for (const double w : weights) total += w;
    double done = 0;
    starts_.push_back(0.0);
    for (const double w : weights) starts_.push_back((done += w) / total);
    starts_.back() = 1.0;
}

void staged_progress::begin(std::size_t index) {
    stage_ = std::min(index, starts_.size() - 2);
    bar_.update(starts_[stage_]);
}

void staged_progress::update(double fraction) {
    const double f = std::clamp(fraction, 0.0, 1.0);
    bar_.update(starts_[stage_] + f * (starts_[stage_ + 1] - starts_[stage_]));
}

void progress::finish() {
    if (!enabled_) return;
    update(1.0);
    std::fputc('\n', stderr);
}

std::string option_of_parameter(const std::string& member_and_rule) {
    std::string name = member_and_rule.substr(0, member_and_rule.find(' '));
    const std::size_t dot = name.find_last_of('.');
    if (dot != std::string::npos) name = name.substr(dot + 1);
    std::replace(name.begin(), name.end(), '_', '-');
    std::replace(name.begin(), name.end(), ',', ' ');
    return "--" + name.substr(0, name.find(' '));
}

}  // namespace gorge_cli
