// Forwarding header: gorge/flow.hpp moved to gorge/drainage/flow.hpp (this path keeps compiling).
#pragma once
#include "drainage/flow.hpp"
