#include "heron/chat_output/harmony_reader.h"

#include <algorithm>
#include <array>

#include "heron/chat_output/output_splitter.h"

namespace heron::chat_output {

namespace {

constexpr std::string_view kStart = "<|start|>";
constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kMessage = "<|message|>";
// What ends a message body; <|call|> and <|return|> are end-of-turn tokens the runner may
// already have stopped at.
constexpr std::array<std::string_view, 4> kBodyEnds = {"<|end|>", "<|call|>", "<|return|>", kStart};

// The word after `key` in `header` (up to a space or the next special token).
std::string word_after(std::string_view header, std::string_view key) {
  const size_t at = header.find(key);
  if (at == std::string_view::npos) return {};
  const auto rest = header.substr(at + key.size());
  return std::string(rest.substr(0, std::min(rest.find(' '), rest.find("<|"))));
}

void push_text(std::vector<OutputEvent>& out, OutputEvent::Kind kind, std::string_view text) {
  if (text.empty()) return;
  if (!out.empty() && out.back().kind == kind && kind != OutputEvent::Kind::Call) {
    out.back().text += text;
  } else {
    out.push_back({kind, std::string(text), {}});
  }
}

}  // namespace

void HarmonyReader::feed(std::string_view text, bool final, std::vector<OutputEvent>& out) {
  buf_ += text;
  while (in_body_ ? body(final, out) : header(final, out)) {
  }
}

bool HarmonyReader::header(bool final, std::vector<OutputEvent>& out) {
  if (buf_.empty()) return false;
  // Text that does not begin like a header is a plain answer (a model off its format).
  const std::string_view head = std::string_view(buf_).substr(0, 2);
  if (head != std::string_view("<|").substr(0, head.size())) {
    in_body_ = true;
    target_ = Target::Content;
    header_.clear();
    return true;
  }
  const size_t message = buf_.find(kMessage);
  if (message == std::string::npos) {
    if (final) {
      push_text(out, OutputEvent::Kind::Content, buf_);
      buf_.clear();
    }
    return false;
  }
  header_ = buf_.substr(0, message + kMessage.size());
  const std::string channel = word_after(header_, kChannel);
  recipient_ = word_after(header_, "to=");
  if (recipient_.starts_with("functions.")) recipient_.erase(0, 10);
  target_ = !recipient_.empty()     ? Target::Call
            : channel == "analysis" ? Target::Thinking
                                    : Target::Content;
  buf_.erase(0, header_.size());
  in_body_ = true;
  return true;
}

bool HarmonyReader::body(bool final, std::vector<OutputEvent>& out) {
  size_t end = std::string::npos;
  size_t end_size = 0;
  for (const auto marker : kBodyEnds) {
    const size_t at = buf_.find(marker);
    if (at < end) {
      end = at;
      end_size = marker == kStart ? 0 : marker.size();  // <|start|> opens the next header
    }
  }
  const bool ended = end != std::string::npos || final;
  const std::string_view text = std::string_view(buf_).substr(0, std::min(end, buf_.size()));
  if (target_ == Target::Call) {
    if (!ended) return false;
    auto arguments = parse_json(text);
    auto calls = arguments ? single_call(recipient_, *arguments, tools_) : std::nullopt;
    if (calls) {
      out.push_back({OutputEvent::Kind::Call, {}, std::move(calls->front())});
    } else {
      push_text(out, OutputEvent::Kind::Content, header_ + std::string(text));
    }
  } else {
    const auto kind =
        target_ == Target::Thinking ? OutputEvent::Kind::Thinking : OutputEvent::Kind::Content;
    size_t hold = 0;
    if (!ended) {  // a possible end marker's start
      for (const auto marker : kBodyEnds) {
        for (size_t n = std::min(text.size(), marker.size() - 1); n > hold; --n) {
          if (text.substr(text.size() - n) == marker.substr(0, n)) {
            hold = n;
            break;
          }
        }
      }
    }
    push_text(out, kind, text.substr(0, text.size() - hold));
    if (!ended) {
      buf_.erase(0, text.size() - hold);
      return false;
    }
  }
  buf_.erase(0, std::min(buf_.size(), end == std::string::npos ? buf_.size() : end + end_size));
  in_body_ = false;
  return !buf_.empty();
}

}  // namespace heron::chat_output
