// Forwarding header: gorge/droplet.hpp moved to gorge/erosion/droplet.hpp (this path keeps compiling).
#pragma once
#include "erosion/droplet.hpp"
