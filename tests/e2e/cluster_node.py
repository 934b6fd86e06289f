"""A two-node Ray cluster on loopback for the cluster tests: ``python cluster_node.py PORT``.

Prints one JSON line (address, dashboard URL, node ids) once both nodes are up,
then holds the cluster until its stdin closes, and shuts down only its own nodes.
Each node's dashboard agent gets a free port of its own: another Ray on the
machine (the test session's) holds Ray's default, and a head without a working
agent answers every job submission with "No available agent".
"""

from __future__ import annotations

import json
import socket
import sys

from ray.cluster_utils import Cluster


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


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
            "dashboard_agent_listen_port": _free_port(),
        },
    )
    cluster.add_node(
        num_cpus=1, node_ip_address="127.0.0.1", dashboard_agent_listen_port=_free_port()
    )
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
