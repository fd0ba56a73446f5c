// Forwarding header: gorge/island.hpp moved to gorge/noise/island.hpp (this path keeps compiling).
#pragma once
#include "noise/island.hpp"
