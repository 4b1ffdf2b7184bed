#pragma once
// The depth controller's cost tables persist per model and machine in the model store's
// directory (<store>/speculation/<key>.json), so a new runner starts at the right depth.
#include <filesystem>
#include <string>

#include "heron/spec/depth_controller.h"

namespace heron::spec {

// model_key names the model's files and compute device; the host name is added here.
std::filesystem::path cost_file(const std::filesystem::path& store_root,
                                const std::string& model_key);
// A missing file leaves the controller as it is; an unreadable or malformed one throws
// heron::Error (the caller warns and starts fresh).
void load_costs(const std::filesystem::path& file, DepthController& controller);
// Written to a temporary file and renamed, so a reader never sees half a table.
void save_costs(const std::filesystem::path& file, const DepthController& controller);

// HERON_SPECULATION: unset, "on" or "1" speculate; "off" or "0" do not; anything else
// throws heron::Error.
bool speculation_enabled_from_env();

}  // namespace heron::spec
