// Modelfile parser: instructions, quoting, case, comments, and errors that name the line.
#include <gtest/gtest.h>

#include "heron/core/error.h"
#include "heron/store/modelfile.h"

namespace heron::store {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_modelfile(text, "Modelfile");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Modelfile, ParsesEveryInstruction) {
  auto mf = parse_modelfile(
      "# a comment\n"
      "from ./models/llama\n"
      "Draft small:q4\n"
      "PARAMETER temperature 0.5\n"
      "parameter stop \"<|im_end|>\"\n"
      "PARAMETER stop \"say \\\"done\\\"\"\n"
      "PARAMETER num_ctx 4096\n"
      "TEMPLATE \"\"\"{% for m in messages %}\n{{ m.content }}\n{% endfor %}\"\"\"\n"
      "SYSTEM You are brief.\n"
      "MESSAGE user Hello there\n"
      "MESSAGE assistant \"\"\"Hi!\nHow can I help?\"\"\"\n"
      "LICENSE \"\"\"MIT\"\"\"\n"
      "\n   # indented comment\n");
  EXPECT_EQ(mf.from, "./models/llama");
  EXPECT_EQ(mf.draft, "small:q4");
  EXPECT_EQ(mf.settings.parameters["temperature"], 0.5);
  EXPECT_EQ(mf.settings.parameters["num_ctx"], 4096);
  EXPECT_EQ(mf.settings.parameters["stop"], nlohmann::json::array({"<|im_end|>", "say \"done\""}));
  EXPECT_EQ(mf.settings.chat_template, "{% for m in messages %}\n{{ m.content }}\n{% endfor %}");
  EXPECT_EQ(mf.settings.system, "You are brief.");
  ASSERT_EQ(mf.settings.messages.size(), 2u);
  EXPECT_EQ(mf.settings.messages[0].role, "user");
  EXPECT_EQ(mf.settings.messages[0].content, "Hello there");
  EXPECT_EQ(mf.settings.messages[1].content, "Hi!\nHow can I help?");
  EXPECT_EQ(mf.settings.licenses, std::vector<std::string>{"MIT"});
}

TEST(Modelfile, RoundTripsThroughRender) {
  auto mf = parse_modelfile(
      "FROM x\nPARAMETER top_k 7\nPARAMETER stop a\nPARAMETER stop b\nSYSTEM "
      "\"\"\"two\nlines\"\"\"\n"
      "MESSAGE user hi\n");
  auto again = parse_modelfile(render_modelfile(mf.from, mf.settings));
  EXPECT_EQ(again.settings.to_json(), mf.settings.to_json());
}

TEST(Modelfile, ErrorsNameTheLine) {
  EXPECT_EQ(error_of("FROM x\n\nBOGUS 1\n"), "Modelfile:3: unknown instruction 'bogus'");
  EXPECT_EQ(error_of("PARAMETER top_k 3\n"), "Modelfile: no FROM instruction");
  EXPECT_EQ(error_of("FROM a\nFROM b\n"), "Modelfile:2: FROM given twice");
  EXPECT_EQ(error_of("FROM a\nPARAMETER\n"), "Modelfile:2: PARAMETER needs a name and a value");
  EXPECT_EQ(error_of("FROM a\nPARAMETER top_k\n"), "Modelfile:2: PARAMETER top_k needs a value");
  EXPECT_EQ(error_of("FROM a\nPARAMETER colour blue\n"), "Modelfile:2: unknown parameter 'colour'");
  EXPECT_EQ(error_of("FROM a\nPARAMETER temperature hot\n"),
            "Modelfile:2: parameter temperature: 'hot' is not a number");
  EXPECT_NE(error_of("FROM a\nPARAMETER top_p 2\n").find("Modelfile:2: parameter top_p"),
            std::string::npos);
  EXPECT_NE(error_of("FROM a\nPARAMETER top_k 1.5\n").find("Modelfile:2: parameter top_k"),
            std::string::npos);
  EXPECT_EQ(error_of("FROM a\nSYSTEM \"\"\"never\nclosed\n"),
            "Modelfile:2: unterminated \"\"\" (opened here)");
  EXPECT_EQ(error_of("FROM a\nSYSTEM \"open\n"), "Modelfile:2: unterminated quoted string");
  EXPECT_EQ(error_of("FROM a\nSYSTEM \"x\" y\n"),
            "Modelfile:2: unexpected text after closing quote");
  EXPECT_EQ(error_of("FROM a\nMESSAGE tool hi\n"),
            "Modelfile:2: MESSAGE role must be system, user or assistant, got 'tool'");
  EXPECT_EQ(error_of("FROM a\nADAPTER x\n"), "Modelfile:2: ADAPTER is not supported");
  EXPECT_EQ(error_of("FROM\n"), "Modelfile:1: FROM needs a value");
  EXPECT_EQ(error_of("FROM a\nTEMPLATE \"\"\"x\"\"\" trailing\n"),
            "Modelfile:2: unexpected text after closing \"\"\"");
}

TEST(Modelfile, FromMayComeFromElsewhere) {
  auto mf = parse_modelfile("SYSTEM hi\n", "modelfile", /*require_from=*/false);
  EXPECT_EQ(mf.from, "");
  EXPECT_EQ(mf.settings.system, "hi");
}

TEST(Modelfile, LineNumbersCountMultiLineValues) {
  EXPECT_EQ(error_of("FROM a\nSYSTEM \"\"\"one\ntwo\nthree\"\"\"\nNOPE\n"),
            "Modelfile:5: unknown instruction 'nope'");
}

TEST(Modelfile, CrlfLinesAndTabs) {
  auto mf = parse_modelfile("FROM\tx\r\nPARAMETER\ttemperature\t0.1\r\n");
  EXPECT_EQ(mf.from, "x");
  EXPECT_EQ(mf.settings.parameters["temperature"], 0.1);
}

}  // namespace
}  // namespace heron::store
