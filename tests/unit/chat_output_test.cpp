// chat_output/: reading tool calls and reasoning back out of a model's text. The outputs
// below are written the way each family's chat template shows its model answering (the
// exact markers and JSON shapes the templates render for past calls); every case is also
// fed in two pieces cut at each byte boundary and one byte at a time, which must settle
// the same events as the whole text at once.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "heron/chat_output/output_format.h"
#include "heron/chat_output/output_splitter.h"
#include "tokenizer_test_util.h"

namespace {

using namespace heron::chat_output;
using Kind = OutputEvent::Kind;
using ojson = nlohmann::ordered_json;

const ToolNames kTools = {"get_weather", "get_time"};

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string qwen3_template() {
  return tokenizer_test::zstd_json(tokenizer_test::kRealTokenizers / "qwen3" /
                                   "tokenizer_config.json.zst")["chat_template"];
}

std::string ollama_template(const std::string& name) {
  return read_text(std::filesystem::path(HERON_FIXTURES) / "templates" / "ollama" / name);
}

// Mistral's templates render past calls as "[TOOL_CALLS] [" + each call's JSON + "]"; this
// is that part alone (no Mistral template is among the fixtures).
const std::string kMistralStyleTemplate =
    "{%- for message in messages %}{%- if message.tool_calls %}{{- '[TOOL_CALLS] [' }}"
    "{%- for c in message.tool_calls %}{{- c.function|tojson }}{%- endfor %}{{- ']' + eos_token }}"
    "{%- else %}{{- '[INST] ' + message.content + '[/INST]' }}{%- endif %}{%- endfor %}";

OutputFormat hermes() {
  return {ToolSyntax::Hermes, true, false};
}
OutputFormat llama3() {
  return {ToolSyntax::Llama3, false, false};
}
OutputFormat mistral() {
  return {ToolSyntax::Mistral, false, false};
}
OutputFormat with_tools(ToolSyntax tools) {
  return {tools, false, false};
}

std::string deepseek_v3_template() {
  return tokenizer_test::zstd_json(tokenizer_test::kRealTokenizers / "deepseek_v3" /
                                   "tokenizer_config.json.zst")["chat_template"];
}

ToolCall call(const std::string& name, const std::string& args) {
  return {name, ojson::parse(args)};
}

OutputEvent text(Kind kind, std::string s) {
  return {kind, std::move(s), {}};
}
OutputEvent content(std::string s) {
  return text(Kind::Content, std::move(s));
}
OutputEvent thinking(std::string s) {
  return text(Kind::Thinking, std::move(s));
}
OutputEvent called(const std::string& name, const std::string& args) {
  return {Kind::Call, {}, call(name, args)};
}

// Adjacent text of one kind merged: how a client sees the stream.
void append(std::vector<OutputEvent>& all, std::vector<OutputEvent> more) {
  for (auto& e : more) {
    if (e.kind != Kind::Call && !all.empty() && all.back().kind == e.kind) {
      all.back().text += e.text;
    } else if (e.kind == Kind::Call || !e.text.empty()) {
      all.push_back(std::move(e));
    }
  }
}

std::vector<OutputEvent> run(const OutputFormat& f, const ToolNames& tools,
                             const std::vector<std::string>& pieces) {
  OutputSplitter s(f, tools);
  std::vector<OutputEvent> all;
  for (const auto& p : pieces) append(all, s.feed(p));
  append(all, s.finish());
  return all;
}

// The whole text, then every two-piece cut, then byte by byte: all the same events.
void expect_events(const OutputFormat& f, const ToolNames& tools, const std::string& out,
                   const std::vector<OutputEvent>& want) {
  ASSERT_EQ(run(f, tools, {out}), want) << "whole: " << out;
  for (size_t cut = 0; cut <= out.size(); ++cut) {
    ASSERT_EQ(run(f, tools, {out.substr(0, cut), out.substr(cut)}), want)
        << "cut at " << cut << ": " << out;
  }
  std::vector<std::string> bytes;
  for (char c : out) bytes.emplace_back(1, c);
  ASSERT_EQ(run(f, tools, bytes), want) << "byte by byte: " << out;
}

// --- choosing the syntax from the template -------------------------------------------

TEST(ChatOutputFormat, Qwen3TemplateIsHermesAndThinks) {
  const auto f = detect_output_format(qwen3_template(), "<|im_start|>assistant\n");
  EXPECT_EQ(f.tools, ToolSyntax::Hermes);
  EXPECT_TRUE(f.thinks);
  EXPECT_FALSE(f.starts_in_thinking);
}

TEST(ChatOutputFormat, PromptThatOpensThinkStartsInsideIt) {
  EXPECT_TRUE(detect_output_format(qwen3_template(), "<|im_start|>assistant\n<think>\n")
                  .starts_in_thinking);
  // Qwen3's enable_thinking=false closes it in the prompt.
  EXPECT_FALSE(
      detect_output_format(qwen3_template(), "<|im_start|>assistant\n<think>\n\n</think>\n\n")
          .starts_in_thinking);
}

TEST(ChatOutputFormat, Llama3TemplateIsLlama3) {
  const auto f = detect_output_format(ollama_template("ollama-index-24-llama3-instruct.jinja"), "");
  EXPECT_EQ(f.tools, ToolSyntax::Llama3);
  EXPECT_FALSE(f.thinks);
}

TEST(ChatOutputFormat, MistralTemplateIsMistral) {
  EXPECT_EQ(detect_output_format(kMistralStyleTemplate, "").tools, ToolSyntax::Mistral);
}

TEST(ChatOutputFormat, TemplatesWithoutCallsOrWithOtherSyntaxesHaveNone) {
  EXPECT_EQ(detect_output_format(ollama_template("ollama-index-00-chatml.jinja"), "").tools,
            ToolSyntax::None);
  EXPECT_EQ(
      detect_output_format(ollama_template("ollama-index-10-mistral-instruct.jinja"), "").tools,
      ToolSyntax::None);
}

TEST(ChatOutputFormat, XmlAndDeepSeekTemplates) {
  // <tool_call><function=NAME> (Qwen3-Coder's form) is not Hermes JSON; nor is GLM's.
  for (const char* name : {"ollama-testdata-qwen38_chat_template.jinja",
                           "ollama-testdata-nemotron35_chat_template.jinja2",
                           "ollama-testdata-nemotron3nano_chat_template.jinja2"}) {
    EXPECT_EQ(detect_output_format(ollama_template(name), "").tools, ToolSyntax::Qwen3Coder)
        << name;
  }
  EXPECT_TRUE(
      detect_output_format(ollama_template("ollama-testdata-qwen38_chat_template.jinja"), "")
          .thinks);
  for (const char* name : {"ollama-testdata-laguna_v2_chat_template.jinja2",
                           "ollama-testdata-laguna_v8_chat_template.jinja2"}) {
    EXPECT_EQ(detect_output_format(ollama_template(name), "").tools, ToolSyntax::Glm) << name;
  }
  EXPECT_EQ(detect_output_format(deepseek_v3_template(), "").tools, ToolSyntax::DeepSeek);
}

// --- Hermes / Qwen --------------------------------------------------------------------

TEST(HermesCalls, OneCall) {
  expect_events(hermes(), kTools,
                "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
                "</tool_call>",
                {called("get_weather", R"({"city": "Paris"})")});
}

TEST(HermesCalls, TextBeforeTwoCallsStaysContent) {
  expect_events(
      hermes(), kTools,
      "Let me check both.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
      "{\"city\": \"Paris\", \"unit\": \"c\"}}\n</tool_call>\n<tool_call>\n{\"name\": "
      "\"get_time\", \"arguments\": {}}\n</tool_call>",
      {content("Let me check both.\n"), called("get_weather", R"({"city": "Paris", "unit": "c"})"),
       called("get_time", "{}")});
}

TEST(HermesCalls, ThinkingThenCall) {
  expect_events(
      hermes(), kTools,
      "<think>\nThe user wants the weather.\n</think>\n\n<tool_call>\n{\"name\": "
      "\"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>",
      {thinking("The user wants the weather."), called("get_weather", R"({"city": "Oslo"})")});
}

TEST(HermesCalls, ArgumentsAsAJsonStringAndAnUnclosedCallAtTheEnd) {
  expect_events(hermes(), kTools,
                "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": "
                "\\\"Rome\\\"}\"}",
                {called("get_weather", R"({"city": "Rome"})")});
}

TEST(HermesCalls, MalformedCallsStayContentAsWritten) {
  const std::string bad_json =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }\n</tool_call>";
  expect_events(hermes(), kTools, bad_json, {content(bad_json)});
  const std::string unknown =
      "Sure.\n<tool_call>\n{\"name\": \"rm_rf\", \"arguments\": {}}\n</tool_call> done";
  expect_events(hermes(), kTools, unknown, {content(unknown)});
  const std::string bad_args =
      "<tool_call>{\"name\": \"get_time\", \"arguments\": [1, 2]}</tool_call>";
  expect_events(hermes(), kTools, bad_args, {content(bad_args)});
  const std::string unclosed = "<tool_call>\n{\"name\": \"get_time\", \"argu";
  expect_events(hermes(), kTools, unclosed, {content(unclosed)});
}

