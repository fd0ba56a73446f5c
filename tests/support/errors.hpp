// Helpers for the error-reporting tests: bad input must throw std::invalid_argument with a message
// that names the offending parameter or cell.
#pragma once

#include <stdexcept>
#include <string>

#include "catch.hpp"

namespace gorge_test {

/// Message of the exception of type E thrown by f, or "" when nothing (or something else) is thrown.
template <class E, class F>
std::string thrown_message(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    return "";
}

/// Message of the std::invalid_argument thrown by f, or "" when nothing (or something else) is thrown.
template <class F>
std::string invalid_argument_message(F&& f) {
    return thrown_message<std::invalid_argument>(f);
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// Checks that make() throws std::invalid_argument whose message contains name.
template <class F>
void expect_throw_naming(F&& make, const std::string& name) {
    const std::string message = invalid_argument_message(make);
    INFO("expected std::invalid_argument naming '" << name << "', got: '" << message << "'");
    CHECK(contains(message, name));
}

}  // namespace gorge_test
