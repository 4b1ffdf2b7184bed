#pragma once
// What every CPU primitive's eval_cpu here shares. run_on_cpu_stream is the body:
// allocate the output, register the arrays with the stream's encoder, and run
// `task(inputs, out)` on the stream's thread in stream order. The task gets weak copies, as MLX's
// own CPU primitives do: the evaluator keeps the buffers alive until the task has run.
#include <cstdint>
#include <utility>
#include <vector>

#include <mlx/allocator.h>
#include <mlx/array.h>
#include <mlx/backend/cpu/encoder.h>

namespace heron::kernels {

// The kernels take dense row-major buffers; gather strided inputs (a sliced
// or transposed x) into scratch first. MLX's own copy routine is not exported.
template <class T>
const T* row_major(const mlx::core::array& a, std::vector<T>& scratch) {
  if (a.flags().row_contiguous) return a.data<T>();
  scratch.resize(a.size());
  const T* src = a.data<T>();
  const int nd = static_cast<int>(a.ndim());
  std::vector<int> idx(static_cast<size_t>(nd), 0);
  int64_t off = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    scratch[i] = src[off];
    for (int d = nd - 1; d >= 0; --d) {  // odometer over the shape
      off += a.strides(d);
      if (++idx[static_cast<size_t>(d)] < a.shape(d)) break;
      off -= a.strides(d) * a.shape(d);
      idx[static_cast<size_t>(d)] = 0;
    }
  }
  return scratch.data();
}

// The same for primitives with several outputs: task(inputs, outputs).
template <class Task>
void run_on_cpu_stream(const mlx::core::Stream& stream, const std::vector<mlx::core::array>& inputs,
                       std::vector<mlx::core::array>& outputs, Task task) {
  namespace mx = mlx::core;
  auto& encoder = mx::cpu::get_command_encoder(stream);
  std::vector<mx::array> weak, weak_out;
  weak.reserve(inputs.size());
  for (const auto& in : inputs) {
    encoder.set_input_array(in);
    weak.push_back(mx::array::unsafe_weak_copy(in));
  }
  for (auto& out : outputs) {
    out.set_data(mx::allocator::malloc(out.nbytes()));
    encoder.set_output_array(out);
    weak_out.push_back(mx::array::unsafe_weak_copy(out));
  }
  encoder.dispatch([weak = std::move(weak), weak_out = std::move(weak_out),
                    task = std::move(task)]() mutable { task(weak, weak_out); });
}

template <class Task>
void run_on_cpu_stream(const mlx::core::Stream& stream, const std::vector<mlx::core::array>& inputs,
                       mlx::core::array& out, Task task) {
  std::vector<mlx::core::array> outputs{out};
  run_on_cpu_stream(
      stream, inputs, outputs,
      [task = std::move(task)](auto& in, std::vector<mlx::core::array>& outs) mutable {
        task(in, outs[0]);
      });
}

}  // namespace heron::kernels
