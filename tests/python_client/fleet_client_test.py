"""The user API serves a client that is not our C++ CLI.

A real controller and a real agent (the built fleetbench binary) on
loopback; everything else goes through Python stubs that protoc generated
from proto/fleetbench/v1/fleet_service.proto, authenticating as any client
must: metadata "authorization: Bearer <token>". Standard library besides
grpc and protobuf.

    /usr/bin/python3 fleet_client_test.py --fleetbench PATH/TO/fleetbench \
        --stubs BUILD/tests/python_client/gen [unittest options]
"""

import argparse
import ctypes
import math
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest


def _parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fleetbench", required=True, help="the built fleetbench binary")
    parser.add_argument("--stubs", required=True, help="folder with the generated fleetbench/v1/*_pb2*.py")
    args, rest = parser.parse_known_args()
    # The processes start in their own folders: relative paths would break.
    args.fleetbench = os.path.abspath(args.fleetbench)
    args.stubs = os.path.abspath(args.stubs)
    return args, rest


ARGS, UNITTEST_ARGV = _parse_args()
sys.path.insert(0, ARGS.stubs)
try:
    import grpc
    from fleetbench.v1 import fleet_service_pb2_grpc as fleet_grpc
    from fleetbench.v1 import agent_pb2
    from fleetbench.v1 import node_pb2
    from fleetbench.v1 import rank_pb2
    from fleetbench.v1 import result_pb2
    from fleetbench.v1 import run_pb2
except ImportError as error:
    # A failure, not a skip: a missing runtime must not pass as green.
    sys.exit(f"fleet_client_test: cannot import the gRPC runtime or the generated stubs "
             f"({error}) with {sys.executable}; install python3-grpcio and python3-protobuf "
             f"(deploy/install-deps.sh) and build the fleetbench_python_stubs target")

# The API's states and groupings, as the enums of fleetbench.v1; these lines
# are the only ones that name them.
NODE_ONLINE = node_pb2.NODE_STATUS_ONLINE
RUN_SUCCEEDED = run_pb2.RUN_STATE_SUCCEEDED
RUN_ENDED = (run_pb2.RUN_STATE_SUCCEEDED, run_pb2.RUN_STATE_FAILED, run_pb2.RUN_STATE_CANCELLED)
RANK_BY_NODE = rank_pb2.RANK_GROUPING_NODE

NODE_NAME = "py-node"
PRICE_PER_HOUR = 3.5
# STREAM on small arrays, one thread: a fraction of a second of measuring.
MEM_PARAMS = {"array_mib": "8", "repetitions": "3", "threads": "1"}
MEM_METRICS = {"mem.copy.GBps", "mem.scale.GBps", "mem.add.GBps", "mem.triad.GBps"}
RANKED_METRIC = "mem.triad.GBps"
CALL_TIMEOUT_S = 10


