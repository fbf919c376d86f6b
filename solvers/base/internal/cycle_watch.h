// Whether a sweep method's best error has stopped moving: the turn of NSGS's and
// nsgs-velocity's sweep order (their Options' shuffle_on_stall and reverse_on_stall). A fixed
// order can cycle, the contacts' states chasing each other round it; another order breaks the
// cycle.
#ifndef NCPKIT_SOLVERS_BASE_INTERNAL_CYCLE_WATCH_H_
#define NCPKIT_SOLVERS_BASE_INTERNAL_CYCLE_WATCH_H_

#include <string>

#include "solvers/base/internal/message_buffer.h"

namespace ncpkit::internal {

class CycleWatch {
 public:
  // Turns once `window` sweeps in a row have not lowered the best error by a thousandth; never
  // when not enabled. `best_error` is the start's.
  CycleWatch(bool enabled, int window, double best_error)
      : enabled_(enabled), window_(window), reference_(best_error) {}

  // After `sweep`, whose best error so far is best_error (a method that checks its error
  // every few sweeps calls this at its checks).
  void Update(int sweep, double best_error) {
    if (!enabled_ || turned_at_ > 0) return;
    if (best_error < (1.0 - 1e-3) * reference_) {
      reference_ = best_error;
      reference_sweep_ = sweep;
    } else if (sweep - reference_sweep_ >= window_) {
      turned_at_ = sweep;
    }
  }
  // The sweep after which the order turned, else 0.
  int turned_at() const { return turned_at_; }
  // Appends "; <order> from sweep N (<why>)" when a method that ran `sweeps` swept in the
  // turned order (not when it stopped at the turn).
  void Explain(int sweeps, const char* order, const char* why, std::string* message) const {
    if (turned_at_ == 0 || sweeps <= turned_at_) return;
    MessageBuffer text;
    text.Text("; ").Text(order).Text(" from sweep ").Integer(turned_at_ + 1);
    text.Text(" (").Text(why).Text(")").AppendTo(message);
  }

 private:
  bool enabled_;
  int window_;
  double reference_;
  int reference_sweep_ = 0;
  int turned_at_ = 0;
};

}  // namespace ncpkit::internal

#endif  // NCPKIT_SOLVERS_BASE_INTERNAL_CYCLE_WATCH_H_
