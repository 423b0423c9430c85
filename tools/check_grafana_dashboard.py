#!/usr/bin/env python3
"""Checks a Grafana dashboard JSON file shipped in deploy/prometheus/.

Valid JSON; a title and uid; panels with unique ids, a type, a title, a
gridPos and at least one Prometheus query each; every $variable a query uses
is defined in templating; the datasource is the ${DS_PROMETHEUS} input, so
the file imports into any Grafana. Exit 0 when it holds, 1 with one line per
problem otherwise.
"""
import json
import re
import sys

BUILTIN_VARIABLES = {"__all", "__interval", "__rate_interval", "__range"}


def check(dashboard):
    problems = []
    for key in ("title", "uid", "panels", "templating"):
        if key not in dashboard:
            problems.append(f"missing top-level {key!r}")
    inputs = {i.get("name") for i in dashboard.get("__inputs", [])}
    if "DS_PROMETHEUS" not in inputs:
        problems.append("no DS_PROMETHEUS input: the file would not import cleanly")
    variables = {v.get("name") for v in dashboard.get("templating", {}).get("list", [])}
    ids = set()
    for panel in dashboard.get("panels", []):
        name = panel.get("title", "<untitled>")
        for key in ("id", "type", "title", "gridPos", "targets"):
            if key not in panel:
                problems.append(f"panel {name!r}: missing {key!r}")
        if panel.get("id") in ids:
            problems.append(f"panel {name!r}: id {panel.get('id')} used twice")
        ids.add(panel.get("id"))
        if panel.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}":
            problems.append(f"panel {name!r}: datasource is not ${{DS_PROMETHEUS}}")
        targets = panel.get("targets", [])
        if not targets:
            problems.append(f"panel {name!r}: no queries")
        texts = [panel.get("title", "")] + [t.get("expr", "") for t in targets]
        for t in targets:
            if not t.get("expr", "").strip():
                problems.append(f"panel {name!r}: a query with no expr")
            if t.get("expr", "").count("(") != t.get("expr", "").count(")"):
                problems.append(f"panel {name!r}: unbalanced parentheses in {t['expr']!r}")
        for text in texts:
            for var in re.findall(r"\$(\w+)", text):
                if var not in variables and var not in BUILTIN_VARIABLES:
                    problems.append(f"panel {name!r}: ${var} is not a dashboard variable")
    return problems


def main(argv):
    if len(argv) != 2:
        print("usage: check_grafana_dashboard.py DASHBOARD.json", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            dashboard = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{argv[1]}: {e}")
        return 1
    problems = check(dashboard)
    for p in problems:
        print(f"{argv[1]}: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
