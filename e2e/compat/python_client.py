"""Scenarios of the official Python client (Debian python3-kubernetes) against an orch gateway.

Usage: python3 python_client.py KUBECONFIG SCENARIO
Prints one JSON document with what the scenario observed; the e2e suite asserts on it.
The client is used as its users use it: stock kubernetes.* modules, no patches.
"""
import json
import sys
import threading
import time

from kubernetes import client, config, dynamic, watch

NS = "py"


def ensure_namespace(v1):
    try:
        v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
    except client.ApiException as e:
        if e.status != 409:
            raise


def crud(v1):
    cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="settings", labels={"app": "py"}), data={"color": "blue"})
    created = v1.create_namespaced_config_map(NS, cm)
    read = v1.read_namespaced_config_map("settings", NS)
    patched = v1.patch_namespaced_config_map("settings", NS, {"data": {"color": "green"}})
    patched.data["size"] = "L"
    replaced = v1.replace_namespaced_config_map("settings", NS, patched)
    listed = v1.list_namespaced_config_map(NS, label_selector="app=py")
    status = v1.delete_namespaced_config_map("settings", NS)
    try:
        v1.read_namespaced_config_map("settings", NS)
        gone = None
    except client.ApiException as e:
        gone = e.status
    return {
        "created": created.metadata.name,
        "read": read.data,
        "patched": patched.data["color"],
        "replaced": replaced.data,
        "listed": [i.metadata.name for i in listed.items],
        "listKind": listed.kind,
        "deleteStatus": status.status if hasattr(status, "status") else None,
        "afterDelete": gone,
    }


def watch_stream(v1):
    """watch.Watch().stream receives ADDED, MODIFIED and DELETED (the client sends watch=True)."""
    start = v1.list_namespaced_config_map(NS).metadata.resource_version
    events = []
    w = watch.Watch()

    def writes():
        time.sleep(0.5)
        v1.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="watched"), data={"a": "1"}))
        v1.patch_namespaced_config_map("watched", NS, {"data": {"a": "2"}})
        v1.delete_namespaced_config_map("watched", NS)

    t = threading.Thread(target=writes)
    t.start()
    for ev in w.stream(v1.list_namespaced_config_map, NS, resource_version=start, timeout_seconds=20):
        events.append([ev["type"], ev["object"].metadata.name, type(ev["object"]).__name__])
        if ev["type"] == "DELETED":
            w.stop()
    t.join()
    return {"events": events}


def resume(v1):
    """A watch from a list's resourceVersion sees what came after the list, and nothing before."""
    v1.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="before")))
    listed = v1.list_namespaced_config_map(NS)
    v1.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="after")))
    w = watch.Watch()
    seen = []
    for ev in w.stream(v1.list_namespaced_config_map, NS, resource_version=listed.metadata.resource_version, timeout_seconds=10):
        seen.append([ev["type"], ev["object"].metadata.name])
        w.stop()
    v1.delete_namespaced_config_map("before", NS)
    v1.delete_namespaced_config_map("after", NS)
    return {"listed": sorted(i.metadata.name for i in listed.items), "seen": seen}


def dynamic_k8s_groups(api):
    """The dynamic client resolves stock *.k8s.io group versions through discovery, and typed APIs read them."""
    dyn = dynamic.DynamicClient(api)
    roles = dyn.resources.get(api_version="rbac.authorization.k8s.io/v1", kind="Role")
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "py-reader", "namespace": NS},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
    }
    created = roles.create(body=role, namespace=NS)
    got = roles.get(name="py-reader", namespace=NS)
    listed = roles.get(namespace=NS)
    netpols = dyn.resources.get(api_version="networking.k8s.io/v1", kind="NetworkPolicy")
    netpols.create(
        body={
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "py-deny", "namespace": NS},
            "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
        },
        namespace=NS,
    )
    typed_roles = client.RbacAuthorizationV1Api(api).list_namespaced_role(NS)
    typed_netpols = client.NetworkingV1Api(api).list_namespaced_network_policy(NS)
    roles.delete(name="py-reader", namespace=NS)
    netpols.delete(name="py-deny", namespace=NS)
    return {
        "created": created.apiVersion,
        "got": [got.apiVersion, got.kind, got.metadata.name],
        "listApiVersion": listed.apiVersion,
        "listItems": [[i.apiVersion, i.metadata.name] for i in listed.items],
        "typedRoles": [i.metadata.name for i in typed_roles.items],
        "typedNetpols": [i.metadata.name for i in typed_netpols.items],
    }


def main():
    kubeconfig, scenario = sys.argv[1], sys.argv[2]
    config.load_kube_config(config_file=kubeconfig)
    api = client.ApiClient()
    v1 = client.CoreV1Api(api)
    ensure_namespace(v1)
    run = {"crud": lambda: crud(v1), "watch": lambda: watch_stream(v1), "resume": lambda: resume(v1), "dynamic": lambda: dynamic_k8s_groups(api)}[scenario]
    print(json.dumps(run()))


if __name__ == "__main__":
    main()
