#pragma once
// Streams one generate or chat answer to the screen and keeps what came.
#include <atomic>
#include <string>

#include <nlohmann/json.hpp>

#include "heron/cli/answer_printer.h"
#include "heron/cli/api_client.h"

namespace heron::cli {

struct Answer {
  std::string text;
  nlohmann::json final_line;  // the "done" line with the timings
  bool cancelled = false;
};

// POSTs `body` (with "stream": true) to `path` (/api/generate or /api/chat) and prints
// each piece through `printer` until the done line, or until `cancel` turns true.
Answer stream_answer(const ApiClient& client, const std::string& path, nlohmann::json body,
                     AnswerPrinter& printer, const std::atomic<bool>& cancel);

}  // namespace heron::cli
