#include "heron/cli/answer_stream.h"

namespace heron::cli {

Answer stream_answer(const ApiClient& client, const std::string& path, nlohmann::json body,
                     AnswerPrinter& printer, const std::atomic<bool>& cancel) {
  body["stream"] = true;
  Answer answer;
  auto on_line = [&](const nlohmann::json& line) {
    std::string piece;
    if (line.contains("response") && line["response"].is_string()) {
      piece = line["response"].get<std::string>();
    } else if (line.contains("message") && line["message"].is_object()) {
      piece = line["message"].value("content", "");
    }
    answer.text += piece;
    printer.write(piece);
    if (line.value("done", false)) answer.final_line = line;
  };
  answer.cancelled = !client.stream(path, body, on_line, cancel);
  printer.flush();
  return answer;
}

}  // namespace heron::cli
