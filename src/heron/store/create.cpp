#include "heron/store/create.h"

#include <fstream>
#include <sstream>

#include <mlx/ops.h>

#include "heron/core/error.h"
#include "heron/io/file_errors.h"
#include "heron/io/fused_experts.h"
#include "heron/io/ggml_types.h"
#include "heron/io/gguf.h"
#include "heron/io/weights.h"
#include "heron/model/draft_head_loader.h"
#include "heron/model/encoder_loader.h"
#include "heron/model/loader.h"
#include "heron/model/registry.h"
#include "heron/store/mlx_lm_layout.h"
#include "heron/store/model_files.h"
#include "heron/store/quantize_weights.h"
#include "heron/store/stack_experts.h"
#include "heron/tokenizer/tokenizer.h"

namespace heron::store {

namespace fs = std::filesystem;
namespace mx = mlx::core;
using nlohmann::json;

namespace {

// Files of a Hugging Face model copied byte for byte (weights are written separately).
// sentence-transformers' modules.json and sentence_bert_config.json configure an embedding
// model; its pooling module's config.json is stored as pooling_config.json.
const std::vector<std::string> kCopiedFiles = {"generation_config.json", "tokenizer.json",
                                               "special_tokens_map.json", "modules.json",
                                               "sentence_bert_config.json"};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error("cannot open " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

json read_json(const fs::path& p) {
  try {
    return json::parse(read_file(p));
  } catch (const json::exception& e) {
    throw Error(p.string() + ": invalid JSON: " + e.what());
  }
}

// What FROM or DRAFT names.
struct Source {
  enum Kind { HfDir, Gguf, StoreModel } kind;
  std::string text;
  ModelFiles files;                  // HfDir and StoreModel
  std::optional<Manifest> manifest;  // StoreModel
  fs::path gguf;                     // Gguf
};

bool is_gguf_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in && std::string(magic, 4) == "GGUF";
}

Source resolve_source(const std::string& text, const fs::path& base, const Store& store,
                      const char* what) {
  fs::path p = text;
  if (text.rfind("~/", 0) == 0) {
    if (const char* home = std::getenv("HOME")) p = fs::path(home) / text.substr(2);
  }
  if (p.is_relative()) p = base / p;
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    auto files = files_of_dir(p);
    if (!files.find("config.json")) {
      throw Error(std::string(what) + " " + text + ": directory has no config.json");
    }
    return {Source::HfDir, text, files, std::nullopt, {}};
  }
  if (fs::is_regular_file(p, ec)) {
    if (!is_gguf_file(p)) {
      throw Error(std::string(what) + " " + text +
                  ": not a model (expected a GGUF file or a Hugging Face directory)");
    }
    return {Source::Gguf, text, {}, std::nullopt, p};
  }
  std::optional<ModelName> name;
  try {
    name = ModelName::parse(text);
  } catch (const Error&) {
  }
  if (name) {
    if (auto m = store.read_manifest(*name)) {
      return {
          Source::StoreModel, text, files_of_manifest(store, *m, "model " + name->str()), m, {}};
    }
  }
  throw Error(std::string(what) + " " + text + ": no such file, directory or model");
}

// Asking to quantize an already-quantized source is an error, not a second rounding.
bool mxfp4_checkpoint(const json& config) {
  const auto& qc = config.value("quantization_config", json());
  return qc.is_object() && qc.value("quant_method", "") == "mxfp4";
}

Error already_quantized(const Source& src, const std::string& prefix) {
  const bool draft = !prefix.empty();
  return Error(std::string(draft ? "DRAFT " : "FROM ") + src.text +
               " is already quantized; it is stored as it is, never re-quantized (drop " +
               (draft ? "--draft-quantize" : "--quantize") + ")");
}

// A quantized GGUF is re-quantized only to codes narrower than all of its own (a Q8_0 or
// Q6_K file to 4 bits); anything else would add error and save nothing.
Error not_narrower(const Source& src, const std::string& prefix, const io::GGUFTensorInfo& t,
                   const QuantType& q) {
  const bool draft = !prefix.empty();
  const auto* info = io::ggml_type_info(t.type);
  return Error(std::string(draft ? "DRAFT " : "FROM ") + src.text +
               " is already quantized: its narrowest tensors (" + info->name + ", e.g. " +
               io::in_quotes(t.name) + ") have " + std::to_string(io::ggml_code_bits(t.type)) +
               "-bit codes, and re-quantizing them to " + q.label +
               " would add error without making them smaller; it is stored as it is (drop " +
               (draft ? "--draft-quantize" : "--quantize") + ")");
}

// A file a stored model must have (a hand-edited manifest may lack it).
const fs::path& required(const Source& src, const std::string& name) {
  const auto* p = src.files.find(name);
  if (!p) throw Error(src.text + " has no " + name);
  return *p;
}

void check_cancel(const std::atomic<bool>* cancel) {
  if (cancel && cancel->load()) throw Error("create cancelled");
}

std::string size_label(uint64_t params) {
  char buf[32];
  if (params >= 1000000000ULL) {
    std::snprintf(buf, sizeof buf, "%.1fB", static_cast<double>(params) / 1e9);
  } else {
    std::snprintf(buf, sizeof buf, "%.0fM", static_cast<double>(params) / 1e6);
  }
  return buf;
}

std::string dtype_label(mx::Dtype d) {
  if (d == mx::bfloat16) return "BF16";
  if (d == mx::float16) return "F16";
  return "F32";
}

// The result of importing one model: its layers and what /api/show reports.
struct Imported {
  std::vector<Layer> layers;
  json details;     // format, family, parameter_size, quantization_level
  json model_info;  // a few config values under Ollama's general.* / <arch>.* keys
};

class Creator {
 public:
  Creator(const Store& store, const ProgressFn& progress, const std::atomic<bool>* cancel)
      : store_(store), progress_(progress), cancel_(cancel) {}

