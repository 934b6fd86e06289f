"""A two-node Ray cluster on loopback for the cluster tests: ``python cluster_node.py PORT``.

Prints one JSON line (address, dashboard URL, node ids) once both nodes are up,
then holds the cluster until its stdin closes, and shuts down only its own nodes.
"""

from __future__ import annotations

import json
import sys

from ray.cluster_utils import Cluster


def main() -> None:
    port = int(sys.argv[1])
    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "node_ip_address": "127.0.0.1",
            "num_cpus": 1,
            "include_dashboard": True,
            "dashboard_host": "127.0.0.1",
            "dashboard_port": port,
        },
    )
    cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
    cluster.wait_for_nodes()
    import ray

    ray.init(address=cluster.address, log_to_driver=False)
    nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
    url = ray.get_runtime_context().gcs_address
    ray.shutdown()
    print(
        json.dumps(
            {"address": cluster.address, "gcs": url, "dashboard_port": port, "nodes": nodes}
        ),
        flush=True,
    )
    try:
        sys.stdin.read()
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    main()
