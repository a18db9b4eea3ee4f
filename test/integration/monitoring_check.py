"""The shipped alert rules and Grafana dashboard against a live broker: both parse, every
rule has an alert name, expression and severity, every dashboard panel a query, and every
streamflow_* metric they name is one the broker exports (and every streamflow:* series one the
recording rules make).

usage: monitoring_check.py HTTP_BASE RULES.yml DASHBOARD.json
"""
import json
import re
import sys
import urllib.request

import yaml

base, rules_path, dashboard_path = sys.argv[1:4]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
    exported = {line.split()[2] for line in r.read().decode().splitlines()
                if line.startswith("# TYPE ")}
if not exported:
    fail("the broker exports no metric families")


rules = yaml.safe_load(open(rules_path))
recorded = {rule["record"] for group in rules["groups"] for rule in group["rules"]
            if rule.get("record")}


def check_names(where, expr):
    for name in re.findall(r"\bstreamflow_[a-z_]+", expr):
        family = re.sub(r"_(bucket|sum|count)$", "", name)
        if name not in exported and family not in exported:
            fail(f"{where}: {name} is not a metric the broker exports")
    for name in re.findall(r"\bstreamflow:[a-z0-9_:]+", expr):
        if name not in recorded:
            fail(f"{where}: {name} is not made by a recording rule")


count = 0
for group in rules["groups"]:
    for rule in group["rules"]:
        if rule.get("record"):
            if not rule.get("expr"):
                fail(f"recording rule without expr: {rule}")
            check_names("record " + rule["record"], rule["expr"])
            continue
        if not rule.get("alert") or not rule.get("expr") or "severity" not in rule.get("labels", {}):
            fail(f"rule without alert, expr or severity: {rule}")
        check_names("alert " + rule["alert"], rule["expr"])
        count += 1
dash = json.load(open(dashboard_path))
queries = 0
for panel in dash["panels"]:
    if not panel.get("targets"):
        fail(f"dashboard panel {panel.get('title')} has no query")
    for t in panel["targets"]:
        check_names("panel " + panel["title"], t["expr"])
        queries += 1
print(f"monitoring ok: {count} alert rules, {queries} dashboard queries")
