// Model store: names and digests that cannot escape it, atomic blob and manifest
// writes, garbage collection that keeps shared blobs, symlinks never followed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "heron/core/error.h"
#include "heron/core/sha256.h"
#include "heron/store/name.h"
#include "heron/store/store.h"

namespace heron::store {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("heron-store-test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  size_t count(const fs::path& dir) {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
    return n;
  }

  Manifest model_of(const Store& s, const std::string& weights) {
    Manifest m;
    m.settings = s.write_blob("{}");
    m.files.push_back(s.write_blob(weights, "model.safetensors"));
    return m;
  }

  fs::path root_;
};

TEST(ModelName, ParsesAndDefaultsTheTag) {
  auto n = ModelName::parse("llama3");
  EXPECT_EQ(n.str(), "llama3:latest");
  EXPECT_EQ(n.manifest_path(), fs::path("manifests/library/llama3/latest"));
  auto u = ModelName::parse("me/tiny-1.5b:q4_K");
  EXPECT_EQ(u.str(), "me/tiny-1.5b:q4_K");
  EXPECT_EQ(u.manifest_path(), fs::path("manifests/me/tiny-1.5b/q4_K"));
  EXPECT_EQ(ModelName::parse("library/x"), ModelName::parse("x"));
}

TEST(ModelName, RefusesNamesThatCouldEscape) {
  for (const auto& bad : std::vector<std::string>{
           "", "../x", "x/../y", "/abs", "a/b/c", "x:", ":tag", "x:../y", ".hidden", "-x", "a..b",
           "a b", "a\\b", "x:a/b", std::string(81, 'a'), "x:" + std::string(81, 't'),
           std::string("na\0me", 5)}) {
    EXPECT_THROW(ModelName::parse(bad), Error) << bad;
  }
}

TEST(Digest, ExactlySixtyFourLowercaseHex) {
  const std::string hex(64, 'a');
  EXPECT_EQ(digest_hex("sha256:" + hex), hex);
  for (const auto& bad :
       std::vector<std::string>{"sha256:" + std::string(63, 'a'), "sha256:" + std::string(65, 'a'),
                                "sha256:" + std::string(64, 'A'), "sha512:" + hex, hex,
                                "sha256:../../../../etc/passwd" + std::string(40, 'a'),
                                "sha256:" + std::string(63, 'a') + "/"}) {
    EXPECT_THROW(digest_hex(bad), Error) << bad;
  }
}

