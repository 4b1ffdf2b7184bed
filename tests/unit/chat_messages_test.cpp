// Chat messages from Ollama and OpenAI bodies: the count limit and field-by-field errors.
#include <gtest/gtest.h>

#include "heron/core/error.h"
#include "heron/server/chat_messages.h"

TEST(ChatMessages, CountLimitNamesTheField) {
  auto body = nlohmann::json::object();
  body["messages"] = nlohmann::json::array();
  for (size_t i = 0; i <= heron::server::kMaxMessages; ++i) {
    body["messages"].push_back({{"role", "user"}, {"content", "hi"}});
  }
  for (auto parse : {heron::server::parse_ollama_messages, heron::server::parse_openai_messages}) {
    try {
      parse(body);
      ADD_FAILURE() << "no error";
    } catch (const heron::Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("messages holds 4097 messages", 0), 0u) << e.what();
    }
  }
  body["messages"].erase(body["messages"].size() - 1);
  EXPECT_EQ(heron::server::parse_ollama_messages(body).size(), heron::server::kMaxMessages);
}

TEST(ChatMessages, OpenAIContentPartsNameTheFieldAtFault) {
  auto error = [](const char* messages) {
    try {
      heron::server::parse_openai_messages(
          nlohmann::json::parse(std::string(R"({"messages": )") + messages + "}"));
    } catch (const heron::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error(R"([{"role": "user", "content": [{"type": 2}]}])"),
            "messages[0].content[0].type must be a string, got number");
  EXPECT_EQ(error(R"([{"role": "user", "content": [7]}])"),
            "messages[0].content[0] must be an object");
  EXPECT_EQ(error(R"([{"role": "user", "content": [{"type": "image_url"}]}])"),
            "messages[0].content: only text parts are supported");
  EXPECT_EQ(error(R"([{"role": "user", "content": [{"type": "text", "text": 1}]}])"),
            "messages[0].content[0].text must be a string, got number");
  const auto ok = heron::server::parse_openai_messages(nlohmann::json::parse(
      R"({"messages": [{"role": "developer", "content": [{"type": "text", "text": "a"},
                                                           {"type": "text", "text": "b"}]}]})"));
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].role, "system");
  EXPECT_EQ(ok[0].content, "ab");
}
