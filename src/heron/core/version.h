#pragma once

namespace heron {

const char* version();

}  // namespace heron
