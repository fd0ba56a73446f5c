// Built against an installed gorge::io by tests/consumer/run.cmake; exits non-zero on a wrong result.
#include <gorge/io/heightmap_io.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

int main() {
    const std::string path = (std::filesystem::temp_directory_path() / "gorge_io_consumer.png").string();
    gorge::grid<float> h(8, 4);
    for (std::ptrdiff_t y = 0; y < h.height(); ++y)
        for (std::ptrdiff_t x = 0; x < h.width(); ++x) h(x, y) = static_cast<float>(x * 1000 + y);
    const gorge::io::height_range used = gorge::io::write_png16(path, h, gorge::io::height_mapping::normalise());
    const gorge::io::heightmap back = gorge::io::read_png(path);
    std::filesystem::remove(path);
    std::printf("range %.1f..%.1f, max code %u, gdal %d\n", static_cast<double>(used.lo), static_cast<double>(used.hi),
                back.max_code, gorge::io::has_gdal() ? 1 : 0);
    return used.lo == 0.0f && used.hi == 7003.0f && back.max_code == 65535u && back.heights(7, 3) == 65535.0f ? 0 : 1;
}
