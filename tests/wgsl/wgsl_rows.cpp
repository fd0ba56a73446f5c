// Input rows and expected outputs of the WGSL parity test (run_parity.mjs runs them through
// include/gorge/wgsl/gorge.wgsl in headless Chromium and compares).
//
// The rows and tolerances are those of the Vulkan parity tests (tests/support/parity_rows.hpp), in
// the same packed layout, so parity.wgsl reads like parity.comp; the generated parts are smaller
// (a 256x256 demo tile, 64x64 for prime_mix and for prime_xor, lattice blocks of 32x32), for
// SwiftShader's time.
//
// Output, in the directory given as the only argument:
//   manifest.json          row and output layout, the batches, and every group of rows with its
//                          outputs (name, slot, tolerance; < 0 means bit-exact; vs_double;
//                          constant: the C++ values are all equal by design)
//   <hash>.rows.u32        the packed rows (little-endian u32)
//   <hash>.cpu.f32         C++ float outputs, 8 a row
//   <hash>.ref.f64         C++ double / reference values, 8 a row (NaN: none)
//   <hash>.group.u32       group index of each row
//   <hash>.line.u32        CSV line, point or sample index of each row (for the report)
// Exit code 0, or 1 with a message on stderr.
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/parity_rows.hpp"

namespace {

using namespace gorge_test::parity;

constexpr row_sizes browser_sizes{256, 64, 32};

template <class T>
void write_binary(const std::string& path, const T* data, std::size_t count) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(count * sizeof(T)));
    if (!out) throw std::runtime_error("cannot write " + path);
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

void write_outputs(const std::string& dir, const std::vector<batch>& batches, const group_table& table) {
    std::string json = "{\n  \"row_words\": " + std::to_string(row_words) + ",\n  \"out_words\": " +
                       std::to_string(out_words) + ",\n  \"tile_size\": " + std::to_string(browser_sizes.tile_size) +
                       ",\n  \"batches\": [";
    for (std::size_t i = 0; i < batches.size(); ++i) {
        const batch& b = batches[i];
        const std::string stem = dir + "/" + b.hash;
        write_binary(stem + ".rows.u32", b.words.data(), b.words.size());
        write_binary(stem + ".cpu.f32", b.cpu.data()->data(), b.cpu.size() * out_words);
        write_binary(stem + ".ref.f64", b.reference.data()->data(), b.reference.size() * out_words);
        write_binary(stem + ".group.u32", b.group_of.data(), b.group_of.size());
        write_binary(stem + ".line.u32", b.line.data(), b.line.size());
        json += std::string(i ? "," : "") + "\n    {\"hash\": " + json_string(b.hash) +
                ", \"rows\": " + std::to_string(b.group_of.size()) + "}";
    }
    json += "\n  ],\n  \"groups\": [";
    for (std::size_t gi = 0; gi < table.groups.size(); ++gi) {
        const group& g = table.groups[gi];
        json += std::string(gi ? "," : "") + "\n    {\"name\": " + json_string(g.name) +
                ", \"line_kind\": " + json_string(g.line_kind) + ", \"outputs\": [";
        for (std::size_t oi = 0; oi < g.outputs.size(); ++oi) {
            const output_spec& o = g.outputs[oi];
            char tol[40];
            std::snprintf(tol, sizeof tol, "%.17g", o.tolerance);
            json += std::string(oi ? ", " : "") + "{\"name\": " + json_string(o.name) +
                    ", \"slot\": " + std::to_string(o.slot) + ", \"tolerance\": " + tol +
                    ", \"vs_double\": " + (o.vs_double ? "true" : "false") +
                    ", \"constant\": " + (o.constant ? "true" : "false") + "}";
        }
        json += "]}";
    }
    json += "\n  ]\n}\n";
    std::ofstream out(dir + "/manifest.json");
    out << json;
    if (!out) throw std::runtime_error("cannot write " + dir + "/manifest.json");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <output directory>\n", argv[0]);
        return 2;
    }
    try {
        group_table table;
        const std::vector<batch> batches = build_batches(browser_sizes, table);
        write_outputs(argv[1], batches, table);
        std::size_t rows = 0;
        for (const batch& b : batches) rows += b.group_of.size();
        std::printf("wrote %zu rows in %zu groups to %s\n", rows, table.groups.size(), argv[1]);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "wgsl_rows: %s\n", e.what());
        return 1;
    }
}
