#include "agent/runtime/controller_list.h"

#include <utility>

namespace fleetbench::agent {

ControllerList::ControllerList(std::vector<std::string> addresses)
    : addresses_(std::move(addresses)) {
  if (addresses_.empty()) addresses_.emplace_back();  // dials "", which fails and says so
}

bool ControllerList::SessionEnded(bool welcomed) {
  if (welcomed) {
    unanswered_ = 0;
    return true;
  }
  current_ = (current_ + 1) % addresses_.size();
  if (++unanswered_ < addresses_.size()) return false;
  unanswered_ = 0;
  return true;
}

}  // namespace fleetbench::agent