TEST(HermesCalls, LeadingSpaceBeforeAMalformedCallGoesTheSameWayStreamed) {
  // Found by fuzz_chat_output: streamed, the space went out before "<" could be a marker.
  expect_events(hermes(), kTools, " <tool_call>{\"name", {content("<tool_call>{\"name")});
}

TEST(HermesCalls, WithoutToolsNothingIsACall) {
  const std::string out =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>";
  expect_events(hermes(), {}, out, {content(out)});
}

TEST(HermesCalls, MarkerLookalikesAreNotHeldForever) {
  expect_events(hermes(), kTools, "a <tool_cal> b <tool", {content("a <tool_cal> b <tool")});
}

// --- Llama 3.x -------------------------------------------------------------------------

TEST(Llama3Calls, BareJsonAnswer) {
  expect_events(llama3(), kTools,
                "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Lima\"}}",
                {called("get_weather", R"({"city": "Lima"})")});
}

TEST(Llama3Calls, PythonTagWithTwoCalls) {
  expect_events(llama3(), kTools,
                "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"a;b\"}}; "
                "{\"name\": \"get_time\", \"parameters\": {}}",
                {called("get_weather", R"({"city": "a;b"})"), called("get_time", "{}")});
}

TEST(Llama3Calls, JsonThatIsNoCallAndJsonAfterTextStayContent) {
  const std::string answer = "{\"answer\": 42}";
  expect_events(llama3(), kTools, answer, {content(answer)});
  const std::string later =
      "Here: {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Lima\"}}";
  expect_events(llama3(), kTools, later, {content(later)});
  const std::string bad = "<|python_tag|>brave_search.call(query=\"x\")";
  expect_events(llama3(), kTools, bad, {content(bad)});
}

