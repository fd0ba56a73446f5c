// Reference heights of the playground (web/) for tests/web/run_playground.mjs: the playground's
// terrain computed on the C++ float path, one sample at a time, independently of the page and of
// the `gorge` command line:
//     n = fbm<Hash>(p, noise, noise_seed) * amplitude, fade = clamp(n.x / (amplitude * 0.6), -1, 1),
//     terrain = (0.5 + 0.5 n.x, 0.5 n.y, 0.5 n.z), r = erosion_filter<Hash>(p, terrain, fade, erosion, seed),
//     height = apply_height_offset(terrain.x, r, fade, output_offset)
// at p = origin + spacing * (i, j) (computed in double and rounded once, as erode_tile does).
//
// Usage: gorge_playground_reference OUT.f32 key=value...
//   keys: size, spacing, origin=x,y, noise_frequency, noise_octaves, noise_lacunarity, noise_gain,
//   noise_amplitude, noise_seed, and every gorge::erosion_params member with the preset's names
//   (scale, strength, gully_weight, detail, rounding=a,b,c,d, onset=a,b,c,d, assumed_slope=a,b,
//   octaves, lacunarity, gain, cell_scale, normalization), seed, output_offset=o,k, and
//   hash=pcg3d|prime_mix|prime_xor (Hash: gorge::pcg3d_hash, the default, prime_mix_hash or
//   prime_xor_hash).
// Writes size * size * 3 little-endian float32 values (height, ridge map, input height per
// sample, row j = 0 first). Exit 2 with a message naming the key on bad input.
// SPDX-License-Identifier: MPL-2.0
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gorge/filter/demo_pipeline.hpp>

