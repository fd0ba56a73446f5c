// Forwarding header: gorge/biome.hpp moved to gorge/biome/biome.hpp (this path keeps compiling).
#pragma once
#include "biome/biome.hpp"
