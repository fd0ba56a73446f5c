// Forwarding header: gorge/depression_fill.hpp moved to gorge/drainage/depression_fill.hpp (this path keeps compiling).
#pragma once
#include "drainage/depression_fill.hpp"
