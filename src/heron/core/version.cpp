#include "heron/core/version.h"

namespace heron {

const char* version() { return HERON_VERSION; }

}  // namespace heron