  Imported import(const Source& src, const std::optional<QuantType>& q, const std::string& prefix) {
    if (src.kind == Source::Gguf) return import_gguf(src, q, prefix);
    if (src.kind == Source::StoreModel) {
      if (const auto* gguf = src.files.find("model.gguf")) {
        return import_gguf({Source::Gguf, src.text, {}, std::nullopt, *gguf}, q, prefix);
      }
      if (src.files.find("gguf_model.json")) return import_quantized_gguf(src, q, prefix);
    }
    return import_safetensors(src, q, prefix);
  }

  void status(const std::string& s) {
    if (progress_) progress_({s});
  }

 private:
  Imported import_gguf(const Source& src, const std::optional<QuantType>& q,
                       const std::string& prefix) {
    auto header = io::read_gguf_header(src.gguf.string());
    std::map<std::string, uint64_t> by_type;
    uint64_t params = 0;
    const io::GGUFTensorInfo* narrowest = nullptr;  // the block type with the fewest bits
    for (const auto& t : header.tensors) {
      uint64_t n = 1;
      for (auto d : t.dims) n *= d;
      params += n;
      by_type[io::ggml_type_label(t.type)] += n;
      const int bits = io::ggml_code_bits(t.type);
      if (bits && (!narrowest || bits < io::ggml_code_bits(narrowest->type))) narrowest = &t;
    }
    if (q && narrowest && q->bits >= io::ggml_code_bits(narrowest->type)) {
      throw not_narrower(src, prefix, *narrowest, *q);
    }
    const std::string arch = header.metadata.value("general.architecture", "");
    Imported out;
    if (q) {
      out.layers = write_gguf_quantized(src, header, *q, prefix);
    } else {
      status("copying " + src.gguf.filename().string());
      out.layers.push_back(copy_file(src.gguf, prefix.empty() ? "model.gguf" : "draft.gguf"));
    }
    std::string level;
    uint64_t most = 0;
    for (const auto& [type, n] : by_type) {
      if (n > most) most = n, level = type;
    }
    out.details = {{"format", q ? "safetensors" : "gguf"},
                   {"family", arch},
                   {"families", {arch}},
                   {"parameter_size", size_label(params)},
                   {"quantization_level", q ? q->label : level}};
    out.model_info = {{"general.architecture", arch}, {"general.parameter_count", params}};
    for (const char* k : {"context_length", "embedding_length", "block_count", "expert_count",
                          "expert_used_count"}) {
      const std::string key = arch + "." + k;
      if (header.metadata.contains(key)) out.model_info[key] = header.metadata[key];
    }
    return out;
  }