// --- Mistral ---------------------------------------------------------------------------

TEST(MistralCalls, ArrayOfCalls) {
  expect_events(
      mistral(), kTools,
      "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Nice\"}}, "
      "{\"name\": \"get_time\", \"arguments\": {\"tz\": \"CET\"}}]",
      {called("get_weather", R"({"city": "Nice"})"), called("get_time", R"({"tz": "CET"})")});
}

TEST(MistralCalls, NamedCallsOfNewerTokenizers) {
  expect_events(mistral(), kTools,
                "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Nice\"}[TOOL_CALLS]get_time[ARGS]{}",
                {called("get_weather", R"({"city": "Nice"})"), called("get_time", "{}")});
}

TEST(MistralCalls, MalformedStaysContent) {
  const std::string out = "I will call it. [TOOL_CALLS] [{\"name\": \"get_weather\", ";
  expect_events(mistral(), kTools, out, {content(out)});
}

// --- Qwen3-Coder / Nemotron 3 XML -----------------------------------------------------

TEST(Qwen3CoderCalls, ParametersWithMultiLineAndJsonValues) {
  expect_events(
      with_tools(ToolSyntax::Qwen3Coder), kTools,
      "I'll look.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nNew York\n"
      "</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=note>\nline one\n"
      "line two\n</parameter>\n</function>\n</tool_call>",
      {content("I'll look.\n"),
       called("get_weather", R"({"city": "New York", "days": 3, "note": "line one\nline two"})")});
}

TEST(Qwen3CoderCalls, MalformedStaysContent) {
  const std::string out =
      "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</function>\n</tool_call>";
  expect_events(with_tools(ToolSyntax::Qwen3Coder), kTools, out, {content(out)});
  const std::string unknown = "<tool_call>\n<function=nope>\n</function>\n</tool_call>";
  expect_events(with_tools(ToolSyntax::Qwen3Coder), kTools, unknown, {content(unknown)});
}

// --- GLM-4.x ----------------------------------------------------------------------------

