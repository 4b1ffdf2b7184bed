#pragma once
// One forward over several sequences at once (continuous batching): row r of `batch`
// reads and extends rows[r], that sequence's caches (one per layer, as make_caches()
// gives them). Each row's logits are those it gets alone, up to the batched matmuls'
// rounding.
#include <vector>

#include "heron/model/model.h"

namespace heron::model {

Output forward_rows(const Model& model, const Batch& batch,
                    const std::vector<cache::Caches*>& rows, bool want_hiddens = false);

}  // namespace heron::model
