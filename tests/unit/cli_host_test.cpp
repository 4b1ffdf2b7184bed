// $HERON_HOST: the address `heron serve` listens on and its clients call.
#include <gtest/gtest.h>

#include "heron/cli/args.h"
#include "heron/cli/host.h"

using heron::cli::parse_host;

TEST(CliHost, DefaultsToLoopbackPort11435) {
  const auto a = parse_host("");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 11435);
  EXPECT_EQ(a.url(), "http://127.0.0.1:11435");
}

TEST(CliHost, HostPortAndSchemeForms) {
  struct Case {
    const char* text;
    const char* host;
    int port;
  };
  for (const auto& c :
       {Case{"0.0.0.0", "0.0.0.0", 11435}, Case{"localhost:8080", "localhost", 8080},
        Case{":9000", "127.0.0.1", 9000}, Case{"http://example.org:1234/", "example.org", 1234}}) {
    const auto a = parse_host(c.text);
    EXPECT_EQ(a.host, c.host) << c.text;
    EXPECT_EQ(a.port, c.port) << c.text;
  }
  for (const char* bad : {"host:port", "host:70000", "host:-1", "host:12x"}) {
    EXPECT_THROW(parse_host(bad), heron::cli::UsageError) << bad;
  }
}
