#include "heron/chat_output/output_splitter.h"

#include <algorithm>
#include <utility>

#include "heron/chat_output/space.h"

namespace heron::chat_output {

namespace {

// The longest end of `text` that `marker` starts with (short of the whole marker).
size_t partial_marker(std::string_view text, std::string_view marker) {
  for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n) {
    if (text.substr(text.size() - n) == marker.substr(0, n)) return n;
  }
  return 0;
}

}  // namespace

OutputSplitter::OutputSplitter(const OutputFormat& format, ToolNames tools)
    : tools_(std::move(tools)),
      think_open_(format.think_open),
      think_close_(format.think_close),
      state_(!format.thinks              ? State::Content
             : format.starts_in_thinking ? State::Thinking
                                         : State::Start),
      skip_space_(state_ == State::Thinking) {
  if (format.tools == ToolSyntax::Harmony) harmony_.emplace(tools_);
  if (!tools_.empty()) syntax_ = call_syntax(format.tools);
}

std::vector<OutputEvent> OutputSplitter::feed(std::string_view text) {
  if (harmony_) {
    harmony_->feed(text, false, out_);
  } else {
    buf_ += text;
    run(false);
  }
  return std::exchange(out_, {});
}

std::vector<OutputEvent> OutputSplitter::finish() {
  if (harmony_) {
    harmony_->feed("", true, out_);
  } else {
    run(true);
  }
  return std::exchange(out_, {});
}

void OutputSplitter::run(bool final) {
  for (;;) {
    bool changed = false;
    switch (state_) {
      case State::Start:
        changed = start(final);
        break;
      case State::Thinking:
        changed = thinking(final);
        break;
      case State::Content:
        changed = content(final);
        break;
      case State::Call:
        changed = call(final);
        break;
    }
    if (!changed) return;
  }
}

void OutputSplitter::emit(OutputEvent::Kind kind, std::string_view text) {
  if (text.empty()) return;
  if (!out_.empty() && out_.back().kind == kind) {
    out_.back().text += text;
  } else {
    out_.push_back({kind, std::string(text), {}});
  }
}

void OutputSplitter::emit_content(std::string_view text) {
  if (!is_blank(text)) content_started_ = true;
  emit(OutputEvent::Kind::Content, text);
}

bool OutputSplitter::drop_leading_space() {
  if (!skip_space_) return true;
  const size_t first = buf_.find_first_not_of(kSpace);
  buf_.erase(0, first == std::string::npos ? buf_.size() : first);
  if (buf_.empty()) return false;
  skip_space_ = false;
  return true;
}

// Before anything: does the answer open with <think>?
bool OutputSplitter::start(bool final) {
  const size_t first = buf_.find_first_not_of(kSpace);
  const std::string_view rest =
      first == std::string::npos ? std::string_view() : std::string_view(buf_).substr(first);
  if (rest.starts_with(think_open_)) {
    buf_.erase(0, first + think_open_.size());
    state_ = State::Thinking;
    skip_space_ = true;
    return true;
  }
  if (!final && think_open_.starts_with(rest)) return false;  // "", "<", "<th", ...
  state_ = State::Content;
  return true;
}

bool OutputSplitter::thinking(bool final) {
  if (!drop_leading_space()) return false;
  const size_t close = buf_.find(think_close_);
  if (close != std::string::npos) {
    emit(OutputEvent::Kind::Thinking, trim_end(std::string_view(buf_).substr(0, close)));
    buf_.erase(0, close + think_close_.size());
    state_ = State::Content;
    skip_space_ = true;  // the blank line templates put after </think>
    return true;
  }
  if (final) {
    emit(OutputEvent::Kind::Thinking, trim_end(buf_));
    buf_.clear();
    return false;
  }
  // Hold a possible "</think>" start and the whitespace before it (dropped if it closes).
  size_t keep = buf_.size() - partial_marker(buf_, think_close_);
  while (keep > 0 && kSpace.find(buf_[keep - 1]) != std::string_view::npos) --keep;
  emit(OutputEvent::Kind::Thinking, std::string_view(buf_).substr(0, keep));
  buf_.erase(0, keep);
  return false;
}

bool OutputSplitter::content(bool final) {
  if (!drop_leading_space()) return false;
  const std::string_view text = buf_;
  size_t at = std::string::npos;
  for (size_t i = 0; i < syntax_.markers.size(); ++i) {
    const auto& m = syntax_.markers[i];
    size_t p = std::string::npos;
    if (!m.answer_start_only) {
      p = text.find(m.open);
    } else if (!content_started_) {
      const size_t first = text.find_first_not_of(kSpace);
      if (first != std::string::npos && text.substr(first).starts_with(m.open)) p = first;
    }
    if (p < at) {
      at = p;
      marker_ = i;
    }
  }
  if (at != std::string::npos) {
    const auto before = text.substr(0, at);
    if (content_started_ || !is_blank(before)) emit_content(before);  // not a lone indent
    const auto& m = syntax_.markers[marker_];
    buf_.erase(0, at + (m.open_in_body ? 0 : m.open.size()));
    state_ = State::Call;
    return true;
  }
  size_t hold = 0;
  if (!final) {
    for (const auto& m : syntax_.markers) {
      if (!m.answer_start_only) hold = std::max(hold, partial_marker(text, m.open));
    }
  }
  const auto ready = text.substr(0, text.size() - hold);
  if (!content_started_ && !syntax_.markers.empty() && is_blank(ready)) {
    // Whitespace before anything else: held, and dropped if a call follows.
    if (final) {
      if (!called_) emit_content(text);
      buf_.clear();
    }
    return false;
  }
  emit_content(ready);
  buf_.erase(0, ready.size());
  return false;
}

bool OutputSplitter::call(bool final) {
  const auto& m = syntax_.markers[marker_];
  if (!m.close.empty()) {
    const size_t close = buf_.find(m.close);
    if (close != std::string::npos) {
      end_call(std::string_view(buf_).substr(0, close), m.close);
      buf_.erase(0, close + m.close.size());
      state_ = State::Content;
      return true;
    }
  }
  if (!final) return false;
  end_call(buf_, "");
  buf_.clear();
  state_ = State::Content;
  return false;
}

void OutputSplitter::end_call(std::string_view body, std::string_view close) {
  const auto& m = syntax_.markers[marker_];
  if (auto calls = syntax_.parse(body, tools_)) {
    for (auto& c : *calls) out_.push_back({OutputEvent::Kind::Call, {}, std::move(c)});
    called_ = true;
    skip_space_ = true;  // the newline between calls
    return;
  }
  // Not a call after all: the model's text, as it wrote it.
  std::string raw = m.open_in_body ? std::string() : m.open;
  raw.append(body).append(close);
  emit_content(raw);
}

SplitOutput split_output(const OutputFormat& format, ToolNames tools, std::string_view text) {
  OutputSplitter splitter(format, std::move(tools));
  auto events = splitter.feed(text);
  for (auto& e : splitter.finish()) events.push_back(std::move(e));
  SplitOutput out;
  for (auto& e : events) {
    switch (e.kind) {
      case OutputEvent::Kind::Thinking:
        out.thinking += e.text;
        break;
      case OutputEvent::Kind::Content:
        out.content += e.text;
        break;
      case OutputEvent::Kind::Call:
        out.calls.push_back(std::move(e.call));
        break;
    }
  }
  return out;
}

}  // namespace heron::chat_output
