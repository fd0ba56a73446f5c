// Forwarding header: gorge/fractal.hpp moved to gorge/noise/fractal.hpp (this path keeps compiling).
#pragma once
#include "noise/fractal.hpp"
