// The chat message parser both APIs share, and the template choice of chat_prompt.h.
#include <gtest/gtest.h>

#include "heron/core/error.h"
#include "heron/http/http_error.h"
#include "heron/server/chat_input.h"
#include "heron/template/chat_prompt.h"

using heron::http::HttpError;
using heron::server::parse_chat_input;
using ojson = nlohmann::ordered_json;

namespace {

std::string error_of(const std::string& body) {
  try {
    parse_chat_input(body);
  } catch (const HttpError& e) {
    EXPECT_EQ(e.status(), 400);
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(ChatInput, OpenAIAndOllamaShapesGiveTheSameMessages) {
  const auto openai = parse_chat_input(R"({"messages": [
    {"role": "developer", "content": [{"type": "text", "text": "Be "}, {"type": "text", "text": "brief."}]},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\"z\": 1, \"a\": \"x\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"b": 1, "a": 2}}}]})");
  const auto ollama = parse_chat_input(R"({"messages": [
    {"role": "system", "content": "Be brief."},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1",
      "function": {"name": "get_weather", "arguments": {"z": 1, "a": "x"}}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "sunny", "images": []}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"b": 1, "a": 2}}}]})");
  EXPECT_EQ(openai.messages, ollama.messages);
  EXPECT_EQ(openai.messages.dump(),
            R"([{"role":"system","content":"Be brief."},)"
            R"({"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function",)"
            R"("function":{"name":"get_weather","arguments":{"z":1,"a":"x"}}}]},)"
            R"({"role":"tool","content":"sunny","tool_call_id":"c1"}])");
  // Client key order survives (tojson prints it).
  EXPECT_EQ(
      openai.tools.dump(),
      R"([{"type":"function","function":{"name":"get_weather","parameters":{"b":1,"a":2}}}])");
  EXPECT_TRUE(openai.documents.is_null());
  EXPECT_TRUE(parse_chat_input(R"({"messages": [], "tools": []})").tools.is_null());
}

TEST(ChatInput, BadMessagesAre400sNamingTheField) {
  EXPECT_NE(error_of(R"({"messages": [{"role": "robot"}]})").find("messages[0].role"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"messages": [{"content": "x"}]})").find("messages[0].role is required"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"messages": [{"role": "user", "images": ["aGk="]}]})")
                .find("images are not supported"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"messages": [{"role": "user", "content": [{"type": "image_url",
               "image_url": {"url": "data:,"}}]}]})")
                .find("messages[0].content[0]: images are not supported"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"messages": [{"role": "assistant", "tool_calls": [{"function":
               {"name": "f", "arguments": "{not json"}}]}]})")
                .find("messages[0].tool_calls[0].function.arguments is not valid JSON"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"messages": [{"role": "assistant", "tool_calls": [{"function":
               {"name": "f", "arguments": "[1]"}}]}]})")
                .find("must be a JSON object"),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"messages": [{"role": "user", "content": 5}]})").find("messages[0].content"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"messages": "hi"})").find("messages must be an array"), std::string::npos);
  EXPECT_NE(error_of(R"({"tools": [1]})").find("tools[0] must be an object"), std::string::npos);
}

TEST(ChatPrompt, TemplateChoiceFollowsTransformers) {
  using heron::chat::ChatFormat;
  using heron::chat::select_template;
  ChatFormat named;
  named.templates = {{"default", "D"}, {"tool_use", "T"}, {"rag", "R"}};
  EXPECT_EQ(select_template(named, false), "D");
  EXPECT_EQ(select_template(named, true), "T");
  EXPECT_EQ(select_template(named, true, std::string("O")), "O");
  named.templates.erase("default");
  EXPECT_THROW(select_template(named, false), heron::Error);
  EXPECT_EQ(select_template(named, true), "T");
  // Round trip through the runner's /status.
  named.bos_token = "<s>";
  const auto back = ChatFormat::from_json(named.to_json());
  EXPECT_EQ(back.templates, named.templates);
  EXPECT_EQ(back.bos_token, "<s>");
  EXPECT_FALSE(back.eos_token.has_value());
}

TEST(ChatPrompt, FallbacksWithoutATemplate) {
  heron::chat::ChatFormat format;
  heron::chat::ChatInput input;
  input.messages =
      ojson::parse(R"([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])");
  EXPECT_EQ(heron::chat::render_chat(format, input), "S\n\nU");
  // A tokenizer that adds BOS gets it in the text, which is encoded without specials.
  format.bos_token = "<bos>";
  format.adds_bos = true;
  EXPECT_EQ(heron::chat::render_chat(format, input), "<bos>S\n\nU");
  EXPECT_TRUE(heron::chat::ChatFormat::from_json(format.to_json()).adds_bos);
  format.has_chatml_tokens = true;
  EXPECT_EQ(
      heron::chat::render_chat(format, input),
      "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n");
  input.extra["messages"] = 1;
  EXPECT_THROW(heron::chat::render_chat(format, input), heron::Error);
}

TEST(ChatPrompt, RaiseExceptionMessageReachesTheCaller) {
  heron::chat::ChatFormat format;
  format.templates["default"] = "{{ raise_exception('Only user and assistant roles!') }}";
  heron::chat::ChatInput input;
  try {
    heron::chat::render_chat(format, input);
    FAIL() << "no error";
  } catch (const heron::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Only user and assistant roles!"), std::string::npos);
  }
}

TEST(ChatInput, MessageCountLimitNamesTheField) {
  nlohmann::json body = {{"messages", nlohmann::json::array()}};
  for (size_t i = 0; i <= heron::server::kMaxMessages; ++i) {
    body["messages"].push_back({{"role", "user"}, {"content", "hi"}});
  }
  try {
    heron::server::parse_chat_input(body.dump());
    ADD_FAILURE() << "no error";
  } catch (const heron::http::HttpError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(std::string(e.what()).rfind("messages holds 4097 messages", 0), 0u) << e.what();
  }
  body["messages"].erase(body["messages"].size() - 1);
  EXPECT_EQ(heron::server::parse_chat_input(body.dump()).messages.size(),
            heron::server::kMaxMessages);
}