  // A float GGUF quantized: its tensors under Hugging Face names (Q/K rows stay in
  // llama.cpp's order; the loader rotates them as it does for GGUF files) and
  // gguf_model.json holding the GGUF's metadata (architecture, tokenizer, template)
  // and the quantization section; see model::load_files.
  std::vector<Layer> write_gguf_quantized(const Source& src, const io::GGUFHeader& header,
                                          const QuantType& q, const std::string& prefix) {
    status("reading " + src.text);
    io::WeightMap weights;
    for (auto& [name, a] : dequantized_gguf_tensors(header)) {
      weights.insert_or_assign(
          model::hf_name_from_gguf(name, header.metadata.value("general.architecture", "")), a);
    }
    const bool tied = weights.count("lm_head.weight") == 0;  // as model::load_files decides
    auto planned = plan_weights(std::move(weights), q, tied, prefix);
    std::string meta;
    try {
      meta = json{{"metadata", header.metadata}, {"quantization", planned.quantization}}.dump();
    } catch (const json::exception& e) {
      throw Error(src.text + ": GGUF metadata cannot be stored as JSON: " + e.what());
    }
    std::vector<Layer> layers;
    layers.push_back(write_weights(std::move(planned.tensors), &q, prefix));
    layers.push_back(store_.write_blob(meta, prefix + "gguf_model.json"));
    return layers;
  }

  // The GGUF's tensors with every block type dequantized to float32 (exactly: ggml's
  // values), to be quantized anew.
  static io::WeightMap dequantized_gguf_tensors(const io::GGUFHeader& header) {
    auto arrays = io::load_gguf_tensors(header);
    for (const auto& [prefix, form] : io::gguf_quant_forms(header)) {
      const auto w = arrays.at(prefix + ".weight");
      const auto scales = arrays.at(prefix + ".scales");
      const int bits = w.shape(-1) * 32 / (scales.shape(-1) * form.group_size);
      std::optional<mx::array> biases;
      if (form.mode == "affine") biases = arrays.at(prefix + ".biases");
      arrays.insert_or_assign(prefix + ".weight",
                              mx::dequantize(w, scales, biases, form.group_size, bits, form.mode));
      arrays.erase(prefix + ".scales");
      arrays.erase(prefix + ".biases");
    }
    return arrays;
  }

  // A stored model made by write_gguf_quantized, stored again (as a draft: under "draft.").
  Imported import_quantized_gguf(const Source& src, const std::optional<QuantType>& q,
                                 const std::string& prefix) {
    if (q) {
      throw already_quantized(src, prefix);
    }
    auto planned = plan_weights(io::load_safetensors_file(required(src, "model.safetensors")),
                                std::nullopt, false, prefix);
    Imported out;
    out.layers.push_back(write_weights(std::move(planned.tensors), nullptr, prefix));
    out.layers.push_back(copy_file(required(src, "gguf_model.json"), prefix + "gguf_model.json"));
    const json settings = read_settings(store_, *src.manifest);
    out.details = settings.value("details", json::object());
    out.model_info = settings.value("model_info", json::object());
    return out;
  }