def wait_for(condition, timeout_s, what):
    """Polls `condition` until it returns something true, with a deadline:
    waiting on a state another process reaches, never a fixed sleep."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.1)


# Looked up here, not in the forked child, where loading a library is unsafe.
_PRCTL = ctypes.CDLL(None).prctl
_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    # Children must not outlive this process even when it is SIGKILLed (a
    # CTest timeout): the kernel sends them SIGKILL when it exits.
    _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)


class Fleet:
    """A controller and one agent, each in its own folder under one temp root."""

    def __init__(self, binary):
        self.binary = binary
        self.root = tempfile.mkdtemp(prefix="fleetbench-pyclient-")
        self.token = secrets.token_hex(16)
        self.token_file = os.path.join(self.root, "token")
        with open(os.open(self.token_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(self.token + "\n")
        # Nothing from the caller's environment chooses a token or controller.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETBENCH_")}
        self.processes = []  # (name, Popen), in start order
        self.address = None

    def _start(self, name, argv, stdout):
        folder = os.path.join(self.root, name)
        os.makedirs(folder)
        with open(os.path.join(folder, "stderr.log"), "wb") as stderr:
            process = subprocess.Popen(argv, cwd=folder, env=self.env, stdin=subprocess.DEVNULL,
                                       stdout=stdout, stderr=stderr, preexec_fn=_die_with_parent)
        self.processes.append((name, process))
        return folder, process

    def start_controller(self, timeout_s=30):
        # Port 0: the kernel picks a free loopback port and the controller
        # prints it ("listening PORT"), so no other process can take it first.
        folder = os.path.join(self.root, "controller")
        _, process = self._start(
            "controller",
            [self.binary, "controller", "--listen", "127.0.0.1:0",
             "--db", os.path.join(folder, "history.db"), "--token-file", self.token_file],
            stdout=subprocess.PIPE)
        line = self._read_line(process, timeout_s)
        if not line.startswith("listening "):
            raise RuntimeError(f"controller did not report its port (got {line!r}); "
                               f"see {folder}/stderr.log:\n{self.log_tail('controller')}")
        self.address = "127.0.0.1:" + line.split()[1]
        # TLS by default: the CA the controller made beside its
        # database checks it, for the agent and for this client alike.
        self.ca_file = os.path.join(folder, "history.db.tls", "ca.pem")

    @staticmethod
    def _read_line(process, timeout_s):
        deadline = time.monotonic() + timeout_s
        buffer = b""
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            while b"\n" not in buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    break
                chunk = os.read(process.stdout.fileno(), 4096)
                if not chunk:  # exited
                    break
                buffer += chunk
        return buffer.split(b"\n")[0].decode(errors="replace")

    def start_agent(self, name, labels):
        argv = [self.binary, "agent", "--controller", self.address, "--name", name,
                "--state-dir", os.path.join(self.root, "agent-" + name, "state"),
                "--token-file", self.token_file, "--ca", self.ca_file]
        for key, value in labels.items():
            argv += ["--label", f"{key}={value}"]
        self._start("agent-" + name, argv, stdout=subprocess.DEVNULL)

    def stop(self):
        """SIGTERM, then SIGKILL after a grace period; agents before the controller."""
        for name, process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    print(f"{name} ignored SIGTERM for 10 s; SIGKILL", file=sys.stderr)
                    process.kill()
                    process.wait()
            if process.stdout:
                process.stdout.close()

    def log_tail(self, name, lines=30):
        path = os.path.join(self.root, name, "stderr.log")
        try:
            with open(path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError as error:
            return f"({error})"


class FleetClientTest(unittest.TestCase):
    fleet = None  # set by main()

    @classmethod
    def setUpClass(cls):
        with open(cls.fleet.ca_file, "rb") as f:
            credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
        cls.channel = grpc.secure_channel(cls.fleet.address, credentials)
        cls.addClassCleanup(cls.channel.close)
        cls.stub = fleet_grpc.FleetStub(cls.channel)
        cls.auth = [("authorization", "Bearer " + cls.fleet.token)]

    def call(self, method, request, **kwargs):
        return method(request, metadata=self.auth, timeout=CALL_TIMEOUT_S, **kwargs)

    def online_node(self):
        nodes = self.call(self.stub.ListNodes, node_pb2.ListNodesRequest()).nodes
        return next((n for n in nodes if n.name == NODE_NAME and n.status == NODE_ONLINE), None)

    def wait_online(self):
        return wait_for(self.online_node, 30, f"{NODE_NAME} to be {NODE_ONLINE}")

    def assertRefused(self, method, request, metadata=()):
        with self.assertRaises(grpc.RpcError) as caught:
            method(request, metadata=metadata, timeout=CALL_TIMEOUT_S)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.UNAUTHENTICATED,
                         caught.exception.details())

    def test_calls_without_the_right_token_are_unauthenticated(self):
        self.wait_online()  # the controller is serving: a refusal is a verdict
        runs_before = len(self.call(self.stub.ListRuns, run_pb2.ListRunsRequest()).runs)
        self.assertRefused(self.stub.ListNodes, node_pb2.ListNodesRequest())
        self.assertRefused(self.stub.ListNodes, node_pb2.ListNodesRequest(),
                           metadata=[("authorization", "Bearer not-" + self.fleet.token)])
        start = run_pb2.StartRunRequest(
            benchmarks=[result_pb2.BenchmarkSpec(name="mem", params=MEM_PARAMS)])
        self.assertRefused(self.stub.StartRun, start)
        # Refused means nothing was done.
        runs_after = len(self.call(self.stub.ListRuns, run_pb2.ListRunsRequest()).runs)
        self.assertEqual(runs_after, runs_before)

    def test_agent_registers_with_its_labels_and_facts(self):
        node = self.wait_online()
        self.assertEqual(node.labels["price_per_hour"], str(PRICE_PER_HOUR))
        self.assertEqual(node.labels["provider"], "local")
        self.assertTrue(node.facts.hostname)
        self.assertGreater(node.facts.cpu.logical_cores, 0)
        self.assertGreater(node.facts.memory_total_bytes, 0)
        self.assertIn("mem", {c.benchmark for c in node.capabilities
                              if c.status == agent_pb2.CAPABILITY_STATUS_AVAILABLE})

    def test_run_measures_and_ranks_by_cost(self):
        self.wait_online()
        started = self.call(self.stub.StartRun, run_pb2.StartRunRequest(
            benchmarks=[result_pb2.BenchmarkSpec(name="mem", params=MEM_PARAMS)],
            nodes=[NODE_NAME], suite="python-client"))
        self.assertTrue(started.run_id)
        self.assertEqual(list(started.nodes), [NODE_NAME])

        def ended():
            run = self.call(self.stub.GetRun, run_pb2.GetRunRequest(run_id=started.run_id))
            return run if run.state in RUN_ENDED else None
        run = wait_for(ended, 120, f"run {started.run_id} to end")
        self.assertEqual(run.state, RUN_SUCCEEDED, run)
        self.assertEqual(len(run.tasks), 1)
        self.assertEqual(run.tasks[0].node, NODE_NAME)
        self.assertEqual(run.tasks[0].state, result_pb2.TASK_STATE_SUCCEEDED, run.tasks[0])
        self.assertEqual(len(run.samples), 0, "samples only when asked for")

        run = self.call(self.stub.GetRun, run_pb2.GetRunRequest(run_id=started.run_id,
                                                                   include_samples=True))
        self.assertEqual({s.metric for s in run.samples}, MEM_METRICS)
        for s in run.samples:
            with self.subTest(metric=s.metric):
                self.assertEqual(s.benchmark, "mem")
                self.assertEqual(s.node, NODE_NAME)
                self.assertEqual(s.run_id, started.run_id)
                self.assertTrue(math.isfinite(s.value) and s.value > 0, s.value)
                self.assertTrue(s.unit)
                self.assertTrue(s.metric.endswith("." + s.unit), "unit last in the metric name")
                self.assertEqual(s.params["array_mib"], MEM_PARAMS["array_mib"])
        measured = [s.value for s in run.samples if s.metric == RANKED_METRIC]
        self.assertEqual(len(measured), 1)

        rank = self.call(self.stub.Rank, rank_pb2.RankRequest(metric=RANKED_METRIC,
                                                               by=RANK_BY_NODE))
        self.assertEqual(rank.metric, RANKED_METRIC)
        self.assertEqual(rank.unit, "GBps")
        self.assertTrue(rank.higher_is_better)
        rows = [r for r in rank.rows if r.group == NODE_NAME]
        self.assertEqual(len(rows), 1, rank)
        row = rows[0]
        # One sample in the history: it is the median.
        self.assertEqual(row.median, measured[0])
        self.assertEqual(row.run_count, 1)
        self.assertTrue(row.priced)
        self.assertEqual(row.price_per_hour, PRICE_PER_HOUR)
        self.assertTrue(math.isclose(row.cost_per_unit, PRICE_PER_HOUR / row.median,
                                     rel_tol=1e-9), row)


def _interrupt(signum, _frame):
    # KeyboardInterrupt, because unittest records any other exception as one
    # test's error and goes on to the next; this one it lets through to the
    # `finally` below, which stops the fleet.
    raise KeyboardInterrupt(f"signal {signum}")


def main():
    signal.signal(signal.SIGTERM, _interrupt)
    if not os.access(ARGS.fleetbench, os.X_OK):
        sys.exit(f"fleet_client_test: {ARGS.fleetbench} is not an executable; build fleetbench")
    fleet = Fleet(ARGS.fleetbench)
    ok = False
    try:
        fleet.start_controller()
        fleet.start_agent(NODE_NAME, {"provider": "local", "price_per_hour": PRICE_PER_HOUR})
        FleetClientTest.fleet = fleet
        program = unittest.main(argv=[sys.argv[0]] + UNITTEST_ARGV, exit=False, verbosity=2)
        ok = program.result.wasSuccessful()
    finally:
        fleet.stop()
        if ok:
            shutil.rmtree(fleet.root, ignore_errors=True)
        else:
            for name, _ in fleet.processes:
                print(f"--- {name} stderr (tail) ---\n{fleet.log_tail(name)}", file=sys.stderr)
            print(f"fleet_client_test: logs kept in {fleet.root}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