namespace {

struct settings {
    int size = 64;
    float spacing = 1.0f / 64.0f;
    float origin[2] = {0.0f, 0.0f};
    gorge::fbm_params<float> noise = gorge::demo::height_fbm<float>();
    float amplitude = static_cast<float>(gorge::demo::height_amplitude);
    std::uint32_t noise_seed = 0;
    gorge::erosion_params<float> erosion{};
    std::uint32_t seed = 0;
    float output_offset[2] = {static_cast<float>(gorge::demo::height_offset_o),
                              static_cast<float>(gorge::demo::height_offset_k)};
    std::string hash = "pcg3d";
};

/// Largest accepted side.
constexpr int max_size = 4096;

std::vector<double> numbers(const std::string& key, const std::string& text, std::size_t count) {
    std::vector<double> out;
    std::stringstream s(text);
    std::string item;
    while (std::getline(s, item, ',')) {
        char* end = nullptr;
        const double v = std::strtod(item.c_str(), &end);
        if (item.empty() || *end != '\0' || !std::isfinite(v)) throw std::invalid_argument(key + ": not a number: " + item);
        out.push_back(v);
    }
    if (out.size() != count) throw std::invalid_argument(key + ": needs " + std::to_string(count) + " numbers");
    return out;
}

float one_float(const std::string& key, const std::string& text) { return static_cast<float>(numbers(key, text, 1)[0]); }

int one_int(const std::string& key, const std::string& text, double lo, double hi) {
    const double v = numbers(key, text, 1)[0];
    if (v != std::floor(v) || v < lo || v > hi) throw std::invalid_argument(key + ": must be an integer in range");
    return static_cast<int>(v);
}

std::uint32_t one_seed(const std::string& key, const std::string& text) {
    const double v = numbers(key, text, 1)[0];
    if (v != std::floor(v) || v < 0.0 || v > 4294967295.0) throw std::invalid_argument(key + ": must be 0..2^32-1");
    return static_cast<std::uint32_t>(v);
}

void set(settings& s, const std::string& key, const std::string& v) {
    gorge::erosion_params<float>& e = s.erosion;
    const auto floats = [&](float* out, std::size_t n) {
        const std::vector<double> d = numbers(key, v, n);
        for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(d[i]);
    };
    if (key == "size") s.size = one_int(key, v, 1, max_size);
    else if (key == "spacing") s.spacing = one_float(key, v);
    else if (key == "origin") floats(s.origin, 2);
    else if (key == "noise_frequency") s.noise.frequency = one_float(key, v);
    else if (key == "noise_octaves") s.noise.octaves = one_int(key, v, -1e9, 1e9);
    else if (key == "noise_lacunarity") s.noise.lacunarity = one_float(key, v);
    else if (key == "noise_gain") s.noise.gain = one_float(key, v);
    else if (key == "noise_amplitude") s.amplitude = one_float(key, v);
    else if (key == "noise_seed") s.noise_seed = one_seed(key, v);
    else if (key == "scale") e.scale = one_float(key, v);
    else if (key == "strength") e.strength = one_float(key, v);
    else if (key == "gully_weight") e.gully_weight = one_float(key, v);
    else if (key == "detail") e.detail = one_float(key, v);
    else if (key == "rounding") floats(&e.rounding.x, 4);
    else if (key == "onset") floats(&e.onset.x, 4);
    else if (key == "assumed_slope") floats(&e.assumed_slope.x, 2);
    else if (key == "octaves") e.octaves = one_int(key, v, -1e9, 1e9);
    else if (key == "lacunarity") e.lacunarity = one_float(key, v);
    else if (key == "gain") e.gain = one_float(key, v);
    else if (key == "cell_scale") e.cell_scale = one_float(key, v);
    else if (key == "normalization") e.normalization = one_float(key, v);
    else if (key == "seed") s.seed = one_seed(key, v);
    else if (key == "output_offset") floats(s.output_offset, 2);
    else if (key == "hash") {
        if (v != "pcg3d" && v != "prime_mix" && v != "prime_xor")
            throw std::invalid_argument("hash: '" + v + "' (allowed: pcg3d, prime_mix, prime_xor)");
        s.hash = v;
    }
    else throw std::invalid_argument("unknown key '" + key + "'");
}

/// The samples of the view with the hash policy Hash: (height, ridge map, input height) each.
template <class Hash>
std::vector<float> samples(const settings& s) {
    const float fade_denominator = static_cast<float>(double(s.amplitude) * gorge::demo::fade_range);
    const glm::vec2 offset(s.output_offset[0], s.output_offset[1]);
    const std::size_t n = static_cast<std::size_t>(s.size);
    std::vector<float> out(n * n * 3);
    for (std::size_t j = 0; j < n; ++j)
        for (std::size_t i = 0; i < n; ++i) {
            const glm::vec2 p(static_cast<float>(std::fma(double(s.spacing), double(i), double(s.origin[0]))),
                              static_cast<float>(std::fma(double(s.spacing), double(j), double(s.origin[1]))));
            const glm::vec3 noise = gorge::fbm<Hash>(p, s.noise, s.noise_seed) * s.amplitude;
            const float fade = glm::clamp(noise.x / fade_denominator, -1.0f, 1.0f);
            const glm::vec3 terrain(static_cast<float>(gorge::demo::base_height) + 0.5f * noise.x, 0.5f * noise.y,
                                    0.5f * noise.z);
            const gorge::erosion_result<float> r = gorge::erosion_filter<Hash>(p, terrain, fade, s.erosion, s.seed);
            float* o = &out[(j * n + i) * 3];
            o[0] = gorge::apply_height_offset(terrain.x, r, fade, offset);
            o[1] = r.ridge_map;
            o[2] = terrain.x;
        }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: gorge_playground_reference OUT.f32 key=value...\n");
        return 2;
    }
    settings s;
    try {
        for (int a = 2; a < argc; ++a) {
            const std::string kv = argv[a];
            const std::size_t eq = kv.find('=');
            if (eq == std::string::npos) throw std::invalid_argument(kv + ": expected key=value");
            set(s, kv.substr(0, eq), kv.substr(eq + 1));
        }
        s.noise.validate();
        s.erosion.validate();
        if (!(std::isfinite(s.amplitude) && s.amplitude > 0.0f)) throw std::invalid_argument("noise_amplitude: must be finite and > 0");
        if (!(std::isfinite(s.spacing) && s.spacing > 0.0f)) throw std::invalid_argument("spacing: must be finite and > 0");
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "gorge_playground_reference: %s\n", e.what());
        return 2;
    }
    const std::vector<float> out = s.hash == "prime_xor"   ? samples<gorge::prime_xor_hash>(s)
                                   : s.hash == "prime_mix" ? samples<gorge::prime_mix_hash>(s)
                                                           : samples<gorge::pcg3d_hash>(s);
    std::ofstream file(argv[1], std::ios::binary);
    file.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size() * sizeof(float)));
    if (!file) {
        std::fprintf(stderr, "gorge_playground_reference: cannot write %s\n", argv[1]);
        return 1;
    }
    return 0;
}