TEST(GlmCalls, KeyValueTags) {
  expect_events(
      with_tools(ToolSyntax::Glm), kTools,
      "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
      "<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>\n"
      "<tool_call>get_time</tool_call>",
      {called("get_weather", R"({"city": "Paris", "days": 2})"), called("get_time", "{}")});
}

TEST(GlmCalls, MalformedStaysContent) {
  const std::string out = "<tool_call>get_weather\n<arg_key>city</arg_key>\n</tool_call>";
  expect_events(with_tools(ToolSyntax::Glm), kTools, out, {content(out)});
}

// --- DeepSeek V3 / R1 / V3.1 ------------------------------------------------------------

TEST(DeepSeekCalls, V3CodeBlocksAndV31Json) {
  expect_events(with_tools(ToolSyntax::DeepSeek), kTools,
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
                "```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>"
                "function<｜tool▁sep｜>get_time\n```json\n{}\n```<｜tool▁call▁end｜>"
                "<｜tool▁calls▁end｜>",
                {called("get_weather", R"({"city": "Paris"})"), called("get_time", "{}")});
  expect_events(with_tools(ToolSyntax::DeepSeek), kTools,
                "Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
                "{\"city\": \"Rome\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                {content("Checking."), called("get_weather", R"({"city": "Rome"})")});
}

TEST(DeepSeekCalls, MalformedStaysContent) {
  const std::string out =
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
      "```json\n{\"city\": }\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
  expect_events(with_tools(ToolSyntax::DeepSeek), kTools, out, {content(out)});
}

// --- gpt-oss harmony ------------------------------------------------------------------

TEST(ChatOutputFormat, HarmonyFromChannelTokens) {
  // No gpt-oss template is among the fixtures: this is the part that renders a past call.
  const std::string harmony_style =
      "{{- '<|start|>assistant<|channel|>commentary to=functions.' + name + "
      "' <|constrain|>json<|message|>' + args + '<|call|>' }}";
  EXPECT_EQ(detect_output_format(harmony_style, "").tools, ToolSyntax::Harmony);
}

TEST(HarmonyOutput, ReasoningThenFinalAnswer) {
  expect_events(with_tools(ToolSyntax::Harmony), {},
                "<|channel|>analysis<|message|>User asks 2+2. Easy.<|end|><|start|>assistant"
                "<|channel|>final<|message|>2 + 2 = 4.",
                {thinking("User asks 2+2. Easy."), content("2 + 2 = 4.")});
}

TEST(HarmonyOutput, CallsInEitherHeaderOrder) {
  expect_events(with_tools(ToolSyntax::Harmony), kTools,
                "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant"
                "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
                "{\"city\": \"Paris\"}",
                {thinking("Need the weather."), called("get_weather", R"({"city": "Paris"})")});
  expect_events(with_tools(ToolSyntax::Harmony), kTools,
                "<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{}"
                "<|call|>",
                {called("get_time", "{}")});
}

TEST(HarmonyOutput, MalformedCallsAndPlainTextStayContent) {
  const std::string unknown =
      "<|channel|>commentary to=functions.rm <|constrain|>json<|message|>{\"path\": \"/\"}";
  expect_events(with_tools(ToolSyntax::Harmony), kTools, unknown, {content(unknown)});
  expect_events(with_tools(ToolSyntax::Harmony), kTools, "Just text <|end",
                {content("Just text <|end")});
}

// --- Gemma 4 -----------------------------------------------------------------------------

TEST(ChatOutputFormat, Gemma4Templates) {
  for (const char* name : {"ollama-testdata-gemma4_e2b_chat_template.jinja2",
                           "ollama-testdata-gemma4_31b_chat_template.jinja2"}) {
    EXPECT_EQ(detect_output_format(ollama_template(name), "").tools, ToolSyntax::Gemma4) << name;
  }
}

TEST(Thinking, Gemma4ThoughtChannel) {
  const auto f = detect_output_format(
      ollama_template("ollama-testdata-gemma4_e2b_chat_template.jinja2"), "<|turn>model\n");
  ASSERT_TRUE(f.thinks);
  EXPECT_FALSE(f.starts_in_thinking);
  expect_events(
      f, kTools,
      "<|channel>thought\nThe user wants weather.\n<channel|>Checking.<|tool_call>call:"
      "get_time{}<tool_call|>",
      {thinking("The user wants weather."), content("Checking."), called("get_time", "{}")});
  // After a tool response the template opens the channel in the prompt.
  EXPECT_TRUE(
      detect_output_format(ollama_template("ollama-testdata-gemma4_e2b_chat_template.jinja2"),
                           "<|channel>thought\n")
          .starts_in_thinking);
}

TEST(Gemma4Calls, TemplateNotationBecomesJson) {
  expect_events(
      with_tools(ToolSyntax::Gemma4), kTools,
      "Checking.<|tool_call>call:get_weather{city:<|\"|>Paris, France<|\"|>,days:3,"
      "opts:{metric:true,tags:[<|\"|>a<|\"|>,null]}}<tool_call|><|tool_call>call:"
      "get_time{}<tool_call|>",
      {content("Checking."),
       called("get_weather", R"({"city": "Paris, France", "days": 3, "opts": {"metric": true,)"
                             R"( "tags": ["a", null]}})"),
       called("get_time", "{}")});
}

TEST(Gemma4Calls, MalformedStaysContent) {
  for (const std::string out :
       {"<|tool_call>call:get_weather{city:<|\"|>Paris}<tool_call|>",
        "<|tool_call>call:get_weather{city:Paris}<tool_call|>",
        "<|tool_call>call:nope{}<tool_call|>", "<|tool_call>get_time{}<tool_call|>"}) {
    expect_events(with_tools(ToolSyntax::Gemma4), kTools, out, {content(out)});
  }
}

// --- thinking ----------------------------------------------------------------------------

TEST(Thinking, SeparatedFromTheAnswer) {
  expect_events(hermes(), {}, "<think>\nStep one.\n\nStep two.\n</think>\n\nThe answer is 4.",
                {thinking("Step one.\n\nStep two."), content("The answer is 4.")});
}

TEST(Thinking, PromptOpenedThinking) {
  expect_events({ToolSyntax::None, true, true}, {}, "Hmm, 2+2.\n</think>\n\n4",
                {thinking("Hmm, 2+2."), content("4")});
}

TEST(Thinking, AnswerWithoutThinkingAndUnclosedThinking) {
  expect_events(hermes(), {}, "  <thin air>", {content("  <thin air>")});
  expect_events(hermes(), {}, "<think>\nstill going", {thinking("still going")});
  // A template that does not think leaves the tags in the content.
  expect_events(llama3(), {}, "<think>x</think>y", {content("<think>x</think>y")});
}

// --- streaming holds back only what could be a marker --------------------------------

TEST(OutputSplitter, StreamsTextBeforeACallAndHoldsOnlyAMarkerPrefix) {
  OutputSplitter s(hermes(), kTools);
  EXPECT_EQ(s.feed("<think>\nwhy"), std::vector<OutputEvent>{thinking("why")});
  EXPECT_EQ(s.feed(" not\n</thi"), std::vector<OutputEvent>{thinking(" not")});
  EXPECT_EQ(s.feed("nk>\n\nSure <tool"), std::vector<OutputEvent>{content("Sure ")});
  EXPECT_EQ(s.feed("_call>{\"name\": \"get_time\", "), std::vector<OutputEvent>{});
  EXPECT_EQ(s.feed("\"arguments\": {}}</tool_call>"),
            std::vector<OutputEvent>{called("get_time", "{}")});
  EXPECT_EQ(s.finish(), std::vector<OutputEvent>{});
}

TEST(ToolCall, ArgumentsWithInvalidUtf8DumpWithoutThrowing) {
  // Found by fuzz_chat_output: a GLM argument value ending in a lone lead byte.
  const auto events = run(with_tools(ToolSyntax::Glm), kTools,
                          {"<tool_call>get_time\n<arg_key>a</arg_key>\n<arg_value>x\xd4"
                           "</arg_value>\n</tool_call>"});
  ASSERT_EQ(events.size(), 1U);
  ASSERT_EQ(events[0].kind, Kind::Call);
  EXPECT_EQ(events[0].call.arguments_json(), "{\"a\":\"x\xef\xbf\xbd\"}");
}

TEST(ToolNames, FromOpenAIAndBareTools) {
  const auto tools = ojson::parse(
      R"([{"type": "function", "function": {"name": "a"}}, {"name": "b"}, 3, {"function": 1}])");
  EXPECT_EQ(tool_names(tools), (ToolNames{"a", "b"}));
  EXPECT_TRUE(tool_names(nullptr).empty());
}

}  // namespace
