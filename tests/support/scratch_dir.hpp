// A scratch directory for tests that write files: created under the system's temporary
// directory with a unique name, removed with its content at the end of the test case.
#pragma once

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace gorge_test {

struct scratch_dir {
    std::filesystem::path path;
    /// prefix names the test, e.g. "gorge_test_io_".
    explicit scratch_dir(const std::string& prefix) {
        static int counter = 0;
        const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
        path = std::filesystem::temp_directory_path() /
               (prefix + std::to_string(stamp) + "_" + std::to_string(counter++));
        std::filesystem::create_directories(path);
    }
    ~scratch_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;
    std::string file(const std::string& name) const { return (path / name).string(); }
    /// Names of the entries, sorted.
    std::vector<std::string> entries() const {
        std::vector<std::string> names;
        for (const auto& e : std::filesystem::directory_iterator(path)) names.push_back(e.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }
};

}  // namespace gorge_test
