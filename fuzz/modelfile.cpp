// The Modelfile parser (`heron create -f`, /api/create's `modelfile` field): any text
// gives a Modelfile or a heron::Error naming the line, and what it gives round-trips.
#include "heron/store/modelfile.h"
#include "heron/core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto mf = heron::store::parse_modelfile(text, "Modelfile", /*require_from=*/false);
    (void)heron::store::ModelSettings::from_json(mf.settings.to_json());
  } catch (const heron::Error&) {
  }
  return 0;
}
