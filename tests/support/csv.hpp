// Minimal reader for the reference CSV files in tests/data/reference: a header row of column names,
// then rows of comma-separated fields. Fails loudly (throws) on a missing file, an empty table, a
// ragged row or a missing column, so a broken checkout can never pass as "no rows to compare".
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef GORGE_TEST_DATA_DIR
#error "GORGE_TEST_DATA_DIR must point at tests/data"
#endif

namespace gorge_test {

class csv_table {
public:
    explicit csv_table(const std::string& name) : path_(std::string(GORGE_TEST_DATA_DIR) + "/reference/" + name) {
        std::ifstream in(path_);
        if (!in) throw std::runtime_error("cannot open reference file " + path_);
        std::string line;
        if (!std::getline(in, line)) throw std::runtime_error("reference file is empty: " + path_);
        header_ = split(line);
        while (std::getline(in, line)) {
            if (line.empty()) continue;
            std::vector<std::string> fields = split(line);
            if (fields.size() != header_.size())
                throw std::runtime_error("ragged row " + std::to_string(rows_.size() + 2) + " in " + path_);
            rows_.push_back(std::move(fields));
        }
        if (rows_.empty()) throw std::runtime_error("reference file has no rows: " + path_);
    }

    std::size_t size() const { return rows_.size(); }
    const std::string& path() const { return path_; }

    std::size_t column(const std::string& name) const {
        for (std::size_t i = 0; i < header_.size(); ++i)
            if (header_[i] == name) return i;
        throw std::runtime_error("column '" + name + "' missing in " + path_);
    }
    const std::string& text(std::size_t row, const std::string& name) const { return rows_.at(row).at(column(name)); }
    double number(std::size_t row, const std::string& name) const {
        const std::string& s = text(row, name);
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (end == s.c_str() || *end != '\0')
            throw std::runtime_error("not a number: '" + s + "' in column " + name + " of " + path_);
        return v;
    }

private:
    static std::vector<std::string> split(const std::string& line) {
        std::vector<std::string> out;
        std::stringstream ss(line);
        std::string field;
        while (std::getline(ss, field, ',')) {
            if (!field.empty() && field.back() == '\r') field.pop_back();
            out.push_back(field);
        }
        return out;
    }

    std::string path_;
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
};

}  // namespace gorge_test
