// Keeps the shader ports in step with each other and with the C++ parameter structs.
//
// It reads the port files as text:
//   include/gorge/glsl/gorge.glsl   GLSL  (always)
//   include/gorge/hlsl/gorge.hlsl   HLSL  (always)
//   include/gorge/wgsl/gorge.wgsl   WGSL  (when present; required once it has been seen by the
//                                          build's configure step, see GORGE_PORTS_REQUIRE_WGSL)
// and lists in each
//   - the public functions: every `gorge_*` function not named `gorge_detail_*`;
//   - the public constants: every file-scope `gorge_*` constant not named `gorge_detail_*`;
//   - the public structs and their members, in order.
// GLSL and HLSL must agree exactly (names; overloads count once). WGSL has no overloading: it must
// have every GLSL function, and each of its extra functions must be named after one of them plus a
// suffix (`gorge_demo_pipeline_defaults` standing in for an overload of `gorge_demo_pipeline`,
// `gorge_fbm_shadertoy` for gorge_fbm with the other hash); its constants and structs must agree
// exactly, apart from the names of its run-time hash choice (gorge_lattice2, gorge_hash_<hash>).
//
// Against the C++: the members of gorge's C++ structs (read from the headers with a small parser)
// must be the members of the port struct of the same name with the `gorge_` prefix, in the same
// order, in every port. Every C++ struct named *_params in the ported headers must have a port
// struct, except those the ports flatten into their parent (warp_params: island_params' member
// `warp` is `warp_strength`, `warp_iterations` in the ports). A member added to a C++ parameter
// struct therefore fails this test until every port has it.
//
// Usage: test_port_sync [source tree]   (default: this build's source tree; ctest's
// port_sync_detects_* tests run it on mutated copies and expect it to fail).
// Exit status 0 when everything agrees, 1 with a list of the differences otherwise.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#ifndef GORGE_SOURCE_DIR
#error "GORGE_SOURCE_DIR must name the source tree"
#endif
#ifndef GORGE_PORTS_REQUIRE_WGSL
#define GORGE_PORTS_REQUIRE_WGSL 0
#endif

