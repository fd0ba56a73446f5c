// Forwarding header: gorge/grid.hpp moved to gorge/grid/grid.hpp (this path keeps compiling).
#pragma once
#include "grid/grid.hpp"
