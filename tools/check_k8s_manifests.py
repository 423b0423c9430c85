#!/usr/bin/env python3
"""tools/check_k8s_manifests.py FLEETBENCH_BINARY MANIFEST... — a structural
check of the Kubernetes manifests in deploy/k8s/ (CTest k8s_manifests_check
and k8s_postgres_manifests_check). The manifests given are one shape of a
deployment: a controller on SQLite (a StatefulSet of one) or controllers on
PostgreSQL (deploy/k8s/postgres/: a Deployment of two or more, all
--standby), with the agent DaemonSet.

What it checks:
  1. Each document against a hand-written minimal JSON Schema for its kind
     (SCHEMAS below: the fields fleetbench relies on, their types, and no
     unknown keys where a typo would silently do nothing: a container, a
     pod spec, a security context).
  2. The references between documents: every Secret, ServiceAccount and
     volume named is defined; Service selectors select the StatefulSet's
     pods; the StatefulSet's serviceName is that Service; selectors match
     their templates; the PVC is mounted where --db points.
  3. What the deployment must do: on SQLite, the PVC is mounted at --db's
     folder; on PostgreSQL, --db is a postgresql:// URL whose password file
     and the fleet's CA come from Secrets (the CA copied by an init
     container into the state folder, where the controller writes its
     server certificate), every replica starts with --standby, the
     readiness probe watches the gRPC port (a standby does not listen until
     it leads: that probe is what sends the Service's
     traffic to the leader), and no liveness probe at all (a standby
     listens on no port), and the Deployment updates by Recreate (only
     the leader is ever Ready). The agent DaemonSet has hostNetwork with
     ClusterFirstWithHostNet, tolerates nvidia.com/gpu, takes its name from
     spec.nodeName through the downward API and passes it as --name, adds
     exactly the capability IPC_LOCK after dropping ALL and is not
     privileged; no container escalates privileges.
  4. Every fleetbench flag the manifests pass is one the built binary's
     `fleetbench CMD --help` lists, and --controller names the Service.
What it does not prove: that a cluster accepts the manifests (no API
server, no admission, no full OpenAPI schema), that the images exist, that
the RDMA device plugin or the NVIDIA runtime class is installed, or that
the init container's kubectl calls succeed. --self-test breaks copies of
the manifests on purpose and fails unless the check catches each break
with the error that break must cause.
"""
import copy
import re
import shlex
import subprocess
import sys

import jsonschema
import yaml

META = {"type": "object", "required": ["name"],
        "properties": {"name": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"},
                       "namespace": {"type": "string"}, "labels": {"type": "object"}}}
STR_LIST = {"type": "array", "items": {"type": "string"}}
SECURITY = {"type": "object", "additionalProperties": False, "properties": {
    "allowPrivilegeEscalation": {"type": "boolean"}, "readOnlyRootFilesystem": {"type": "boolean"},
    "privileged": {"type": "boolean"}, "runAsNonRoot": {"type": "boolean"},
    "runAsUser": {"type": "integer"}, "capabilities": {
        "type": "object", "additionalProperties": False,
        "properties": {"drop": STR_LIST, "add": STR_LIST}}}}
ENV = {"type": "array", "items": {"type": "object", "required": ["name"], "additionalProperties": False,
       "properties": {"name": {"type": "string"}, "value": {"type": "string"},
                      "valueFrom": {"type": "object", "properties": {"fieldRef": {
                          "type": "object", "required": ["fieldPath"],
                          "properties": {"fieldPath": {"type": "string"}}}}}}}}
PORT_REF = {"type": ["integer", "string"]}
PROBE = {"type": "object", "properties": {"tcpSocket": {"type": "object", "required": ["port"],
                                                        "properties": {"port": PORT_REF}}}}
