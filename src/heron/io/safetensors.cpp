#include "heron/io/safetensors.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "heron/io/file_errors.h"
#include "heron/io/file_reader.h"

namespace heron::io {
namespace {

// Same bound as the reference Rust implementation.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// Bytes per element of every dtype the safetensors format defines.
const std::unordered_map<std::string, uint64_t>& dtype_sizes() {
  static const std::unordered_map<std::string, uint64_t> sizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4}, {"I16", 2},
      {"I8", 1},  {"U64", 8}, {"U32", 4}, {"U16", 2},  {"U8", 1},  {"BOOL", 1}};
  return sizes;
}

// nlohmann keeps the last of two equal keys silently; a file that says two things
// about one tensor is corrupt, so we refuse duplicates at every level.
nlohmann::json parse_rejecting_duplicates(const FileReader& r, const std::string& text) {
  std::vector<std::set<std::string>> seen;
  std::string duplicate;
  auto cb = [&](int, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (ev == E::object_start) seen.emplace_back();
    if (ev == E::object_end) seen.pop_back();
    if (ev == E::key && !seen.empty() && !seen.back().insert(parsed.get<std::string>()).second &&
        duplicate.empty()) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, cb);
  } catch (const nlohmann::json::exception& e) {
    r.fail(std::string("header is not valid JSON: ") + e.what());
  }
  if (!duplicate.empty()) r.fail("header repeats the key " + in_quotes(duplicate));
  return j;
}

uint64_t json_u64(const FileReader& r, const nlohmann::json& v, const std::string& what) {
  if (!v.is_number_unsigned()) {
    r.fail(what + " must be a non-negative integer, got " +
           v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return v.get<uint64_t>();
}

SafetensorsTensorInfo parse_entry(const FileReader& r, const std::string& name,
                                  const nlohmann::json& e, uint64_t data_size) {
  const std::string what = "tensor " + in_quotes(name);
  if (!e.is_object()) r.fail(what + " entry is not a JSON object");
  SafetensorsTensorInfo t;
  t.name = name;
  if (!e.contains("dtype") || !e["dtype"].is_string()) r.fail(what + " has no dtype string");
  t.dtype = e["dtype"].get<std::string>();
  auto size_it = dtype_sizes().find(t.dtype);
  if (size_it == dtype_sizes().end()) {
    r.fail(what + " has unsupported dtype " + in_quotes(t.dtype));
  }
  if (!e.contains("shape") || !e["shape"].is_array()) r.fail(what + " has no shape array");
  uint64_t numel = 1;
  for (const auto& d : e["shape"]) {
    uint64_t dim = json_u64(r, d, what + " shape entry");
    if (dim > uint64_t{INT64_MAX} || __builtin_mul_overflow(numel, dim, &numel)) {
      r.fail(what + " element count overflows");
    }
    t.shape.push_back(static_cast<int64_t>(dim));
  }
  const auto& off = e.contains("data_offsets") ? e["data_offsets"] : nlohmann::json();
  if (!off.is_array() || off.size() != 2) {
    r.fail(what + " needs data_offsets [begin, end]");
  }
  t.begin = json_u64(r, off[0], what + " data_offsets begin");
  t.end = json_u64(r, off[1], what + " data_offsets end");
  if (t.begin > t.end) r.fail(what + " data_offsets begin is after end");
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, size_it->second, &nbytes)) {
    r.fail(what + " byte size overflows");
  }
  if (t.end - t.begin != nbytes) {
    r.fail(what + " data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
           "] span " + std::to_string(t.end - t.begin) + " bytes but its shape and dtype need " +
           std::to_string(nbytes));
  }
  if (t.end > data_size) {
    r.fail(what + " data_offsets end " + std::to_string(t.end) +
           " runs past the end of the data section (" + std::to_string(data_size) + " bytes)");
  }
  return t;
}

void check_overlaps(const FileReader& r, const std::vector<SafetensorsTensorInfo>& tensors) {
  std::vector<const SafetensorsTensorInfo*> order;
  for (const auto& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(),
            [](const auto* a, const auto* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < order.size(); ++i) {
    if (order[i - 1]->end > order[i]->begin) {
      r.fail("tensors " + in_quotes(order[i - 1]->name) + " and " + in_quotes(order[i]->name) +
             " overlap in the data section");
    }
  }
}

}  // namespace

SafetensorsHeader read_safetensors_header(const std::string& path) {
  FileReader r(path);
  SafetensorsHeader h;
  h.path = path;
  uint64_t len = r.read_le<uint64_t>("the header length");
  if (len == 0 || len > kMaxHeaderBytes || len > r.remaining()) {
    r.fail("header length " + std::to_string(len) + " is invalid (the file has " +
           std::to_string(r.remaining()) + " bytes after the length; the limit is " +
           std::to_string(kMaxHeaderBytes) + ")");
  }
  nlohmann::json j = parse_rejecting_duplicates(r, r.read_string(len, "the JSON header"));
  if (!j.is_object()) r.fail("header is not a JSON object");
  h.data_offset = 8 + len;
  const uint64_t data_size = r.size() - h.data_offset;
  h.metadata = nlohmann::json::object();
  for (const auto& [key, value] : j.items()) {
    if (key == "__metadata__") {
      if (value.is_null()) continue;  // MLX's save_safetensors without metadata writes null
      if (!value.is_object()) r.fail("__metadata__ is not a JSON object");
      for (const auto& [mk, mv] : value.items()) {
        if (!mv.is_string()) r.fail("__metadata__ value " + in_quotes(mk) + " is not a string");
      }
      h.metadata = value;
      continue;
    }
    h.tensors.push_back(parse_entry(r, key, value, data_size));
  }
  check_overlaps(r, h.tensors);
  return h;
}

}  // namespace heron::io
