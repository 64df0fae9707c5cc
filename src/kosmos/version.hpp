// Kosmos' version macros (KOSMOS_VERSION_*), now part of the generated kosmos/config.hpp.
#pragma once

#include <kosmos/config.hpp>
