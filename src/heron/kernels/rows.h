#pragma once
// Row-wise access to an evaluated array of any strides: row r of the rows over the
// leading axes starts at row_offset(a, r) elements from a.data(); its elements are
// a.strides().back() apart.
#include <cstdint>

#include <mlx/array.h>

namespace heron::kernels {

inline int64_t row_offset(const mlx::core::array& a, int64_t row) {
  int64_t offset = 0;
  for (int axis = static_cast<int>(a.ndim()) - 2; axis >= 0; --axis) {
    const int64_t n = a.shape(axis);
    offset += (row % n) * a.strides(axis);
    row /= n;
  }
  return offset;
}

}  // namespace heron::kernels
