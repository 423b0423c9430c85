#!/usr/bin/env python3
"""Fails when a lower layer of fleetbench includes a higher one.

Usage: check_layers.py [SOURCE_ROOT]   (default: the checkout this script is in)
       check_layers.py --self-test      (planted violations must be found)

Every C++/CUDA file under a layer folder may include, with quotes, only the
project folders its rule lists (longest folder prefix wins). Includes of
outside libraries ("absl/...", "gtest/...", <cuda.h>, ...) are not checked;
"fleetbench/v1/..." is the generated protobuf code, named `proto` below.
A project folder with no rule fails too, so a new folder gets one.
Prints one line per violation and exits 1; exits 0 when the tree is clean.
"""
import os
import re
import sys

# The project's own top-level include roots; anything else is a library.
PROJECT_ROOTS = {"agent", "bench", "cli", "common", "controller", "diagnosis", "fleetbench",
                 "kernels", "proto", "storage", "tests", "tools"}

# Layer folder -> what it may include (folder prefixes; a file path is
# allowed when it starts with one of them). Lowest layers first.
RULES = {
    # The CUDA layer: itself, CUDA, NCCL, cuBLAS and Abseil only.
    "kernels": ["kernels/"],
    "common": ["common/", "proto"],
    "storage": ["storage/", "common/", "proto"],
    # Judgment: pure rules over inputs its callers gather.
    "diagnosis": ["diagnosis/", "common/", "proto"],
    # Facts may use the GPU module's plain-C++ status helpers (kernels/ is
    # the lowest layer).
    "agent/facts": ["agent/facts/", "kernels/", "common/", "proto"],
    # Plugins: the module ABI from kernels/, facts, the shared layer.
    "agent/benchmarks": ["agent/benchmarks/", "agent/facts/", "kernels/",
                         "common/", "proto"],
    "agent/runtime": ["agent/runtime/", "agent/benchmarks/benchmark.h",
                      "agent/facts/", "common/", "proto"],
    # The controller's parts, lowest first. Ranking math is pure.
    "controller/ranking": ["controller/ranking/", "common/", "proto"],
    # The domain core: one actor and its parts over the store; no gRPC, no
    # HTTP (LIBRARY_BANS), nothing of the edges above it.
    "controller/core": ["controller/core/", "controller/ranking/", "diagnosis/", "storage/",
                        "common/", "proto"],
    # Who may call: tokens, roles, identities, TLS, audit. From the core only
    # the bounds on a node's name, which an enrollment checks as a hello does.
    "controller/security": ["controller/security/", "controller/core/report_limits.h",
                            "storage/", "common/", "proto"],
    # The two edges: gRPC services and the HTTP side (metrics, dashboard,
    # login sessions). Each asks the core; neither includes the other.
    "controller/api": ["controller/api/", "controller/security/", "controller/core/",
                       "controller/ranking/", "diagnosis/", "storage/", "common/", "proto"],
    "controller/http": ["controller/http/", "controller/security/", "controller/core/",
                        "controller/ranking/", "diagnosis/", "storage/", "common/", "proto"],
    # The server that wires the parts together.
    "controller": ["controller/", "diagnosis/", "storage/", "common/", "proto"],
    # The binary wires everything together, but its client commands speak
    # the API only: from the controller it starts the server, and an offline
    # command on a history file (store copy) takes the file's lock as a
    # controller would; nothing else.
    "cli": ["cli/", "controller/controller_server.h", "controller/history_lock.h", "agent/",
            "diagnosis/",
            "storage/", "common/", "proto"],
    # Tests, benchmarks and tools may reach anything.
    "tests": None,
    "bench": None,
    "tools": None,
    "proto": ["proto"],
}

# Test files beside their code may also use the shared test helpers.
TEST_EXTRA = ["tests/"]