  // The model.safetensors (or draft.safetensors) blob, with progress and cancellation.
  Layer write_weights(std::vector<NamedArray> tensors, const QuantType* q,
                      const std::string& prefix, const std::string& file = "model.safetensors") {
    const uint64_t total = tensor_bytes(tensors);
    const size_t count = tensors.size();
    const std::string what = q ? "quantizing to " + q->label : "writing tensors";
    return write_safetensors(store_, std::move(tensors), {{"format", "mlx"}},
                             prefix.empty() ? file : "draft.safetensors",
                             [&](size_t done, uint64_t bytes) {
                               check_cancel(cancel_);
                               if (progress_) progress_({what, bytes, total, done, count});
                             });
  }

  Imported import_safetensors(const Source& src, const std::optional<QuantType>& q,
                              const std::string& prefix) {
    const auto& files = src.files;
    status("reading " + src.text);
    json config = read_json(required(src, "config.json"));
    io::WeightMap weights = files.dir
                                ? io::load_safetensors_dir(*files.dir)
                                : io::load_safetensors_file(required(src, "model.safetensors"));
    if (const auto* head = files.find(kPredictionHeadFile); head && !files.dir) {
      weights.merge(io::load_safetensors_file(*head));
    }
    // gpt-oss's MXFP4 experts are MLX's mxfp4: stored in mlx-lm's layout and named so.
    if (io::has_fused_experts(weights)) {
      weights = io::with_unfused_experts(std::move(weights), src.text,
                                         io::fused_experts_of(config.value("model_type", "")));
      if (mxfp4_checkpoint(config)) {
        config["quantization"] = quant_entry(QuantType::parse("mxfp4"));
        config["quantization_config"] = config["quantization"];
      }
    }
    // mlx-lm writes "quantization"; a "quantization_config" alone is another
    // quantizer's format (GPTQ, AWQ, bitsandbytes, FP8...) that MLX cannot read.
    if (config.contains("quantization_config") && !config.contains("quantization")) {
      const auto& qc = config["quantization_config"];
      throw Error(src.text + " is quantized with " +
                  (qc.is_object() ? qc.value("quant_method", "an unknown method")
                                  : std::string("an unknown method")) +
                  ", which heron cannot read; use the float or an MLX-quantized model");
    }
    bool already = config.contains("quantization");
    for (const auto& [name, a] : weights) {
      already = already || (name.size() > 7 && name.compare(name.size() - 7, 7, ".scales") == 0);
    }
    if (already && q) {
      throw already_quantized(src, prefix);
    }
    auto stored = in_mlx_lm_layout(with_stacked_experts(std::move(weights)), config);
    const bool tied = config.value("tie_word_embeddings", false);
    // A multi-token-prediction head is stored apart: mlx-lm reads model*.safetensors and
    // refuses tensors its model lacks (its Qwen3-Next drops mtp.* only in the Hugging Face
    // layout).
    io::WeightMap head;
    if (prefix.empty()) {
      for (auto it = stored.begin(); it != stored.end();) {
        if (it->first.starts_with("mtp.")) {
          head.insert(stored.extract(it++));
        } else {
          ++it;
        }
      }
    }
    auto planned = plan_weights(std::move(stored), q, tied, prefix);
    std::optional<PlannedTensors> planned_head;
    if (!head.empty()) planned_head = plan_weights(std::move(head), q, tied, prefix);
    if (q) {
      if (planned_head) planned.quantization.update(planned_head->quantization);
      config["quantization"] = planned.quantization;
      config["quantization_config"] = planned.quantization;
    }
    Imported out;
    out.layers.push_back(write_weights(std::move(planned.tensors), q ? &*q : nullptr, prefix));
    if (planned_head) {
      planned.params += planned_head->params;
      out.layers.push_back(write_weights(std::move(planned_head->tensors), q ? &*q : nullptr,
                                         prefix, kPredictionHeadFile));
    }
    out.layers.push_back(store_.write_blob(config.dump(2), prefix + "config.json"));
    if (prefix.empty()) copy_support_files(files, out.layers);
    std::string level = q ? q->label : dtype_label(planned.float_type.value_or(mx::float32));
    if (already) {
      const auto& qc = config["quantization"];
      level = qc.value("mode", "affine") == "affine" ? "int" + std::to_string(qc.value("bits", 0))
                                                     : qc.value("mode", "");
    }
    const std::string family = config.value("model_type", "");
    out.details = {{"format", "safetensors"},
                   {"family", family},
                   {"families", {family}},
                   {"parameter_size", size_label(planned.params)},
                   {"quantization_level", level}};
    out.model_info = {{"general.architecture", family},
                      {"general.parameter_count", planned.params}};
    // A multimodal model's language model states its fields in text_config (Qwen3.5).
    json text = config;
    if (config.contains("text_config") && config["text_config"].is_object()) {
      text.update(config["text_config"]);
    }
    for (const auto& [hf, ollama] : std::vector<std::pair<std::string, std::string>>{
             {"max_position_embeddings", "context_length"},
             {"hidden_size", "embedding_length"},
             {"num_hidden_layers", "block_count"},
             {"num_experts", "expert_count"},
             {"num_local_experts", "expert_count"},
             {"n_routed_experts", "expert_count"},
             {"n_shared_experts", "expert_shared_count"},
             {"kv_lora_rank", "attention.kv_lora_rank"},
             {"linear_conv_kernel_dim", "ssm.conv_kernel"},
             {"linear_key_head_dim", "ssm.state_size"},
             {"linear_num_key_heads", "ssm.group_count"},
             {"full_attention_interval", "full_attention_interval"},
             {"num_experts_per_tok", "expert_used_count"}}) {
      if (text.contains(hf)) out.model_info[family + "." + ollama] = text[hf];
    }
    return out;
  }

