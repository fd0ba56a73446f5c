// Forwarding header: gorge/simplex.hpp moved to gorge/noise/simplex.hpp (this path keeps compiling).
#pragma once
#include "noise/simplex.hpp"
