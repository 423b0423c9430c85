#!/usr/bin/python3
"""One group run of `allreduce` backend=gloo through the product, for
bench/gloo_vs_torch.sh PRODUCT=1: StartRun over the gRPC API with
GROUP_MODE_GROUP over NODES, wait for it, print rank 0's all-reduce curve in
the bench's format (bytes time_us algbw_GBps busbw_GBps, one line per size).

Usage: gloo_product_run.py STUBS_DIR ADDRESS TOKEN NODES MIN_BYTES MAX_BYTES ITERS WARMUP
STUBS_DIR: the generated Python stubs (build/tests/python_client/gen).
"""
import sys
import time


def main():
    stubs, address, token, nodes, lo, hi, iters, warmup, ca_file = sys.argv[1:10]
    sys.path.insert(0, stubs)
    import grpc
    from fleetbench.v1 import fleet_service_pb2_grpc as service
    from fleetbench.v1 import node_pb2
    from fleetbench.v1 import run_pb2

    # TLS by default: the CA the controller made beside its database.
    with open(ca_file, "rb") as f:
        credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
    stub = service.FleetStub(grpc.secure_channel(address, credentials))
    auth = [("authorization", "Bearer " + token)]
    wanted = set(nodes.split(","))
    until = time.time() + 60
    while True:  # the agents dial in after the controller starts
        online = {n.name for n in stub.ListNodes(node_pb2.ListNodesRequest(), metadata=auth,
                                                 timeout=30).nodes
                  if n.status == node_pb2.NODE_STATUS_ONLINE}
        if wanted <= online:
            break
        if time.time() > until:
            sys.exit("nodes not online: %s" % sorted(wanted - online))
        time.sleep(0.2)
    request = run_pb2.StartRunRequest()
    spec = request.benchmarks.add()
    spec.name = "allreduce"
    spec.params.update({"backend": "gloo", "ops": "allreduce", "min_bytes": lo,
                        "max_bytes": hi, "iters": iters, "warmup": warmup})
    request.nodes.extend(nodes.split(","))
    request.group.mode = run_pb2.GROUP_MODE_GROUP
    run_id = stub.StartRun(request, metadata=auth, timeout=30).run_id
    done = {run_pb2.RUN_STATE_SUCCEEDED, run_pb2.RUN_STATE_FAILED, run_pb2.RUN_STATE_CANCELLED}
    while True:
        run = stub.GetRun(run_pb2.GetRunRequest(run_id=run_id, include_samples=True),
                          metadata=auth, timeout=30)
        if run.state in done:
            break
        time.sleep(0.5)  # a poll of a remote state, as the CLI's --wait does
    if run.state != run_pb2.RUN_STATE_SUCCEEDED:
        sys.exit("run %s ended %s: %s" % (run_id, run_pb2.RunState.Name(run.state),
                                           [g.reason for g in run.groups]))
    rows = []
    for s in run.samples:
        if s.metric == "allreduce.gloo.curve_busbw_GBps" and s.params["op"] == "allreduce":
            rows.append((int(s.params["bytes"]), s.params["time_us"], s.params["algbw_GBps"],
                         s.value, s.params["ranks"]))
    for b, t, a, busbw, ranks in sorted(rows):
        print("%d %s %s %.4f" % (b, t, a, busbw))
    print("# run %s ranks=%s" % (run_id, rows[0][4] if rows else "?"))


if __name__ == "__main__":
    main()