CONTAINER = {"type": "object", "required": ["name", "image"], "additionalProperties": False,
             "properties": {
                 "name": {"type": "string"}, "image": {"type": "string"}, "command": STR_LIST,
                 "args": STR_LIST, "env": ENV,
                 "ports": {"type": "array", "items": {"type": "object", "required": ["containerPort"],
                           "properties": {"name": {"type": "string"},
                                          "containerPort": {"type": "integer"}}}},
                 "readinessProbe": PROBE, "livenessProbe": PROBE,
                 "resources": {"type": "object", "additionalProperties": False,
                               "properties": {"requests": {"type": "object"},
                                              "limits": {"type": "object"}}},
                 "securityContext": SECURITY,
                 "volumeMounts": {"type": "array", "items": {
                     "type": "object", "required": ["name", "mountPath"], "additionalProperties": False,
                     "properties": {"name": {"type": "string"}, "mountPath": {"type": "string"},
                                    "readOnly": {"type": "boolean"}}}}}}
POD_SPEC = {"type": "object", "required": ["containers"], "additionalProperties": False,
            "properties": {
                "containers": {"type": "array", "minItems": 1, "items": CONTAINER},
                "initContainers": {"type": "array", "items": CONTAINER},
                "volumes": {"type": "array", "items": {"type": "object", "required": ["name"]}},
                "securityContext": {"type": "object"}, "serviceAccountName": {"type": "string"},
                "hostNetwork": {"type": "boolean"},
                "dnsPolicy": {"enum": ["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"]},
                "runtimeClassName": {"type": "string"},
                "terminationGracePeriodSeconds": {"type": "integer"},
                "tolerations": {"type": "array", "items": {
                    "type": "object", "additionalProperties": False,
                    "properties": {"key": {"type": "string"},
                                   "operator": {"enum": ["Exists", "Equal"]},
                                   "value": {"type": "string"},
                                   "effect": {"enum": ["NoSchedule", "PreferNoSchedule", "NoExecute"]}}}}}}
TEMPLATE = {"type": "object", "required": ["metadata", "spec"],
            "properties": {"metadata": {"type": "object", "required": ["labels"]}, "spec": POD_SPEC}}
SELECTOR = {"type": "object", "required": ["matchLabels"],
            "properties": {"matchLabels": {"type": "object"}}}


def kind_schema(api, spec):
    return {"type": "object", "required": ["apiVersion", "kind", "metadata"] + (["spec"] if spec else []),
            "properties": {"apiVersion": {"const": api}, "metadata": META,
                           **({"spec": spec} if spec else {})}}


SCHEMAS = {
    "Namespace": kind_schema("v1", None),
    "Secret": {**kind_schema("v1", None), "anyOf": [{"required": ["data"]}, {"required": ["stringData"]}]},
    "ServiceAccount": kind_schema("v1", None),
    "ClusterRole": {**kind_schema("rbac.authorization.k8s.io/v1", None), "required": ["rules"]},
    "ClusterRoleBinding": {**kind_schema("rbac.authorization.k8s.io/v1", None),
                           "required": ["roleRef", "subjects"]},
    "Service": kind_schema("v1", {"type": "object", "required": ["selector", "ports"], "properties": {
        "selector": {"type": "object"}, "ports": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["port"],
            "properties": {"name": {"type": "string"}, "port": {"type": "integer"},
                           "targetPort": PORT_REF}}}}}),
    "StatefulSet": kind_schema("apps/v1", {"type": "object",
        "required": ["serviceName", "replicas", "selector", "template", "volumeClaimTemplates"],
        "additionalProperties": False, "properties": {
            "serviceName": {"type": "string"}, "replicas": {"const": 1}, "selector": SELECTOR,
            "template": TEMPLATE, "volumeClaimTemplates": {"type": "array", "minItems": 1, "items": {
                "type": "object", "required": ["metadata", "spec"], "properties": {"spec": {
                    "type": "object", "required": ["accessModes", "resources"],
                    "properties": {"resources": {"type": "object", "required": ["requests"], "properties": {
                        "requests": {"type": "object", "required": ["storage"]}}}}}}}}}}),
    "Deployment": kind_schema("apps/v1", {"type": "object",
        "required": ["replicas", "selector", "template"], "additionalProperties": False,
        "properties": {"replicas": {"type": "integer", "minimum": 2}, "selector": SELECTOR,
                       "template": TEMPLATE, "strategy": {"type": "object"}}}),
    "DaemonSet": kind_schema("apps/v1", {"type": "object", "required": ["selector", "template"],
        "additionalProperties": False, "properties": {
            "selector": SELECTOR, "template": TEMPLATE, "updateStrategy": {"type": "object"}}}),
}