TEST(Sha256, KnownVector) {
  EXPECT_EQ(Sha256::of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_F(StoreTest, BlobsAreContentAddressedAndShared) {
  Store s(root_);
  auto a = s.write_blob("hello", "x");
  auto b = s.write_blob("hello", "y");
  EXPECT_EQ(a.digest, "sha256:" + Sha256::of("hello"));
  EXPECT_EQ(a.digest, b.digest);
  EXPECT_EQ(a.size, 5u);
  EXPECT_EQ(s.read_blob(a.digest), "hello");
  EXPECT_EQ(count(root_ / "blobs"), 1u);
  EXPECT_EQ(count(s.tmp_dir()), 0u);
}

TEST_F(StoreTest, UncommittedBlobLeavesNothing) {
  Store s(root_);
  {
    BlobWriter w(s);
    w.write("partial", 7);
    EXPECT_EQ(count(s.tmp_dir()), 1u);
  }
  EXPECT_EQ(count(s.tmp_dir()), 0u);
  EXPECT_EQ(count(root_ / "blobs"), 0u);
}

TEST_F(StoreTest, OpeningCleansStaleTempFilesAndOrphanBlobs) {
  {
    Store s(root_);
    s.write_manifest(ModelName::parse("kept"), model_of(s, "weights"));
  }
  std::ofstream(root_ / "tmp" / "blob-stale") << "left by a killed create";
  std::ofstream(root_ / "blobs" / ("sha256-" + std::string(64, 'e'))) << "orphan";
  Store s(root_);
  EXPECT_EQ(count(s.tmp_dir()), 0u);
  EXPECT_EQ(count(root_ / "blobs"), 2u);  // the model's settings and weights
  EXPECT_TRUE(s.read_manifest(ModelName::parse("kept")));
}

TEST_F(StoreTest, NoCleanupWhileAWriterHoldsTheLock) {
  Store s(root_);
  WriterLock writing(s);
  auto fresh = s.write_blob("not referenced yet");
  Store other(root_);  // another process starting up
  EXPECT_TRUE(other.has_blob(fresh.digest));
}

TEST_F(StoreTest, ManifestsRoundTripListAndRemoveKeepsSharedBlobs) {
  Store s(root_);
  auto m = model_of(s, "shared weights");
  s.write_manifest(ModelName::parse("a"), m);
  s.write_manifest(ModelName::parse("me/b:v2"), m);
  auto other = model_of(s, "other weights");
  s.write_manifest(ModelName::parse("c"), other);
  auto back = s.read_manifest(ModelName::parse("me/b:v2"));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->to_json(), m.to_json());
  EXPECT_EQ(s.list().size(), 3u);

  EXPECT_TRUE(s.remove(ModelName::parse("a")));
  EXPECT_TRUE(s.has_blob(m.files[0].digest));  // me/b:v2 still uses it
  EXPECT_FALSE(s.remove(ModelName::parse("a")));
  EXPECT_TRUE(s.remove(ModelName::parse("me/b:v2")));
  EXPECT_FALSE(s.has_blob(m.files[0].digest));
  EXPECT_TRUE(s.has_blob(other.files[0].digest));
  EXPECT_FALSE(fs::exists(root_ / "manifests" / "me"));  // empty directories go too
  EXPECT_EQ(count(s.tmp_dir()), 0u);
}

TEST_F(StoreTest, ManifestWithMissingBlobIsNotWritten) {
  Store s(root_);
  auto m = model_of(s, "w");
  m.files[0].digest = "sha256:" + std::string(64, '0');
  EXPECT_THROW(s.write_manifest(ModelName::parse("x"), m), Error);
  EXPECT_FALSE(fs::exists(root_ / "manifests" / "library" / "x"));
  EXPECT_EQ(count(s.tmp_dir()), 0u);
}

TEST_F(StoreTest, TamperedManifestsAndBlobsAreRefused) {
  Store s(root_);
  auto m = model_of(s, "w");
  s.write_manifest(ModelName::parse("x"), m);
  const auto file = s.manifest_file(ModelName::parse("x"));
  auto j = m.to_json();
  j["layers"][0]["digest"] = "sha256:../../x";
  std::ofstream(file) << j.dump();
  EXPECT_THROW(s.read_manifest(ModelName::parse("x")), Error);
  j = m.to_json();
  j["layers"][0]["name"] = "../config.json";
  std::ofstream(file) << j.dump();
  EXPECT_THROW(s.read_manifest(ModelName::parse("x")), Error);
  // A blob whose bytes changed no longer matches its digest.
  std::ofstream(s.blob_path(m.settings.digest)) << "{\"tampered\": 1}";
  EXPECT_THROW(s.read_blob(m.settings.digest), Error);
}

TEST_F(StoreTest, SymlinksAreNeverFollowed) {
  Store s(root_);
  const fs::path outside = root_.string() + "-outside";
  fs::create_directories(outside / "x");
  auto m = model_of(s, "w");
  std::ofstream(outside / "x" / "latest") << m.to_json().dump();
  fs::create_directories(root_ / "manifests");
  fs::create_directory_symlink(outside, root_ / "manifests" / "evil");
  EXPECT_FALSE(s.read_manifest(ModelName::parse("evil/x")));
  EXPECT_TRUE(s.list().empty());
  // A blob that is a symlink counts as missing.
  const auto digest = "sha256:" + Sha256::of("linked");
  std::ofstream(outside / "target") << "linked";
  fs::create_symlink(outside / "target", root_ / "blobs" / ("sha256-" + Sha256::of("linked")));
  EXPECT_FALSE(s.has_blob(digest));
  EXPECT_THROW(s.blob_path(digest), Error);
  fs::remove_all(outside);
}

}  // namespace
}  // namespace heron::store
