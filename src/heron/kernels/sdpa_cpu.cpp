#include "heron/kernels/sdpa_cpu.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "heron/kernels/isa_choice.h"
#include "heron/kernels/sdpa_kernels.h"
#include "heron/kernels/thread_pool.h"

namespace heron::kernels {

namespace {

IsaChoice choice;

// Query rows (positions x the heads of one kv group) per task: every key and
// value block is loaded once per task, so more rows mean less memory traffic.
constexpr int kRowsPerTask = 64;
// Fewest keys per task when a few long rows are split along T (decode).
constexpr int kMinSplitKeys = 256;
// Below this many multiply-adds waking the pool costs more than it saves.
constexpr double kInlineWork = 1 << 17;

// How the work is cut: tasks are (query block, batch x kv head, key split).
struct Plan {
  int G;       // query heads per kv head
  int Bq;      // query positions per task
  int nqb;     // query blocks
  int bh;      // B * Hkv
  int nsplit;  // key ranges per (query block, b, kv head)
  int split_len;
  int off;       // causal: query i sees keys j <= off + i
  bool threads;  // worth waking the pool

  int base_tasks() const { return nqb * bh; }
  int max_rows() const { return G * Bq; }
};

Plan make_plan(const SdpaArgs& a, int threads) {
  Plan p{};
  p.G = a.Hq / a.Hkv;
  p.Bq = std::clamp(kRowsPerTask / p.G, 1, a.L);
  if (p.G * p.Bq % 2 == 1 && p.Bq > 1) --p.Bq;  // the AVX2 kernel works on row pairs
  p.nqb = (a.L + p.Bq - 1) / p.Bq;
  p.bh = a.B * a.Hkv;
  p.off = a.causal ? a.T - a.L : 0;
  p.nsplit = 1;
  p.threads = threads > 1 && double(a.B) * a.Hq * a.L * a.T * a.D >= kInlineWork;
  if (p.threads && p.base_tasks() < 2 * threads) {
    const int want = (2 * threads + p.base_tasks() - 1) / p.base_tasks();
    p.nsplit = std::clamp(a.T / kMinSplitKeys, 1, want);
  }
  p.split_len = (a.T + p.nsplit - 1) / p.nsplit;
  p.nsplit = (a.T + p.split_len - 1) / p.split_len;  // no empty splits
  return p;
}

struct Tile {
  int b, kvh, q0, nq;
};

// Base task index -> tile. Causal blocks near the end of the queries see the
// most keys: they come first so the dynamic scheduler balances the tail.
Tile tile_of(const SdpaArgs& a, const Plan& p, int base) {
  const int bhi = base % p.bh;
  const int qb = p.nqb - 1 - base / p.bh;
  const int q0 = qb * p.Bq;
  return {bhi / a.Hkv, bhi % a.Hkv, q0, std::min(p.Bq, a.L - q0)};
}

// Rows of a tile are ordered (group head g, position i) -> g * nq + i.
float* out_row(const SdpaArgs& a, const Plan& p, const Tile& t, int r) {
  const int h = t.kvh * p.G + r / t.nq;
  const int pos = t.q0 + r % t.nq;
  return a.out + ((int64_t{t.b} * a.Hq + h) * a.L + pos) * a.Dv;
}

}  // namespace

void set_sdpa_isa(Isa isa) {
  choice.force(isa);
}

Isa sdpa_isa() {
  return choice.current();
}

void sdpa_cpu(const SdpaArgs& a) {
  if (a.B == 0 || a.Hq == 0 || a.L == 0 || a.D == 0) return;
  auto& pool = ThreadPool::shared();
  const Plan p = make_plan(a, pool.size());
  const auto attend = sdpa_isa() == Isa::Avx2 ? attend_avx2 : attend_scalar;
  const int D = a.D;
  const int Dv = a.Dv;
  const size_t rows = static_cast<size_t>(p.max_rows());
  // Split tasks leave (max, sum, unnormalised output) per row for the combine.
  std::vector<float> part_m, part_l, part_acc;
  if (p.nsplit > 1) {
    const size_t slots = static_cast<size_t>(p.base_tasks()) * p.nsplit * rows;
    part_m.resize(slots);
    part_l.resize(slots);
    part_acc.resize(slots * Dv);
  }

  auto task = [&](int idx) {
    const int split = idx % p.nsplit;
    const int base = idx / p.nsplit;
    const Tile t = tile_of(a, p, base);
    const int M = p.G * t.nq;
    thread_local std::vector<float> q, m, l, acc;
    thread_local std::vector<int> end;
    thread_local std::vector<const bool*> mask;
    q.resize(static_cast<size_t>(M) * D);
    end.resize(static_cast<size_t>(M));
    mask.resize(static_cast<size_t>(M));
    m.assign(static_cast<size_t>(M), -std::numeric_limits<float>::infinity());
    l.assign(static_cast<size_t>(M), 0.0f);
    acc.assign(static_cast<size_t>(M) * Dv, 0.0f);
    for (int r = 0; r < M; ++r) {
      const int h = t.kvh * p.G + r / t.nq;
      const int pos = t.q0 + r % t.nq;
      const float* src = a.q + t.b * a.q_strides[0] + h * a.q_strides[1] + pos * a.q_strides[2];
      float* dst = q.data() + int64_t{r} * D;
      for (int d = 0; d < D; ++d) dst[d] = src[d] * a.scale;
      end[r] = a.causal        ? std::min(a.T, p.off + pos + 1)
               : a.key_lengths ? std::min(a.T, static_cast<int>(a.key_lengths[t.b]))
                               : a.T;
      if (a.mask != nullptr) mask[r] = a.mask + int64_t{pos} * a.T;
      // The sink is one more softmax term, counted once: in the first key split.
      if (a.sinks != nullptr && split == 0) {
        m[r] = a.sinks[h];
        l[r] = 1.0f;
      }
    }
    AttendArgs args{};
    args.q = q.data();
    args.k = a.k + t.b * a.k_strides[0] + t.kvh * a.k_strides[1];
    args.v = a.v + t.b * a.v_strides[0] + t.kvh * a.v_strides[1];
    args.k_stride = a.k_strides[2];
    args.v_stride = a.v_strides[2];
    args.end = end.data();
    args.mask = a.mask != nullptr ? mask.data() : nullptr;
    args.M = M;
    args.D = D;
    args.Dv = Dv;
    args.k0 = split * p.split_len;
    args.k1 = std::min(a.T, args.k0 + p.split_len);
    args.m = m.data();
    args.l = l.data();
    args.acc = acc.data();
    attend(args);
    if (p.nsplit == 1) {
      for (int r = 0; r < M; ++r) {
        const float inv = 1.0f / l[r];
        const float* src = acc.data() + int64_t{r} * Dv;
        float* dst = out_row(a, p, t, r);
        for (int d = 0; d < Dv; ++d) dst[d] = src[d] * inv;
      }
      return;
    }
    const size_t slot = (static_cast<size_t>(base) * p.nsplit + split) * rows;
    std::copy(m.begin(), m.end(), part_m.begin() + slot);
    std::copy(l.begin(), l.end(), part_l.begin() + slot);
    std::copy(acc.begin(), acc.end(), part_acc.begin() + slot * Dv);
  };

  // Merge the key splits of one tile: rescale each to the overall max.
  auto combine = [&](int base) {
    const Tile t = tile_of(a, p, base);
    for (int r = 0; r < p.G * t.nq; ++r) {
      float mx = -std::numeric_limits<float>::infinity();
      for (int s = 0; s < p.nsplit; ++s) {
        mx = std::max(mx, part_m[(static_cast<size_t>(base) * p.nsplit + s) * rows + r]);
      }
      float* dst = out_row(a, p, t, r);
      std::fill(dst, dst + Dv, 0.0f);
      float sum = 0.0f;
      for (int s = 0; s < p.nsplit; ++s) {
        const size_t i = (static_cast<size_t>(base) * p.nsplit + s) * rows + r;
        const float w = std::exp(part_m[i] - mx);  // 0 for a split the row cannot see
        sum += part_l[i] * w;
        const float* src = part_acc.data() + i * Dv;
        for (int d = 0; d < Dv; ++d) dst[d] += w * src[d];
      }
      const float inv = 1.0f / sum;
      for (int d = 0; d < Dv; ++d) dst[d] *= inv;
    }
  };

  const int tasks = p.base_tasks() * p.nsplit;
  if (p.threads) {
    pool.parallel_for(tasks, [&](int i) { task(i); });
  } else {
    for (int i = 0; i < tasks; ++i) task(i);
  }
  if (p.nsplit > 1) pool.parallel_for(p.base_tasks(), [&](int i) { combine(i); });
}

}  // namespace heron::kernels
