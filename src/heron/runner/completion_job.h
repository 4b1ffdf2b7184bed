#pragma once
// One /completion request as the MLX thread sees it, and what it streams back.
#include <atomic>
#include <string>
#include <vector>

#include "heron/core/channel.h"
#include "heron/engine/emitter.h"
#include "heron/engine/generator.h"

namespace heron::runner {

struct CompletionEvent {
  enum class Kind { Piece, Done, Error };
  Kind kind = Kind::Piece;
  engine::Piece piece;          // Piece
  engine::GenerateStats stats;  // Done
  int status = 0;               // Error
  std::string message;          // Error
};

struct CompletionJob {
  std::vector<int> prompt;
  engine::GenerateOptions options;
  std::vector<std::string> stop;
  std::atomic<bool> cancelled{false};  // set by the HTTP thread when the client leaves
  Channel<CompletionEvent> events;     // ends with one Done or Error event
};

}  // namespace heron::runner
