#!/usr/bin/env python3
"""A stand-in Kubernetes API server for `kubectl apply --dry-run=client` without a cluster.

kubectl needs the API's discovery documents to map each manifest's kind to a resource, and it reads
the live object to decide between create and patch; this answers discovery for the kinds
deploy/kubernetes uses and 404 for every object, so kubectl parses, maps and prints each manifest as
"created (dry run)". Nothing is stored. Prints the port it listens on (127.0.0.1), then serves until killed.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERB = ["create", "delete", "get", "list", "patch", "update", "watch"]
RESOURCES = {
    "v1": [("services", "Service"), ("secrets", "Secret"), ("configmaps", "ConfigMap"),
           ("namespaces", "Namespace")],
    "apps/v1": [("deployments", "Deployment")],
    "networking.k8s.io/v1": [("ingresses", "Ingress"), ("networkpolicies", "NetworkPolicy")],
    "policy/v1": [("poddisruptionbudgets", "PodDisruptionBudget")],
}


def resource_list(group_version):
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
            "resources": [{"name": name, "singularName": kind.lower(), "kind": kind,
                           "namespaced": kind != "Namespace", "verbs": VERB}
                          for name, kind in RESOURCES[group_version]]}


def group_list():
    groups = []
    for gv in RESOURCES:
        if "/" in gv:
            entry = {"groupVersion": gv, "version": gv.split("/")[1]}
            groups.append({"name": gv.split("/")[0], "versions": [entry], "preferredVersion": entry})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the name http.server calls)
        path = self.path.split("?")[0].rstrip("/")
        if path == "/api":
            self.reply(200, {"kind": "APIVersions", "versions": ["v1"]})
        elif path == "/apis":
            self.reply(200, group_list())
        elif path == "/api/v1":
            self.reply(200, resource_list("v1"))
        elif path.startswith("/apis/") and path[len("/apis/"):] in RESOURCES:
            self.reply(200, resource_list(path[len("/apis/"):]))
        else:
            self.reply(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                             "reason": "NotFound", "code": 404, "message": "not found"})

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    sys.stdout.close()
    server.serve_forever()
