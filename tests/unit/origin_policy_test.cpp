// Host and Origin checks against DNS rebinding and cross-site calls, with the cases
// Ollama's middleware (server/routes.go, envconfig) allows and refuses.
#include <gtest/gtest.h>

#include "heron/http/origin_policy.h"

using heron::http::host_allowed;
using heron::http::is_loopback_bind;
using heron::http::OriginPolicy;
using heron::http::wildcard_match;

TEST(WildcardMatch, StarsMatchAnyRunCaseInsensitively) {
  EXPECT_TRUE(wildcard_match("https://*.example.com", "https://app.example.com"));
  EXPECT_TRUE(wildcard_match("https://*.example.com", "HTTPS://A.B.Example.COM"));
  EXPECT_FALSE(wildcard_match("https://*.example.com", "https://example.com"));
  EXPECT_FALSE(wildcard_match("https://*.example.com", "https://app.example.com.evil"));
  EXPECT_TRUE(wildcard_match("*", ""));
  EXPECT_TRUE(wildcard_match("a*b*c", "aXXbYYbc"));
  EXPECT_FALSE(wildcard_match("a*b*c", "aXXbYYb"));
  EXPECT_TRUE(wildcard_match("exact", "exact"));
  EXPECT_FALSE(wildcard_match("exact", "exact2"));
  EXPECT_FALSE(wildcard_match("", "x"));
  // Many stars against a long miss must stay fast (no exponential backtracking).
  EXPECT_FALSE(wildcard_match(std::string(50, '*') + "b", std::string(100000, 'a')));
}

TEST(HostCheck, LoopbackBindAddresses) {
  EXPECT_TRUE(is_loopback_bind("127.0.0.1"));
  EXPECT_TRUE(is_loopback_bind("127.1.2.3"));
  EXPECT_TRUE(is_loopback_bind("localhost"));
  EXPECT_TRUE(is_loopback_bind("::1"));
  EXPECT_TRUE(is_loopback_bind("[::1]"));
  EXPECT_FALSE(is_loopback_bind("0.0.0.0"));  // every interface: clients use other names
  EXPECT_FALSE(is_loopback_bind("::"));
  EXPECT_FALSE(is_loopback_bind("192.168.1.5"));
}

TEST(HostCheck, NamesOfThisMachinePass) {
  for (const char* h : {"localhost", "localhost:11435", "LOCALHOST:1", "127.0.0.1", "127.0.0.1:80",
                        "127.9.9.9:5", "[::1]", "[::1]:11435", "0.0.0.0:11435", "[::]:1",
                        "app.localhost", "a.b.localhost:8080", "mybox", "mybox:11435", ""}) {
    EXPECT_TRUE(host_allowed(h, "mybox")) << h;
  }
}

TEST(HostCheck, OtherNamesAreRefused) {
  for (const char* h : {"evil.example", "evil.example:11435", "localhost.evil.example",
                        "127.0.0.1.nip.io", "10.0.0.1", "192.168.1.5:11435", "[2001:db8::1]:80",
                        "[::1", "mybox.evil", "localhostx", "0x7f000001"}) {
    EXPECT_FALSE(host_allowed(h, "mybox")) << h;
  }
  EXPECT_FALSE(host_allowed("somehost", ""));
}

TEST(OriginCheck, LocalWebOriginsOnAnyPort) {
  const OriginPolicy policy;
  for (const char* o :
       {"http://localhost", "https://localhost", "http://localhost:3000", "http://127.0.0.1:8080",
        "https://0.0.0.0:443", "HTTP://LOCALHOST:1", "app://anything", "file://",
        "tauri://localhost", "vscode-webview://1234abcd"}) {
    EXPECT_TRUE(policy.allowed(o)) << o;
  }
}

TEST(OriginCheck, ForeignOriginsAreRefused) {
  const OriginPolicy policy;
  for (const char* o : {"http://evil.example", "https://localhost.evil.example",
                        "http://localhost:3000.evil.example", "http://localhost:", "null",
                        "http://127.0.0.1.nip.io", "ftp://localhost", "http://localhost:99999x",
                        "chrome-extension://abc", ""}) {
    EXPECT_FALSE(policy.allowed(o)) << o;
  }
}

TEST(OriginCheck, ExtraOriginsFromTheEnvironmentWithWildcards) {
  const OriginPolicy policy(
      " 'https://*.example.com' , http://intranet:8080,,\"chrome-extension://*\"");
  EXPECT_TRUE(policy.allowed("https://app.example.com"));
  EXPECT_TRUE(policy.allowed("http://intranet:8080"));
  EXPECT_TRUE(policy.allowed("chrome-extension://abcdef"));
  EXPECT_FALSE(policy.allowed("http://intranet:8081"));
  EXPECT_FALSE(policy.allowed("https://example.org"));
  EXPECT_TRUE(policy.allowed("http://localhost:5173"));  // the defaults stay
  EXPECT_EQ(policy.patterns().front(), "https://*.example.com");
}
