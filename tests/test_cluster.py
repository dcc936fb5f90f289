"""A cluster on loopback (issue 22): a real ZooKeeper (one for the module), `gloss serve --cluster` nodes and
HAProxy, through their public surface: HTTP, `gloss cluster status`, the nodes' Git repositories."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from app.cli import seed_node_data
from cluster.demo import LocalCluster, status
from cluster.processes import ZooKeeper, missing_programs
from tests.support import IN_CI, REPO_ROOT, assert_fsck_clean, git, wait_until

pytestmark = pytest.mark.cluster
PROJECT = "acme-notes"
SESSION = 2.0  # seconds: ZooKeeper takes a silent node for dead after this (the failover tests wait for it)


def request(url: str, method: str = "GET", data: dict | None = None, key: str | None = None,
            headers: dict | None = None) -> tuple[int, dict, bytes]:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    sent = dict(headers or {})
    if key:
        sent["Authorization"] = f"Loco {key}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=body, method=method, headers=sent),
                                    timeout=60) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def head_of(cluster: LocalCluster, node: str) -> str:
    return git(cluster.data_dir(node) / "projects" / PROJECT, "rev-parse", "main").strip()


def placement(cluster: LocalCluster) -> dict:
    return next(p for p in status(cluster.directory)["projects"] if p["id"] == PROJECT)


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory):
    missing = missing_programs()
    if missing:
        if IN_CI:
            pytest.fail(f"{', '.join(missing)} not installed (make test installs them)")
        pytest.skip(f"{', '.join(missing)} not installed")
    server = ZooKeeper(tmp_path_factory.mktemp("zookeeper")).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> tuple[Path, str]:
    directory = tmp_path_factory.mktemp("seed") / "data"
    return directory, seed_node_data(directory)


def start_cluster(directory: Path, seeded: tuple[Path, str], zookeeper: ZooKeeper, chroot: str,
                  **config: object) -> LocalCluster:
    cluster = LocalCluster(directory, 3, zookeeper, chroot=chroot, session_timeout=SESSION, **config)
    cluster.seed_from(seeded[0])
    try:
        cluster.start()
        wait_until(lambda: placement(cluster)["leader"] is not None, timeout=20)
    except BaseException:
        cluster.stop()
        raise
    return cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, seeded, zookeeper):
    started = start_cluster(tmp_path_factory.mktemp("cluster"), seeded, zookeeper, "/main")
    yield started
    started.stop()


def test_a_write_through_the_balancer_is_on_two_disks_and_recorded_before_it_is_answered(cluster, seeded):
    key = seeded[1]
    status_code, _, _ = request(cluster.balancer.url + "/api/assets", "POST", {"id": "c.one", "text": "One"}, key)
    assert status_code == 201
    now = placement(cluster)  # read right after the answer: nothing had time to catch up afterwards
    assert head_of(cluster, now["leader"]) == now["head"]
    assert any(head_of(cluster, follower) == now["head"] for follower in now["followers"])
    for _ in range(6):  # round robin over the three nodes: every one answers with the write
        assert request(cluster.balancer.url + "/api/assets/c.one", key=key)[0] == 200


def test_a_write_sent_to_a_node_that_does_not_lead_is_made_by_the_leader(cluster, seeded):
    key = seeded[1]
    before = placement(cluster)
    other = next(node for node in cluster.ids if node != before["leader"])
    # a client cannot pass for a node: without the secret the header is ignored and the write forwarded
    status_code, _, _ = request(cluster.urls[other] + "/api/assets", "POST", {"id": "c.two", "text": "Two"}, key,
                                headers={"X-Gloss-Forwarded-By": "n9"})
    assert status_code == 201
    after = placement(cluster)
    assert after["head"] != before["head"] and head_of(cluster, after["leader"]) == after["head"]
    assert git(cluster.data_dir(after["leader"]) / "projects" / PROJECT, "log", "-1", "--format=%s").strip()


def test_node_to_node_calls_need_the_cluster_secret(cluster):
    for path in ("/cluster/v1/has?project=acme-notes&commit=", "/cluster/v1/git/acme-notes/info/refs"):
        assert request(cluster.urls["n1"] + path)[0] == 403
        assert request(cluster.urls["n1"] + path, headers={"X-Gloss-Cluster-Secret": "x" * 43})[0] == 403
    assert request(cluster.urls["n1"] + "/cluster/v1/ready")[0] == 200


def test_cluster_status_prints_the_nodes_and_every_projects_leader_followers_and_head(cluster):
    printed = subprocess.run([sys.executable, "-m", "app.cli", "--data", str(cluster.directory), "cluster",
                              "status", "--json"], capture_output=True, check=True, cwd=REPO_ROOT).stdout
    report = json.loads(printed)
    assert [(node["id"], node["alive"]) for node in report["nodes"]] == [("n1", True), ("n2", True), ("n3", True)]
    assert {"id", "url", "pid", "alive"} <= set(report["nodes"][0])
    project = next(p for p in report["projects"] if p["id"] == PROJECT)
    assert project["leader"] in cluster.ids and len(project["followers"]) >= 1
    assert len(project["head"]) == 40
