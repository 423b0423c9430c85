#include "agent/benchmarks/collective/gloo_mesh.h"

#include <string>
#include <vector>

#include "gloo/common/error.h"
#include "gloo/transport/context.h"
#include "gloo/transport/pair.h"

namespace fleetbench::collective {

void GlooMesh::ThrowIfInterrupted() {
  std::lock_guard<std::mutex> lock(mu_);
  if (interrupted_) throw gloo::IoException("gloo mesh: interrupted");
}

void GlooMesh::Connect(gloo::rendezvous::Store& store,
                       const std::shared_ptr<gloo::transport::Device>& device) {
  std::shared_ptr<gloo::transport::Context> transport =
      device->createContext(rank, size);
  transport->setTimeout(getTimeout());
  std::vector<char> mine;
  {
    // Made under the lock, so that Interrupt() never walks a half-made
    // list of pairs.
    std::lock_guard<std::mutex> lock(mu_);
    if (interrupted_) throw gloo::IoException("gloo mesh: interrupted");
    for (int peer = 0; peer < size; ++peer) {
      if (peer == rank) continue;
      const std::vector<char> address =
          transport->createPair(peer)->address().bytes();
      mine.insert(mine.end(), address.begin(), address.end());
    }
    pending_ = transport;
  }
  store.set(std::to_string(rank), mine);
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    const std::string key = std::to_string(peer);
    store.wait({key}, getTimeout());
    const std::vector<char> theirs = store.get(key);
    // The peer's list holds one address per other rank, in rank order
    // without itself: ours is at index rank, less one past the peer.
    const size_t each = theirs.size() / static_cast<size_t>(size - 1);
    const size_t index = static_cast<size_t>(rank > peer ? rank - 1 : rank);
    if (each == 0 || theirs.size() % static_cast<size_t>(size - 1) != 0) {
      throw gloo::IoException("gloo mesh: rank " + key +
                              " published a malformed address list");
    }
    const std::vector<char> address(
        theirs.begin() + static_cast<std::ptrdiff_t>(index * each),
        theirs.begin() + static_cast<std::ptrdiff_t>((index + 1) * each));
    ThrowIfInterrupted();
    transport->getPair(peer)->connect(address);
    // A pair closed by Interrupt() returns from connect as if connected.
    ThrowIfInterrupted();
  }
  device_ = device;
  transportContext_ = std::move(transport);
}

void GlooMesh::Interrupt() {
  std::lock_guard<std::mutex> lock(mu_);
  interrupted_ = true;
  if (pending_ == nullptr) return;
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    std::unique_ptr<gloo::transport::Pair>& pair = pending_->getPair(peer);
    if (pair != nullptr) pair->close();
  }
}

}  // namespace fleetbench::collective
