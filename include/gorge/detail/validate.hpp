// gorge/detail/validate.hpp — the one rule for checking parameter structs.
//
// Every gorge parameter struct P has
//     invalid_parameter first_invalid() const;   // the first bad member, or an empty result
//     void validate() const;                      // throws std::invalid_argument naming it
// and implements validate() as `detail::validate(*this, "gorge::P")`. The message reads
//     gorge::island_params: invalid terrain.octaves (must be in 1..32)
// i.e. the struct, then the member (with the enclosing member for a nested struct) and its rule.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace gorge {

/// Result of a parameter struct's first_invalid(): empty (false) when every member is valid,
/// else the first bad member's name and rule, e.g. "octaves (must be in 1..32)", and, for a
/// member of a nested struct, the enclosing member's name ("terrain"). Compares equal to nullptr
/// when empty, so `p.first_invalid() == nullptr` reads as "p is valid".
struct invalid_parameter {
    const char* member = nullptr;  ///< name and rule of the bad member (static storage), or nullptr
    const char* within = nullptr;  ///< enclosing member of a nested struct, or nullptr

    invalid_parameter() = default;
    /// A bad member (nullptr: none).
    invalid_parameter(const char* member_and_rule) : member(member_and_rule) {}  // NOLINT: implicit by design

    explicit operator bool() const { return member != nullptr; }
    /// "within.member (rule)", or "" when empty.
    std::string to_string() const {
        if (!member) return std::string();
        return within ? std::string(within) + "." + member : std::string(member);
    }
    friend bool operator==(const invalid_parameter& e, std::nullptr_t) { return !e; }
    friend bool operator!=(const invalid_parameter& e, std::nullptr_t) { return bool(e); }
};

namespace detail {

/// Throws std::invalid_argument("<who>: invalid <what>").
[[noreturn]] inline void throw_invalid(const char* who, const std::string& what) {
    throw std::invalid_argument(std::string(who) + ": invalid " + what);
}

/// The result of a nested struct's first_invalid(), named as a member of its enclosing struct
/// (one level of nesting; the enclosing name replaces a deeper one).
inline invalid_parameter nested_invalid(const char* within, invalid_parameter inner) {
    if (inner) inner.within = within;
    return inner;
}

/// Throws std::invalid_argument naming the first bad member of params; who is the struct's
/// qualified name, e.g. "gorge::erosion_params".
template <class Params>
void validate(const Params& params, const char* who) {
    if (const invalid_parameter bad = params.first_invalid()) throw_invalid(who, bad.to_string());
}

}  // namespace detail
}  // namespace gorge