  void copy_support_files(const ModelFiles& files, std::vector<Layer>& layers) {
    for (const auto& name : kCopiedFiles) {
      if (const auto* p = files.find(name)) layers.push_back(copy_file(*p, name));
    }
    if (const auto pooling = model::pooling_config_path(files)) {
      layers.push_back(copy_file(*pooling, "pooling_config.json"));
    }
    // One tokenizer_config.json carrying the chat template, even when the source keeps
    // it in chat_template.jinja.
    if (const auto* p = files.find("tokenizer_config.json")) {
      const auto* jinja = files.find("chat_template.jinja");
      json cfg = read_json(*p);
      if (jinja && (!cfg.contains("chat_template") || cfg["chat_template"].is_null())) {
        cfg["chat_template"] = read_file(*jinja);
        layers.push_back(store_.write_blob(cfg.dump(2), "tokenizer_config.json"));
      } else {
        layers.push_back(copy_file(*p, "tokenizer_config.json"));
      }
    }
  }

  Layer copy_file(const fs::path& p, const std::string& name) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw Error("cannot open " + p.string());
    const uint64_t total = fs::file_size(p);
    BlobWriter out(store_);
    std::vector<char> buf(1 << 20);
    while (in) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      if (in.gcount() <= 0) break;
      out.write(buf.data(), static_cast<size_t>(in.gcount()));
      check_cancel(cancel_);
      if (progress_ && total > (64u << 20)) progress_({"copying " + name, out.size(), total});
    }
    return out.commit(name);
  }

  const Store& store_;
  const ProgressFn& progress_;
  const std::atomic<bool>* cancel_;
};

