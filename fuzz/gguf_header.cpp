// GGUF header reader, and the tokenizer built from its metadata (what a GGUF model
// load does before MLX reads a byte).
#include "fuzz_file.h"
#include "heron/core/error.h"
#include "heron/io/gguf.h"
#include "heron/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static heron::fuzz::MemFile file;
  try {
    const auto header = heron::io::read_gguf_header(file.write(data, size));
    if (header.metadata.contains("tokenizer.ggml.model")) {
      auto tok = heron::tokenizer::Tokenizer::from_gguf_metadata(header.metadata);
      tok->encode("Hello world! <|im_start|> 123 \xe2\x96\x81x\xff");
    }
  } catch (const heron::Error&) {
  }
  return 0;
}
