#include "heron/store/stack_experts.h"

#include <map>
#include <regex>
#include <vector>

#include <mlx/ops.h>

namespace heron::store {

namespace mx = mlx::core;

io::WeightMap with_stacked_experts(io::WeightMap weights) {
  static const std::regex per_expert(R"((.*\.mlp)\.experts\.(\d+)\.(\w+)\.weight)");
  // stacked name -> expert -> source name
  std::map<std::string, std::map<int, std::string>> groups;
  for (const auto& [name, a] : weights) {
    std::smatch m;
    if (!std::regex_match(name, m, per_expert) || a.ndim() != 2) continue;
    const std::string layer = name.substr(0, name.size() - 7);  // without ".weight"
    if (weights.count(layer + ".scales") != 0) continue;        // quantized already
    groups[m[1].str() + ".switch_mlp." + m[3].str() + ".weight"][std::stoi(m[2].str())] = name;
  }
  for (const auto& [stacked, experts] : groups) {
    // Every expert from 0 up, all of one shape and dtype; otherwise left as they are.
    std::vector<mx::array> parts;
    for (const auto& [e, name] : experts) {
      const auto& a = weights.at(name);
      if (e != static_cast<int>(parts.size()) ||
          (!parts.empty() && (a.shape() != parts[0].shape() || a.dtype() != parts[0].dtype()))) {
        parts.clear();
        break;
      }
      parts.push_back(a);
    }
    if (parts.empty()) continue;
    for (const auto& [e, name] : experts) weights.erase(name);
    weights.insert_or_assign(stacked, mx::stack(parts, 0));
  }
  return weights;
}

}  // namespace heron::store
