#include "heron/model/batched_forward.h"

#include "heron/cache/row_caches.h"

namespace heron::model {

Output forward_rows(const Model& model, const Batch& batch,
                    const std::vector<cache::Caches*>& rows, bool want_hiddens) {
  if (rows.size() == 1) return model.forward(batch, *rows[0], want_hiddens);
  auto views = cache::row_views(rows);
  return model.forward(batch, views, want_hiddens);
}

}  // namespace heron::model