def fleetbench_argv(container):
    """The fleetbench command line a container runs: (command, flags dict)."""
    words = list(container.get("command", [])) + list(container.get("args", []))
    if words[:2] == ["/bin/sh", "-c"]:
        words = shlex.split(words[2].replace("$(cat /run/fleetbench/labels)", ""))
        if words and words[0] == "exec":
            words = words[1:]
    if words and words[0].endswith("/fleetbench"):
        words = words[1:]
    if not words:
        return None, {}
    cmd, flags, i = words[0], {}, 1
    while i < len(words):
        w = words[i]
        if not w.startswith("--"):
            raise ValueError(f"unexpected word {w!r} in {cmd}'s command line")
        if "=" in w:
            k, v = w[2:].split("=", 1)
        elif i + 1 < len(words) and not words[i + 1].startswith("--"):
            k, v = w[2:], words[i + 1]
            i += 1
        else:
            k, v = w[2:], ""
        flags[k] = v
        i += 1
    return cmd, flags


def check(docs, binary):
    errors = []
    by_kind = {}
    for d in docs:
        kind = d.get("kind")
        if kind not in SCHEMAS:
            errors.append(f"unexpected kind {kind!r}")
            continue
        try:
            jsonschema.validate(d, SCHEMAS[kind])
        except jsonschema.ValidationError as e:
            path = "/".join(str(p) for p in e.absolute_path)
            errors.append(f"{kind} {d.get('metadata', {}).get('name')}: {path}: {e.message}")
            continue
        by_kind.setdefault(kind, []).append(d)
    if errors:
        return errors
    names = lambda kind: {d["metadata"]["name"] for d in by_kind.get(kind, [])}
    controllers = by_kind.get("StatefulSet", []) + by_kind.get("Deployment", [])
    if len(controllers) != 1:
        errors.append("want exactly one controller: a StatefulSet (SQLite) or a Deployment "
                      "(PostgreSQL)")
    if len(by_kind.get("DaemonSet", [])) != 1:
        errors.append("want exactly one DaemonSet")
    if errors:
        return errors
    sts, ds = controllers[0], by_kind["DaemonSet"][0]
    ctl_kind = sts["kind"]
    services = {d["metadata"]["name"]: d for d in by_kind.get("Service", [])}
    helps = {}

    def flags_of(cmd):
        if cmd not in helps:
            out = subprocess.run([binary, cmd, "--help"], capture_output=True, text=True).stdout + \
                subprocess.run([binary, cmd, "--help"], capture_output=True, text=True).stderr
            helps[cmd] = set(re.findall(r"^\s+--([a-z][a-z0-9-]*)", out, re.M))
        return helps[cmd]

    commands = {}
    for w in (sts, ds):
        wname = f"{w['kind']} {w['metadata']['name']}"
        spec = w["spec"]["template"]["spec"]
        labels = w["spec"]["template"]["metadata"]["labels"]
        for k, v in w["spec"]["selector"]["matchLabels"].items():
            if labels.get(k) != v:
                errors.append(f"{wname}: selector {k}={v} does not match its pod template")
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        claims = {c["metadata"]["name"] for c in w["spec"].get("volumeClaimTemplates", [])}
        for v in volumes.values():
            if "secret" in v and v["secret"].get("secretName") not in names("Secret"):
                errors.append(f"{wname}: volume {v['name']} names an undefined Secret")
        sa = spec.get("serviceAccountName")
        if sa and sa not in names("ServiceAccount"):
            errors.append(f"{wname}: ServiceAccount {sa} is not defined")
        for c in spec.get("initContainers", []) + spec["containers"]:
            sc = c.get("securityContext", {})
            if sc.get("allowPrivilegeEscalation") is not False:
                errors.append(f"{wname}/{c['name']}: allowPrivilegeEscalation must be false")
            if sc.get("privileged"):
                errors.append(f"{wname}/{c['name']}: privileged")
            if "ALL" not in sc.get("capabilities", {}).get("drop", []):
                errors.append(f"{wname}/{c['name']}: capabilities must drop ALL")
            for m in c.get("volumeMounts", []):
                if m["name"] not in volumes and m["name"] not in claims:
                    errors.append(f"{wname}/{c['name']}: mount {m['name']} has no volume")
        main = spec["containers"][0]
        try:
            cmd, flags = fleetbench_argv(main)
        except ValueError as e:
            errors.append(f"{wname}: {e}")
            continue
        commands["controller" if w is sts else "agent"] = (cmd, flags, main, spec, w)
        if cmd not in ("controller", "agent"):
            errors.append(f"{wname}: runs {cmd!r}, not fleetbench controller or agent")
            continue
        for f in flags:
            if f not in flags_of(cmd):
                errors.append(f"{wname}: `fleetbench {cmd}` has no flag --{f}")

    if errors:
        return errors
    cmd, flags, main, spec, _ = commands["controller"]
    pod_labels = sts["spec"]["template"]["metadata"]["labels"]
    selecting = [n for n, svc in services.items()
                 if all(pod_labels.get(k) == v for k, v in svc["spec"]["selector"].items())]
    if ctl_kind == "StatefulSet" and sts["spec"]["serviceName"] not in services:
        errors.append("StatefulSet: serviceName names no Service")
    elif ctl_kind == "StatefulSet" and sts["spec"]["serviceName"] not in selecting:
        errors.append("Service: its selector does not select the controller's pods")
    elif not selecting:
        errors.append("no Service selects the controller's pods")
    listen_port = int(flags.get("listen", "x:7070").rsplit(":", 1)[1])
    if listen_port not in [p.get("containerPort") for p in main.get("ports", [])]:
        errors.append("controller: --listen's port is not a containerPort")
    if ctl_kind == "StatefulSet":
        db_dir = flags.get("db", "").rsplit("/", 1)[0]
        claims = {c["metadata"]["name"] for c in sts["spec"]["volumeClaimTemplates"]}
        if not any(m["name"] in claims and m["mountPath"] == db_dir
                   for m in main.get("volumeMounts", [])):
            errors.append(f"controller: no PersistentVolumeClaim is mounted at {db_dir or '(no --db)'}")
    else:
        secrets = {d["metadata"]["name"]: d for d in by_kind.get("Secret", [])}
        errors += check_postgres_controller(sts, flags, main, spec, listen_port, secrets)

    cmd, flags, main, spec, _ = commands["agent"]
    if spec.get("hostNetwork") is not True:
        errors.append("agent: hostNetwork must be true (the network benchmarks measure the node's NICs)")
    if spec.get("hostNetwork") and spec.get("dnsPolicy") != "ClusterFirstWithHostNet":
        errors.append("agent: with hostNetwork, dnsPolicy must be ClusterFirstWithHostNet")
    if not any(t.get("key") == "nvidia.com/gpu" and t.get("operator") == "Exists"
               for t in spec.get("tolerations", [])):
        errors.append("agent: does not tolerate nvidia.com/gpu taints")
    node_env = [e["name"] for e in main.get("env", [])
                if e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName"]
    if not node_env or flags.get("name") not in ("$" + node_env[0], "$(" + node_env[0] + ")"):
        errors.append("agent: --name must be the node name from the downward API (spec.nodeName)")
    caps = main.get("securityContext", {}).get("capabilities", {})
    if sorted(caps.get("add", [])) != ["IPC_LOCK"]:
        errors.append(f"agent: adds {caps.get('add', [])}; RDMA needs IPC_LOCK and nothing more")
    ctl = flags.get("controller", "")
    host, _, port = ctl.rpartition(":")
    svc_name = host.split(".")[0]
    if svc_name not in services or int(port or 0) not in [p["port"] for p in services[svc_name]["spec"]["ports"]]:
        errors.append(f"agent: --controller {ctl} is not the controller's Service and port")
    return errors


def mounted_from(spec, container, path):
    """The volume a container mounts at the folder holding `path`, or None."""
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    folder = path.rsplit("/", 1)[0]
    for m in container.get("volumeMounts", []):
        if m["mountPath"] == folder:
            return volumes.get(m["name"])
    return None


def check_postgres_controller(deployment, flags, main, spec, listen_port, secrets):
    """What controllers sharing a PostgreSQL history need (docs/operations.md)."""
    errors = []
    if deployment["spec"].get("strategy", {}).get("type") != "Recreate":
        errors.append("controller: the Deployment's strategy must be Recreate (only the leader "
                      "is Ready: a rolling update waits forever for a second Ready pod)")
    if not re.match(r"^postgres(ql)?://", flags.get("db", "")):
        errors.append("controller: a Deployment's --db must be a postgresql:// URL (one "
                      "controller per SQLite file)")
    if "standby" not in flags:
        errors.append("controller: every replica must start with --standby (without it a "
                      "second one is refused while another leads)")
    password = flags.get("db-password-file", "")
    volume = mounted_from(spec, main, password) if password else None
    if volume is None or "secret" not in volume:
        errors.append("controller: --db-password-file must be a file from a Secret")
    state = flags.get("state-dir", "")
    state_volumes = [m["name"] for m in main.get("volumeMounts", []) if m["mountPath"] == state]
    if not state_volumes:
        errors.append("controller: nothing is mounted at --state-dir (the root is read-only)")
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    # The CA: an init container mounts the state folder's volume and a
    # Secret holding ca.key, and its command copies into the folder where
    # the controller looks for the CA.
    tls_dir = flags.get("tls-dir") or state.rstrip("/") + "/controller.tls"

    def ca_secret(volume):
        secret = secrets.get(volume.get("secret", {}).get("secretName"), {})
        return "ca.key" in {**secret.get("data", {}), **secret.get("stringData", {})}

    if not any(any(m["name"] in state_volumes for m in c.get("volumeMounts", [])) and
               any(ca_secret(volumes.get(m["name"], {})) for m in c.get("volumeMounts", [])) and
               tls_dir in " ".join(c.get("command", []) + c.get("args", []))
               for c in spec.get("initContainers", [])):
        errors.append(f"controller: no init container copies the fleet's CA (a Secret with "
                      f"ca.key) into {tls_dir} (every controller of a history must serve from "
                      f"one CA)")
    port_names = {p.get("name"): p.get("containerPort") for p in main.get("ports", [])}
    if "livenessProbe" in main:
        errors.append("controller: no liveness probe: a standby listens on no port until it "
                      "leads, so any probe of one kills it")
    ready = main.get("readinessProbe", {}).get("tcpSocket", {}).get("port")
    if ready is None or port_names.get(ready, ready) != listen_port:
        errors.append("controller: the readiness probe must watch the gRPC port, so that the "
                      "Service sends traffic to the leader only")
    return errors


def load(paths):
    docs = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            docs += [d for d in yaml.safe_load_all(f) if d]
    return docs


def self_test(docs, binary):
    def find(ds, kind):
        return next(d for d in ds if d["kind"] == kind)

    def agent(ds):
        return find(ds, "DaemonSet")["spec"]["template"]["spec"]

    def controller(ds):
        return next(d for d in ds if d["kind"] in ("StatefulSet", "Deployment"))

    def controller_main(ds):
        return controller(ds)["spec"]["template"]["spec"]["containers"][0]

    def drop_arg(ds, prefix):
        main = controller_main(ds)
        main["args"] = [a for a in main["args"] if not a.startswith(prefix)]

    # Each break, and words of the error it must cause: a break caught
    # for another reason would hide a check that cannot fail.
    breaks = {
        "an extra capability": (lambda ds: agent(ds)["containers"][0]["securityContext"]
                                ["capabilities"].__setitem__("add", ["IPC_LOCK", "SYS_ADMIN"]),
                                "IPC_LOCK and nothing more"),
        "no host network": (lambda ds: agent(ds).__setitem__("hostNetwork", False),
                            "hostNetwork must be true"),
        "no GPU toleration": (lambda ds: agent(ds).__setitem__("tolerations", []),
                              "tolerate nvidia.com/gpu"),
        "a typo in a pod spec key": (lambda ds: agent(ds).__setitem__("hostNetwrok", True),
                                     "'hostNetwrok' was unexpected"),
        "a flag fleetbench lacks": (lambda ds: controller_main(ds)["args"].append("--no-such-flag=1"),
                                    "no flag --no-such-flag"),
        "the state folder mounted elsewhere": (lambda ds: controller_main(ds)["volumeMounts"][0]
                                               .__setitem__("mountPath", "/data"),
                                               "mounted at"),
        "a missing Secret": (lambda ds: [d for d in ds if d["kind"] != "Secret"],
                             "names an undefined Secret"),
        "no controller": (lambda ds: [d for d in ds if d is not controller(ds)],
                          "want exactly one controller"),
    }
    if controller(docs)["kind"] == "Deployment":
        breaks.update({
            "a replica without --standby": (lambda ds: drop_arg(ds, "--standby"), "--standby"),
            "a SQLite --db": (lambda ds: controller_main(ds).__setitem__("args", [
                "--db=/var/lib/fleetbench/history.db" if a.startswith("--db=") else a
                for a in controller_main(ds)["args"]]), "postgresql:// URL"),
            "a liveness probe": (lambda ds: controller_main(ds).__setitem__(
                "livenessProbe", {"httpGet": {"port": "http"}}), "no liveness probe"),
            "no readiness probe": (lambda ds: controller_main(ds).__delitem__("readinessProbe"),
                                   "readiness probe must watch the gRPC port"),
            "no init container for the CA": (lambda ds: controller(ds)["spec"]["template"]["spec"]
                                             .__delitem__("initContainers"),
                                             "copies the fleet's CA"),
            "the CA copied elsewhere": (lambda ds: controller(ds)["spec"]["template"]["spec"]
                                        ["initContainers"][0].__setitem__("command", [
                                            "/bin/sh", "-c", "cp /etc/fleetbench-ca/* /tmp/"]),
                                        "copies the fleet's CA"),
            "one replica": (lambda ds: controller(ds)["spec"].__setitem__("replicas", 1),
                            "less than the minimum of 2"),
            "a rolling update": (lambda ds: controller(ds)["spec"].__delitem__("strategy"),
                                 "must be Recreate"),
        })
    failed = 0
    for what, (brk, reason) in breaks.items():
        broken = copy.deepcopy(docs)
        result = brk(broken)
        if isinstance(result, list):
            broken = result
        errors = check(broken, binary)
        if not any(reason in e for e in errors):
            print(f"check_k8s_manifests self-test: {what} was not caught for its reason "
                  f"({reason!r}); errors: {errors}")
            failed += 1
    return failed


def main():
    args = sys.argv[1:]
    selftest = "--self-test" in args
    args = [a for a in args if a != "--self-test"]
    if len(args) < 2:
        print("usage: check_k8s_manifests.py [--self-test] FLEETBENCH_BINARY MANIFEST...", file=sys.stderr)
        return 2
    binary, docs = args[0], load(args[1:])
    if selftest:
        failed = self_test(docs, binary)
        print(f"check_k8s_manifests self-test: {failed} break(s) missed")
        return 1 if failed else 0
    errors = check(docs, binary)
    for e in errors:
        print(f"check_k8s_manifests: {e}")
    if not errors:
        print(f"check_k8s_manifests: {len(docs)} document(s) pass")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
