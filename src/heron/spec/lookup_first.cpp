#include "heron/spec/lookup_first.h"

namespace heron::spec {

void LookupFirst::reset(const sample::SamplingOptions& sampling) {
  lookup_.reset(sampling);
  otherwise_.reset(sampling);
}

void LookupFirst::committed(std::span<const int> tokens) {
  lookup_.committed(tokens);
  otherwise_.committed(tokens);
}

Draft LookupFirst::propose(int max) {
  if (auto draft = lookup_.propose(max); !draft.empty()) return draft;
  return otherwise_.propose(max);
}

}  // namespace heron::spec
