// safetensors header reader (the JSON header, offsets and dtypes of an untrusted file).
#include "fuzz_file.h"
#include "heron/core/error.h"
#include "heron/io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static heron::fuzz::MemFile file;
  try {
    heron::io::read_safetensors_header(file.write(data, size));
  } catch (const heron::Error&) {
  }
  return 0;
}
