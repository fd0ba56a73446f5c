// Catch2 v2 / v3 compatibility: the tests use only macros common to both.
#pragma once
#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
using Catch::Approx;  // v2 puts Approx in the global namespace
#else
#include <catch2/catch.hpp>
#endif
