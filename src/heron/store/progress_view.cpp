#include "heron/store/progress_view.h"

namespace heron::store {

namespace {

std::string megabytes(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

}  // namespace

void ProgressView::operator()(const Progress& p) {
  const auto now = std::chrono::steady_clock::now();
  if (p.status != status_) {
    finish();
    status_ = p.status;
    started_ = now;
    last_decile_ = -1;
    if (!p.total) {
      std::fprintf(out_, "%s\n", p.status.c_str());
      std::fflush(out_);
      return;
    }
  }
  if (!p.total) return;
  const double frac = static_cast<double>(p.completed) / static_cast<double>(p.total);
  const double secs = std::chrono::duration<double>(now - started_).count();
  const double rate = secs > 0 ? static_cast<double>(p.completed) / secs : 0;
  const double left = rate > 0 ? static_cast<double>(p.total - p.completed) / rate : 0;
  if (terminal_) {
    // Redraw at most ten times a second (models have thousands of tensors).
    if (bar_open_ && p.completed < p.total && now - drawn_ < std::chrono::milliseconds(100)) return;
    drawn_ = now;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(frac * kWidth);
    std::string bar(static_cast<size_t>(filled), '=');
    bar.resize(kWidth, ' ');
    std::fprintf(out_, "\r\033[K%s [%s] %3.0f%% %s/%s %zu/%zu tensors %s/s %.0fs left",
                 p.status.c_str(), bar.c_str(), frac * 100, megabytes(p.completed).c_str(),
                 megabytes(p.total).c_str(), p.tensors_done, p.tensors_total,
                 megabytes(static_cast<uint64_t>(rate)).c_str(), left);
    bar_open_ = true;
  } else {
    const int decile = static_cast<int>(frac * 10);
    if (decile == last_decile_) return;
    last_decile_ = decile;
    std::fprintf(out_, "%s: %d%% (%s of %s, %zu/%zu tensors)\n", p.status.c_str(), decile * 10,
                 megabytes(p.completed).c_str(), megabytes(p.total).c_str(), p.tensors_done,
                 p.tensors_total);
  }
  std::fflush(out_);
}

void ProgressView::finish() {
  if (bar_open_) std::fprintf(out_, "\n");
  bar_open_ = false;
}

}  // namespace heron::store