std::unique_ptr<tokenizer::Tokenizer> tokenizer_of(const Source& s) {
  if (s.kind == Source::Gguf) {
    return tokenizer::Tokenizer::from_gguf_metadata(io::read_gguf_header(s.gguf.string()).metadata);
  }
  if (const auto* g = s.files.find("model.gguf")) {
    return tokenizer::Tokenizer::from_gguf_metadata(io::read_gguf_header(g->string()).metadata);
  }
  if (const auto* g = s.files.find("gguf_model.json")) {
    return tokenizer::Tokenizer::from_gguf_metadata(read_gguf_model_json(*g).metadata);
  }
  const auto* tj = s.files.find("tokenizer.json");
  if (!tj) throw Error(s.text + " has no tokenizer.json");
  std::optional<fs::path> tc;
  if (const auto* f = s.files.find("tokenizer_config.json")) tc = *f;
  return tokenizer::Tokenizer::from_json_files(*tj, tc);
}

// The architecture a source declares: GGUF general.architecture or config.json model_type.
std::string architecture_of(const Source& s) {
  json metadata;
  if (s.kind == Source::Gguf) {
    metadata = io::read_gguf_header(s.gguf.string()).metadata;
  } else if (const auto* gguf = s.files.find("model.gguf")) {
    metadata = io::read_gguf_header(gguf->string()).metadata;
  } else if (const auto* gguf_json = s.files.find("gguf_model.json")) {
    metadata = read_gguf_model_json(*gguf_json).metadata;
  } else {
    const json config = read_json(required(s, "config.json"));
    const auto it = config.find("model_type");
    if (it == config.end() || !it->is_string())
      throw Error(s.text + ": config.json has no model_type");
    return *it;
  }
  const auto it = metadata.find("general.architecture");
  if (it == metadata.end() || !it->is_string()) {
    throw Error(s.text + ": the GGUF metadata has no general.architecture");
  }
  return *it;
}

void check_same_vocab(const Source& target, const Source& draft) {
  auto a = tokenizer_of(target);
  auto b = tokenizer_of(draft);
  const int32_t n = std::max(a->vocab_size(), b->vocab_size());
  for (int32_t id = 0; id < n; ++id) {
    const std::string* x = a->id_to_token(id);
    const std::string* y = b->id_to_token(id);
    if ((x == nullptr) != (y == nullptr) || (x && *x != *y)) {
      throw Error("DRAFT " + draft.text + " has a different vocabulary than FROM " + target.text +
                  " (token " + std::to_string(id) + ": '" + (x ? *x : "") + "' vs '" +
                  (y ? *y : "") + "')");
    }
  }
}

ModelSettings merge_settings(ModelSettings base, const ModelSettings& over) {
  for (const auto& [k, v] : over.parameters.items()) base.parameters[k] = v;
  if (over.chat_template) base.chat_template = over.chat_template;
  if (over.system) base.system = over.system;
  if (!over.messages.empty()) base.messages = over.messages;
  if (!over.licenses.empty()) base.licenses = over.licenses;
  return base;
}

// A trained draft head (model/layers/draft_head.h) as a DRAFT: a directory whose config
// names it; stored like a model directory, under "draft.".
std::optional<json> draft_head_config(const Source& s) {
  if (s.kind != Source::HfDir) return std::nullopt;
  const auto* path = s.files.find("config.json");
  if (!path) return std::nullopt;
  auto config = read_json(*path);
  if (!model::is_draft_head_config(config)) return std::nullopt;
  return config;
}

// A head computes logits for the model's whole vocabulary: it must cover the tokenizer's.
void check_head_vocab(const Source& target, const Source& draft, const json& head) {
  const auto tokens = tokenizer_of(target)->vocab_size();
  const auto it = head.find("vocab_size");
  if (it == head.end() || !it->is_number_integer() || it->get<int64_t>() < tokens) {
    throw Error("DRAFT " + draft.text + " is a draft head for a vocabulary of " +
                (it != head.end() && it->is_number_integer() ? std::to_string(it->get<int64_t>())
                                                             : std::string("unknown size")) +
                " tokens; FROM " + target.text + " has " + std::to_string(tokens));
  }
}

bool is_draft_layer(const Layer& l) {
  return l.name.rfind("draft.", 0) == 0;
}

}  // namespace

