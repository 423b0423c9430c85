// agent/benchmarks/collective/gloo_mesh.h — gloo's full-mesh connect over a
// rendezvous store, made interruptible.
//
// Why not gloo::rendezvous::Context::connectFullMesh: its pairs live in a
// local of that function, and the listening end of a pair waits for its
// peer up to five times the context's timeout, with nothing that can end
// the wait. A member cancelled while a peer had not dialled in kept a
// thread (and the gloo device's loop thread) until long after its group was
// over. GlooMesh does the same exchange (each rank publishes its pairs'
// addresses under "<rank>", reads every other rank's and connects each pair;
// the same keys and layout, so every member must use it) but keeps the
// pairs where Interrupt() can close them: a closed pair ends the wait at
// once, and Connect() then throws.
//
// Thread safety: Connect() on one thread; Interrupt() from any thread, any
// time (before, during or after Connect()).
#ifndef FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_GLOO_MESH_H_
#define FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_GLOO_MESH_H_

#include <memory>
#include <mutex>

#include "gloo/context.h"
#include "gloo/rendezvous/store.h"
#include "gloo/transport/device.h"

namespace fleetbench::collective {

class GlooMesh final : public gloo::Context {
 public:
  GlooMesh(int rank, int size) : gloo::Context(rank, size) {}

  // Meets every other rank through `store` and connects a pair to each,
  // each connect waiting at most the context's timeout (setTimeout) as
  // gloo's does. Throws what gloo and the store throw; gloo::IoException
  // once interrupted.
  void Connect(gloo::rendezvous::Store& store,
               const std::shared_ptr<gloo::transport::Device>& device);

  // Closes every pair made so far, and makes Connect() stop before it makes
  // or connects another.
  void Interrupt();

 private:
  void ThrowIfInterrupted();

  std::mutex mu_;
  bool interrupted_ = false;                           // guarded by mu_
  std::shared_ptr<gloo::transport::Context> pending_;  // guarded by mu_
};

}  // namespace fleetbench::collective

#endif  // FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_GLOO_MESH_H_
