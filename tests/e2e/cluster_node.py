"""A Ray cluster on loopback for the cluster tests: ``python cluster_node.py PORT [WORKERS]``.

A head and WORKERS worker nodes (default 1), one CPU each.

Prints one JSON line (address, dashboard URL, node ids: the head's first) once
every node is up, then holds the cluster until its stdin closes, and shuts down
only its own nodes. A line ``kill-worker`` on stdin kills every process of the
worker node (its raylet, agents and trial workers) with SIGKILL, as a preempted
or out-of-memory machine goes, and answers with one JSON line.
Each node's dashboard agent gets a free port of its own: another Ray on the
machine (the test session's) holds Ray's default, and a head without a working
agent answers every job submission with "No available agent".
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
from typing import Any

from ray.cluster_utils import Cluster


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _kill_node(node: Any) -> list[int]:
    """SIGKILL every process of ``node``: its own ones and everything they started."""
    import psutil

    pids = {
        info.process.pid
        for infos in node.all_processes.values()
        for info in infos
        if info.process is not None
    }
    for pid in list(pids):
        with contextlib.suppress(psutil.NoSuchProcess):
            pids.update(child.pid for child in psutil.Process(pid).children(recursive=True))
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return sorted(pids)


def main() -> None:
    port = int(sys.argv[1])
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 1
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
    added = [
        cluster.add_node(
            num_cpus=1, node_ip_address="127.0.0.1", dashboard_agent_listen_port=_free_port()
        )
        for _ in range(workers)
    ]
    cluster.wait_for_nodes()
    # The node ids from the nodes themselves: a ray.init in this process, beside the
    # head's own GCS client, was seen to hang in GcsClient.Connect on a loaded machine.
    nodes = [cluster.head_node.node_id, *(node.node_id for node in added)]  # the head's first
    print(
        json.dumps(
            {"address": cluster.address, "gcs": cluster.address, "dashboard_port": port,
             "nodes": nodes}
        ),
        flush=True,
    )  # fmt: skip
    try:
        for line in sys.stdin:
            if line.strip() == "kill-worker" and added:
                killed = _kill_node(added[0])
                print(json.dumps({"killed": added[0].node_id, "pids": killed}), flush=True)
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    main()