json read_settings(const Store& store, const Manifest& m) {
  try {
    return json::parse(store.read_blob(m.settings.digest));
  } catch (const json::exception& e) {
    throw Error("model settings blob " + m.settings.digest + " is not JSON: " + e.what());
  }
}

namespace {

void create_locked(const Store& store, const CreateRequest& req, const ProgressFn& progress,
                   const std::atomic<bool>* cancel) {
  const auto name = ModelName::parse(req.name);
  const auto& mf = req.modelfile;
  if (mf.from.empty()) throw Error("no FROM: say which model to start from");
  if (req.draft_quantize && !mf.draft) throw Error("--draft-quantize needs a DRAFT model");
  std::optional<QuantType> q, dq;
  if (req.quantize) q = QuantType::parse(*req.quantize);
  if (req.draft_quantize) dq = QuantType::parse(*req.draft_quantize);

  Creator creator(store, progress, cancel);
  creator.status("parsing modelfile");
  const Source from = resolve_source(mf.from, req.base_dir, store, "FROM");
  std::optional<Source> draft;
  if (mf.draft) draft = resolve_source(*mf.draft, req.base_dir, store, "DRAFT");
  // Nothing is written for a model heron could not run. Embedding models are stored as
  // they come.
  if (model::is_encoder_architecture(architecture_of(from))) {
    if (q) throw Error("FROM " + from.text + " is an embedding model: --quantize is not supported");
    if (draft) throw Error("FROM " + from.text + " is an embedding model: it takes no DRAFT");
  } else {
    model::require_known_architecture(architecture_of(from), "FROM " + from.text);
  }
  const auto head = draft ? draft_head_config(*draft) : std::nullopt;
  if (draft && !head) {
    model::require_known_architecture(architecture_of(*draft), "DRAFT " + draft->text);
  }

  Manifest manifest;
  json settings = json::object();
  ModelSettings base;
  if (from.kind == Source::StoreModel && !q) {
    // Reuse the stored model's blobs; a new DRAFT replaces its old one.
    creator.status("using existing model " + from.text);
    settings = read_settings(store, *from.manifest);
    base = ModelSettings::from_json(settings.value("settings", json::object()));
    for (const auto& l : from.manifest->files) {
      if (!draft || !is_draft_layer(l)) manifest.files.push_back(l);
    }
  } else {
    auto imported = creator.import(from, q, "");
    manifest.files = imported.layers;
    settings["from"] = from.kind == Source::StoreModel
                           ? read_settings(store, *from.manifest).value("from", from.text)
                           : from.text;
    settings["format"] = imported.details["format"];
    settings["details"] = imported.details;
    settings["model_info"] = imported.model_info;
    if (from.kind == Source::StoreModel) {
      base = ModelSettings::from_json(
          read_settings(store, *from.manifest).value("settings", json::object()));
    }
  }
  if (draft) {
    if (head) {
      check_head_vocab(from, *draft, *head);
    } else {
      check_same_vocab(from, *draft);
    }
    auto imported = creator.import(*draft, dq, "draft.");
    for (const auto& l : imported.layers) manifest.files.push_back(l);
    settings["draft"] = {{"from", draft->text}, {"details", imported.details}};
  }
  settings["settings"] = merge_settings(base, mf.settings).to_json();
  check_cancel(cancel);
  creator.status("writing manifest");
  manifest.settings = store.write_blob(settings.dump(2));
  store.write_manifest(name, manifest);
}

}  // namespace

void create_model(const Store& store, const CreateRequest& req, const ProgressFn& progress,
                  const std::atomic<bool>* cancel) {
  {
    WriterLock lock(store);
    create_locked(store, req, progress, cancel);
  }
  // Blobs of a model this one replaced go now (unless another create is running).
  store.collect_garbage();
  if (progress) progress({"success"});
}

}  // namespace heron::store