# Outside libraries a layer must not include (with quotes or angle
# brackets), by prefix: the domain core and the ranking math speak neither
# gRPC nor HTTP, so they are tested directly and any edge can sit on them.
EDGE_LIBRARIES = ["grpcpp/", "grpc/", "grpc++/", "httplib.h"]
LIBRARY_BANS = {
    "controller/core": EDGE_LIBRARIES,
    "controller/ranking": EDGE_LIBRARIES,
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
ANY_INCLUDE = re.compile(r'^\s*#\s*include\s+["<]([^">]+)[">]')
SOURCE_SUFFIXES = (".cc", ".h", ".cu", ".cuh")
SKIP_DIRS = {".git", "build", "out"}


def rule_for(rel_path):
    """The layer folder that owns rel_path (longest prefix), or None."""
    best = None
    for layer in RULES:
        if rel_path.startswith(layer + "/") and (best is None or len(layer) > len(best)):
            best = layer
    return best


# Folders under agent/benchmarks/ that hold code two plugins share and are
# not plugins themselves: any plugin may include them, and they include no
# plugin. pairwise/: the two-node helpers of net and rdma; disk_common/: the
# measurement arithmetic and scratch folder of disk and smallfiles; stream/:
# the STREAM kernels, threads and cache sizing of mem and mem_numa;
# workload_process/: running a user's workload command as a supervised
# process tree, for any plugin that runs one. workload_output/: the parsers
# that turn a user's workload output into metrics.
SHARED_FOLDERS = {"pairwise", "disk_common", "stream", "workload_process", "workload_output"}


def plugin_folder(rel_path):
    """"gpu" for agent/benchmarks/gpu/x.cc; None for the shared top level."""
    parts = rel_path.split("/")
    if len(parts) >= 4 and parts[0] == "agent" and parts[1] == "benchmarks":
        return parts[2]
    return None


def allowed(target, prefixes, source=None):
    # One folder a plugin: a plugin includes its own folder, the shared
    # files at agent/benchmarks/ and the shared folders, never another
    # plugin; a shared folder includes no plugin either.
    source_plugin = plugin_folder(source) if source else None
    target_plugin = plugin_folder(target)
    if (source_plugin is not None and target_plugin is not None
            and target_plugin != source_plugin
            and target_plugin not in SHARED_FOLDERS):
        return False
    for prefix in prefixes:
        if prefix == "proto":
            if target.startswith("fleetbench/v1/"):
                return True
        elif prefix.endswith("/") and target.startswith(prefix):
            return True
        elif target == prefix:
            return True
    return False


def check(root):
    violations = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames
                       if d not in SKIP_DIRS and not d.startswith("build")]
        for name in filenames:
            if not name.endswith(SOURCE_SUFFIXES):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            if "/" not in rel:
                continue
            layer = rule_for(rel)
            if layer is None:
                violations.append(f"{rel}: folder has no layer rule in tools/check_layers.py")
                continue
            prefixes = RULES[layer]
            if prefixes is None:
                continue
            if name.endswith("_test.cc"):
                prefixes = prefixes + TEST_EXTRA
            bans = LIBRARY_BANS.get(layer, [])
            with open(path, encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    any_include = ANY_INCLUDE.match(line)
                    if any_include and any(any_include.group(1).startswith(b) for b in bans):
                        violations.append(
                            f"{rel}:{lineno}: layer {layer} includes {any_include.group(1)}")
                        continue
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    if target.split("/", 1)[0] not in PROJECT_ROOTS:
                        continue
                    if not allowed(target, prefixes, rel):
                        violations.append(
                            f"{rel}:{lineno}: layer {layer} includes {target}")
    return violations


def self_test():
    """The check must be able to fail: plant violations in a scratch tree."""
    import tempfile
    cases = {
        "kernels/k.cc": ('#include "agent/benchmarks/gpu/api.h"', True),
        "storage/s.cc": ('#include "controller/core/fleet_core.h"', True),
        "agent/facts/f.cc": ('#include "agent/runtime/agent.h"', True),
        "agent/benchmarks/rdma/r.cc": ('#include "agent/benchmarks/net/tcp.h"', True),
        "cli/c.cc": ('#include "controller/core/fleet_core.h"', True),
        # The controller's parts: nothing includes upward, the two edges
        # never each other, the core and ranking no gRPC or HTTP.
        "controller/ranking/r.cc": ('#include "controller/core/fleet_core.h"', True),
        "controller/core/c.cc": ('#include "controller/api/fleet_service.h"', True),
        "controller/core/d.cc": ('#include "controller/http/http_server.h"', True),
        "controller/core/e.cc": ('#include "controller/security/auth.h"', True),
        "controller/core/g.cc": ('#include <grpcpp/grpcpp.h>', True),
        "controller/core/h.cc": ('#include "httplib.h"', True),
        "controller/ranking/g.cc": ('#include "grpcpp/support/status.h"', True),
        "controller/security/s.cc": ('#include "controller/core/fleet_core.h"', True),
        "controller/security/t.cc": ('#include "controller/api/fleet_service.h"', True),
        "controller/api/a.cc": ('#include "controller/http/metrics_page.h"', True),
        "controller/api/b.cc": ('#include "controller/controller_server.h"', True),
        "controller/http/h.cc": ('#include "controller/api/fleet_service.h"', True),
        "controller/http/dashboard/d.cc": ('#include "controller/api/agent_gateway_service.h"', True),
        "controller/http/i.cc": ('#include "controller/controller_server.h"', True),
        "controller/core/ok.cc": ('#include "controller/ranking/ranking.h"\n#include "storage/store.h"', False),
        "controller/security/ok.cc": ('#include "controller/core/report_limits.h"\n#include <grpcpp/server_context.h>', False),
        "controller/api/ok.cc": ('#include "controller/security/auth.h"\n#include "controller/core/fleet_core.h"', False),
        "controller/http/ok.cc": ('#include "controller/security/auth.h"\n#include "httplib.h"', False),
        "controller/x.cc": ('#include "controller/api/fleet_service.h"\n#include "controller/http/http_server.h"', False),
        "newlayer/n.cc": ('#include "common/ids.h"', True),
        # Judgment stays pure: no facts reader, plugin or store; and the
        # plugins measure, they do not judge. Shared GPU data is common/.
        "diagnosis/d.cc": ('#include "agent/facts/gpu_facts.h"', True),
        "diagnosis/e.cc": ('#include "storage/store.h"', True),
        "agent/benchmarks/gpu/g.cc": ('#include "diagnosis/node_rules.h"', True),
        "diagnosis/ok.cc": ('#include "common/gpu_skus.h"', False),
        "agent/benchmarks/gpu/ok.cc": ('#include "common/gpu_skus.h"', False),
        "agent/benchmarks/rdma/ok.cc": ('#include "agent/benchmarks/pairwise/p.h"', False),
        # One folder a plugin: smallfiles and disk share disk_common/, mem
        # and mem_numa share stream/; none includes the other's folder, and
        # a shared folder includes no plugin.
        "agent/benchmarks/smallfiles/x.cc": ('#include "agent/benchmarks/disk/disk_uring.h"', True),
        "agent/benchmarks/smallfiles/ok.cc": ('#include "agent/benchmarks/disk_common/scratch_path.h"', False),
        "agent/benchmarks/disk/ok.cc": ('#include "agent/benchmarks/disk_common/disk_math.h"', False),
        "agent/benchmarks/mem_numa/x.cc": ('#include "agent/benchmarks/mem/mem_stream.h"', True),
        "agent/benchmarks/mem_numa/ok.cc": ('#include "agent/benchmarks/stream/stream_team.h"', False),
        "agent/benchmarks/mem/ok.cc": ('#include "agent/benchmarks/stream/last_level_cache.h"', False),
        "agent/benchmarks/stream/x.cc": ('#include "agent/benchmarks/mem/mem_stream.h"', True),
        "agent/benchmarks/disk_common/x.cc": ('#include "agent/benchmarks/smallfiles/smallfiles.h"', True),
        "agent/benchmarks/gpu/w.cc": ('#include "agent/benchmarks/workload_process/workload_process.h"', False),
        "agent/benchmarks/workload_process/x.cc": ('#include "agent/benchmarks/gpu/gpu_api.h"', True),
        "agent/benchmarks/workload/ok.cc": ('#include "agent/benchmarks/workload_output/mllog.h"', False),
        "agent/benchmarks/workload_output/x.cc": ('#include "agent/benchmarks/workload/workload.h"', True),
        "controller/ok.cc": ('#include "storage/store.h"\n#include "absl/status/status.h"', False),
        "cli/ok.cc": ('#include "controller/controller_server.h"', False),
    }
    failures = 0
    for rel, (text, bad) in cases.items():
        with tempfile.TemporaryDirectory() as root:
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path))
            with open(path, "w") as f:
                f.write(text.replace("\\n", "\n") + "\n")
            found = bool(check(root))
            if found != bad:
                print(f"self-test: {rel} with {text!r}: expected "
                      f"{'a violation' if bad else 'none'}, got {'one' if found else 'none'}")
                failures += 1
    print(f"check_layers self-test: {len(cases) - failures} of {len(cases)} cases as expected")
    return 1 if failures else 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    violations = check(root)
    for v in sorted(violations):
        print(v)
    if violations:
        print(f"check_layers: {len(violations)} include(s) from a lower layer to a higher one",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