namespace {

std::string source_dir = GORGE_SOURCE_DIR;  // argv[1] overrides it

// C++ headers the ports mirror (see the "mirrors" list at the top of gorge.glsl).
const char* const cpp_headers[] = {
    "include/gorge/noise/hash.hpp",         "include/gorge/noise/gradient_noise.hpp",
    "include/gorge/noise/value_noise.hpp",  "include/gorge/noise/simplex.hpp",
    "include/gorge/noise/fractal.hpp",      "include/gorge/noise/field.hpp",
    "include/gorge/noise/island.hpp",       "include/gorge/filter/phacelle.hpp",
    "include/gorge/filter/erosion_filter.hpp", "include/gorge/filter/demo_pipeline.hpp",
};

// C++ parameter structs that the ports flatten into a parent struct instead of porting them.
const std::set<std::string> flattened_cpp_structs = {"warp_params"};

// Port structs with no C++ struct of the same name (and why).
const std::set<std::string> port_only_structs = {
    "gorge_warp",  // the domain warp's loop state (C++ warp_field is a closure)
};

using member_list = std::vector<std::string>;

// WGSL's hash policy is chosen by name at run time (its file's header): dispatch functions (the
// whole hash, its split form and its word) and one constant per hash, gorge_hash_<hash>, which the
// preprocessor-driven GLSL and HLSL files do not need. Each such constant must name a hash the
// other ports have (gorge_<hash>_lattice2).
const std::set<std::string> wgsl_only_functions = {"gorge_lattice2", "gorge_hash_axis_x", "gorge_hash_axis_y",
                                                   "gorge_hash_combine", "gorge_hash_combine_bits"};
const std::string wgsl_hash_constant_prefix = "gorge_hash_";

struct port {
    port(std::string port_name, std::string file) : name(std::move(port_name)), path(std::move(file)) {}
    std::string name;
    std::string path;
    bool present = false;
    std::set<std::string> functions;
    std::set<std::string> constants;
    std::map<std::string, member_list> structs;
};

std::string read_text(const std::string& path, bool& ok) {
    std::ifstream in(path, std::ios::binary);
    ok = bool(in);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// The text with // and /* */ comments replaced by spaces (line structure kept).
std::string strip_comments(const std::string& text) {
    std::string out = text;
    for (std::size_t i = 0; i + 1 < out.size();) {
        if (out[i] == '/' && out[i + 1] == '/') {
            while (i < out.size() && out[i] != '\n') out[i++] = ' ';
        } else if (out[i] == '/' && out[i + 1] == '*') {
            const std::size_t end = out.find("*/", i + 2);
            const std::size_t stop = end == std::string::npos ? out.size() : end + 2;
            for (; i < stop; ++i)
                if (out[i] != '\n') out[i] = ' ';
        } else {
            ++i;
        }
    }
    return out;
}

bool is_public(const std::string& name) { return name.rfind("gorge_detail_", 0) != 0; }

/// The text between the brace at `open` and its match (exclusive).
std::string braced_body(const std::string& text, std::size_t open) {
    int depth = 0;
    for (std::size_t i = open; i < text.size(); ++i) {
        if (text[i] == '{') ++depth;
        if (text[i] == '}' && --depth == 0) return text.substr(open + 1, i - open - 1);
    }
    return text.substr(open + 1);
}

std::string trim(const std::string& s) {
    const std::size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

/// Members of a C-like struct body ("type a, b;" statements at the body's own level; functions,
/// access labels and static members skipped). Used for GLSL, HLSL and C++.
member_list c_like_members(const std::string& body) {
    member_list members;
    std::string statement;
    int depth = 0;
    for (char ch : body) {
        if (ch == '{') ++depth;
        if (ch == '}') {
            --depth;
            // The end of a member function's body (a brace initializer keeps its statement).
            if (depth == 0 && statement.find('(') != std::string::npos) statement.clear();
            continue;
        }
        if (depth > 0) continue;
        if (ch != ';') {
            statement += ch == '\n' || ch == '\r' || ch == '\t' ? ' ' : ch;
            continue;
        }
        std::string s = trim(statement);
        statement.clear();
        // Drop access labels glued to the statement ("private: int x").
        static const std::regex label(R"(^(public|private|protected)\s*:\s*)");
        s = std::regex_replace(s, label, "");
        if (s.empty() || s.rfind("static", 0) == 0 || s.rfind("using", 0) == 0 || s.rfind("friend", 0) == 0 ||
            s.rfind("template", 0) == 0 || s.rfind("typedef", 0) == 0)
            continue;
        // Cut the initializer; a '(' before it means a function declaration.
        const std::size_t init = s.find_first_of("={");
        std::string decl = trim(s.substr(0, init));
        if (decl.find('(') != std::string::npos) continue;
        // "type a, b, c": drop template arguments (glm::vec<2, T> holds a comma), then the type is
        // the first word and the declarators follow.
        std::string flat;
        int angle = 0;
        for (char c : decl) {
            if (c == '<') ++angle;
            if (angle == 0) flat += c;
            if (c == '>') --angle;
        }
        static const std::regex typed(R"(^(?:const\s+)?[\w:]+\s+(.+)$)");
        static const std::regex declarator(R"(([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*(?:,|$))");
        std::smatch m;
        if (!std::regex_match(flat, m, typed)) continue;
        const std::string names = m[1];
        for (std::sregex_iterator it(names.begin(), names.end(), declarator), end; it != end; ++it)
            members.push_back((*it)[1]);
    }
    return members;
}

/// Members of a WGSL struct body ("name: type," entries, attributes skipped).
member_list wgsl_members(const std::string& body) {
    member_list members;
    static const std::regex entry(R"((?:@\w+(?:\([^)]*\))?\s*)*([A-Za-z_]\w*)\s*:)");
    int angle = 0;
    std::string field;
    auto flush = [&] {
        std::smatch m;
        const std::string f = trim(field);
        if (std::regex_search(f, m, entry) && m.position(0) == 0) members.push_back(m[1]);
        field.clear();
    };
    for (char ch : body) {
        if (ch == '<') ++angle;
        if (ch == '>') --angle;
        if (ch == ',' && angle == 0) {
            flush();
            continue;
        }
        field += ch;
    }
    flush();
    return members;
}

void scan_port(port& p) {
    bool ok = false;
    const std::string text = strip_comments(read_text(p.path, ok));
    p.present = ok;
    if (!ok) return;
    const bool wgsl = p.name == "WGSL";
    // Functions: a return type (or `fn`) at the start of a line, the name, '('. File-scope
    // constants: `const` (GLSL, WGSL) or `static const` (HLSL) at the start of a line. Structs:
    // `struct gorge_name {`.
    static const std::regex c_function(R"(^[ \t]*(?!return\b|else\b)(?:[A-Za-z_]\w*[ \t]+)+(gorge_\w+)[ \t]*\()");
    static const std::regex wgsl_function(R"(\bfn[ \t]+(gorge_\w+)[ \t]*\()");
    static const std::regex c_constant(R"(^(?:static[ \t]+)?const[ \t]+\w+[ \t]+(gorge_\w+)[ \t]*=)");
    static const std::regex wgsl_constant(R"(^const[ \t]+(gorge_\w+)[ \t]*[:=])");
    const std::regex& fn = wgsl ? wgsl_function : c_function;
    const std::regex& constant = wgsl ? wgsl_constant : c_constant;
    static const std::regex structure(R"(\bstruct[ \t]+(gorge_\w+)\s*\{)");
    std::size_t line_start = 0;
    while (line_start < text.size()) {
        std::size_t line_end = text.find('\n', line_start);
        if (line_end == std::string::npos) line_end = text.size();
        const std::string line = text.substr(line_start, line_end - line_start);
        std::smatch m;
        // Only lines that name something gorge_ can declare it (keeps the regexes off the rest).
        if (line.find("gorge_") != std::string::npos) {
            if (std::regex_search(line, m, fn) && is_public(m[1])) p.functions.insert(m[1]);
            if (std::regex_search(line, m, constant) && is_public(m[1])) p.constants.insert(m[1]);
            if (std::regex_search(line, m, structure) && is_public(m[1])) {
                const std::size_t open = line_start + std::size_t(m.position(0) + m.length(0) - 1);
                const std::string body = braced_body(text, open);
                p.structs[m[1]] = wgsl ? wgsl_members(body) : c_like_members(body);
            }
        }
        line_start = line_end + 1;
    }
}

std::string join(const member_list& v) {
    std::string s;
    for (const std::string& m : v) s += (s.empty() ? "" : ", ") + m;
    return s;
}

int failures = 0;

void fail(const std::string& what) {
    std::printf("  FAIL: %s\n", what.c_str());
    ++failures;
}

void compare_sets(const std::string& what, const port& a, const std::set<std::string>& sa, const port& b,
                  const std::set<std::string>& sb) {
    for (const std::string& n : sa)
        if (!sb.count(n)) fail(what + " " + n + " is in " + a.name + " but not in " + b.name);
    for (const std::string& n : sb)
        if (!sa.count(n)) fail(what + " " + n + " is in " + b.name + " but not in " + a.name);
}

void compare_structs(const port& a, const port& b) {
    std::set<std::string> na, nb;
    for (const auto& s : a.structs) na.insert(s.first);
    for (const auto& s : b.structs) nb.insert(s.first);
    compare_sets("struct", a, na, b, nb);
    for (const auto& s : a.structs) {
        const auto other = b.structs.find(s.first);
        if (other == b.structs.end()) continue;
        if (s.second != other->second)
            fail("struct " + s.first + " members differ: " + a.name + " (" + join(s.second) + "), " + b.name + " (" +
                 join(other->second) + ")");
    }
}

/// C++ struct name -> members, from the ported headers; `bodies` gets each struct's text.
std::map<std::string, member_list> cpp_structs(std::map<std::string, std::string>& bodies) {
    std::map<std::string, member_list> out;
    static const std::regex structure(R"(\bstruct[ \t]+([a-z_]\w*)\s*(?::[^{;]*)?\{)");
    for (const char* header : cpp_headers) {
        bool ok = false;
        const std::string text = strip_comments(read_text(source_dir + "/" + header, ok));
        if (!ok) {
            fail(std::string("cannot read ") + header);
            continue;
        }
        for (std::size_t at = text.find("struct "); at != std::string::npos; at = text.find("struct ", at + 1)) {
            const std::size_t line_end = std::min(text.find('\n', at), text.size());
            const std::string line = text.substr(at, line_end - at);
            std::smatch m;
            if (!std::regex_search(line, m, structure) || m.position(0) != 0) continue;
            const std::size_t open = at + std::size_t(m.length(0) - 1);
            bodies[m[1]] = braced_body(text, open);
            out[m[1]] = c_like_members(bodies[m[1]]);
        }
    }
    return out;
}

/// A C++ struct's members with members of flattened parameter types expanded as the ports spell
/// them (island_params::warp -> warp_strength, warp_iterations).
member_list cpp_port_members(const std::string& cpp_name, const std::map<std::string, member_list>& cpp,
                             const std::string& body) {
    member_list out;
    for (const std::string& m : cpp.at(cpp_name)) {
        bool expanded = false;
        for (const std::string& flat : flattened_cpp_structs) {
            // Is member m of type flat<...> in this struct? Look for "flat<...> m" in the text.
            const std::regex typed("\\b" + flat + "\\s*<[^>]*>\\s+" + m + "\\b");
            if (std::regex_search(body, typed)) {
                for (const std::string& sub : cpp.at(flat)) out.push_back(m + "_" + sub);
                expanded = true;
            }
        }
        if (!expanded) out.push_back(m);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) source_dir = argv[1];
    std::vector<port> ports = {
        {"GLSL", source_dir + "/include/gorge/glsl/gorge.glsl"},
        {"HLSL", source_dir + "/include/gorge/hlsl/gorge.hlsl"},
        {"WGSL", source_dir + "/include/gorge/wgsl/gorge.wgsl"},
    };
    for (port& p : ports) scan_port(p);
    const port& glsl = ports[0];
    const port& hlsl = ports[1];
    port& wgsl = ports[2];
    for (const port& p : ports) {
        std::printf("%s %s: %s", p.name.c_str(), p.path.c_str(), p.present ? "" : "not present\n");
        if (p.present)
            std::printf("%zu public functions, %zu public constants, %zu public structs\n", p.functions.size(),
                        p.constants.size(), p.structs.size());
    }
    if (!glsl.present) fail("the GLSL port is missing");
    if (!hlsl.present) fail("the HLSL port is missing");
    if (!wgsl.present && GORGE_PORTS_REQUIRE_WGSL) fail("the WGSL port is missing (it existed when the build was configured)");
    // The parser must find something, or every comparison below would pass vacuously.
    for (const port& p : ports)
        if (p.present && (p.functions.size() < 10 || p.structs.size() < 5 || p.constants.empty()))
            fail(p.name + ": the parser found too little (" + std::to_string(p.functions.size()) + " functions, " +
                 std::to_string(p.structs.size()) + " structs)");

    std::printf("\nGLSL against HLSL\n");
    compare_sets("function", glsl, glsl.functions, hlsl, hlsl.functions);
    compare_sets("constant", glsl, glsl.constants, hlsl, hlsl.constants);
    compare_structs(glsl, hlsl);

    if (wgsl.present) {
        std::printf("GLSL against WGSL\n");
        for (const std::string& f : glsl.functions)
            if (!wgsl.functions.count(f)) fail("function " + f + " is in GLSL but not in WGSL");
        for (const std::string& f : wgsl.functions) {
            if (glsl.functions.count(f) || wgsl_only_functions.count(f)) continue;
            const bool variant = std::any_of(glsl.functions.begin(), glsl.functions.end(), [&](const std::string& g) {
                return f.size() > g.size() + 1 && f.compare(0, g.size() + 1, g + "_") == 0;
            });
            if (!variant) fail("function " + f + " is in WGSL but neither in GLSL nor a variant of a GLSL function");
        }
        std::set<std::string> wgsl_constants;
        for (const std::string& c : wgsl.constants) {
            if (c.rfind(wgsl_hash_constant_prefix, 0) != 0) {
                wgsl_constants.insert(c);
                continue;
            }
            const std::string lattice = "gorge_" + c.substr(wgsl_hash_constant_prefix.size()) + "_lattice2";
            if (!glsl.functions.count(lattice))
                fail("WGSL hash constant " + c + " names no hash of the GLSL port (no " + lattice + ")");
        }
        compare_sets("constant", glsl, glsl.constants, wgsl, wgsl_constants);
        compare_structs(glsl, wgsl);
    }

    std::printf("C++ structs against the ports\n");
    std::map<std::string, std::string> cpp_bodies;
    const std::map<std::string, member_list> cpp = cpp_structs(cpp_bodies);
    // Every C++ *_params struct is ported (or flattened into its parent).
    static const std::regex params_name(R"(.*_params)");
    std::size_t compared = 0;
    for (const auto& c : cpp) {
        const std::string port_name = "gorge_" + c.first;
        const bool is_params = std::regex_match(c.first, params_name);
        const bool in_glsl = glsl.structs.count(port_name) > 0;
        if (is_params && !in_glsl && !flattened_cpp_structs.count(c.first))
            fail("C++ struct " + c.first + " has no port struct " + port_name);
        if (!in_glsl) continue;
        const member_list want = cpp_port_members(c.first, cpp, cpp_bodies.at(c.first));
        ++compared;
        std::printf("  %-18s %zu members\n", c.first.c_str(), want.size());
        for (const port& p : ports) {
            if (!p.present) continue;
            const auto s = p.structs.find(port_name);
            if (s == p.structs.end()) continue;  // reported by the port comparisons above
            if (s->second != want)
                fail("struct " + port_name + " in " + p.name + " (" + join(s->second) + ") does not match C++ " +
                     c.first + " (" + join(want) + ")");
        }
    }
    // Every public port struct has a C++ counterpart unless listed as port-only.
    for (const auto& s : glsl.structs) {
        if (port_only_structs.count(s.first)) continue;
        if (!cpp.count(s.first.substr(6))) fail("port struct " + s.first + " has no C++ struct " + s.first.substr(6));
    }
    if (compared < 8) fail("only " + std::to_string(compared) + " C++ structs were compared: the parser found too little");
    // The parser must see erosion_params' members (its first and last ones, as a spot check).
    const auto ep = cpp.find("erosion_params");
    if (ep == cpp.end() || ep->second.empty() || ep->second.front() != "scale" || ep->second.back() != "normalization")
        fail("the C++ parser did not find erosion_params { scale ... normalization }");
    else
        std::printf("  C++ erosion_params: %s\n", join(ep->second).c_str());
    std::printf("  %zu C++ structs compared with the ports\n", compared);

    std::printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
