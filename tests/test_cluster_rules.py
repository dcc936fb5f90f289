"""The cluster's decisions without processes: the controller's placement rules (on a ZooKeeper stand-in) and the
key merge rule of the system repository. The real thing runs in tests/test_cluster.py."""
from __future__ import annotations

import pytest

from cluster.config import ClusterConfig, write_config
from cluster.controller import Controller
from cluster.coordination import NodeInfo, Placement, Recorded, decode_refs, encode_refs
from cluster.node import ClusterNode
from cluster.system import merge_change
from storage.store import SERVICE, Store
from storage.trailers import Action

HEAD = "a" * 40


class FakeCoordination:
    """The few reads and compare-and-sets the controller makes, in memory."""

    def __init__(self, alive: list[str], placements: dict[str, Placement]):
        self.alive = {node: NodeInfo(node, f"http://{node}", 1) for node in alive}
        self.placements = placements

    def alive_nodes(self, fresh: bool = False) -> dict[str, NodeInfo]:
        return dict(self.alive)

    def projects(self) -> list[str]:
        return sorted(self.placements)

    def placement(self, project: str) -> Placement:
        return self.placements[project]

    def recorded(self, project: str) -> Recorded:
        return Recorded(HEAD, 3)

    def set_placement(self, project: str, placement: Placement, expected_version: int) -> bool:
        if self.placements[project].version != expected_version:
            return False
        self.placements[project] = Placement(placement.leader, placement.followers, expected_version + 1)
        return True


def controller(coordination: FakeCoordination, heads: dict[str, str | None]) -> Controller:
    """A controller whose nodes answer `heads` (node -> its head of every project)."""
    return Controller(coordination, "n1", 2, "secret",  # type: ignore[arg-type]
                      ask=lambda node, project, commit, secret: (heads.get(node.id), heads.get(node.id) == commit))


def test_a_dead_leader_is_replaced_by_the_follower_at_the_recorded_head_and_stays_listed_to_rejoin():
    coordination = FakeCoordination(["n2", "n3"], {"p": Placement("n1", ("n3", "n2"), 5)})
    controller(coordination, {"n2": HEAD, "n3": "b" * 40}).reconcile()
    placed = coordination.placements["p"]
    assert placed.leader == "n2" and "n1" in placed.followers and placed.version == 6


def test_no_follower_holding_the_recorded_head_means_no_new_leader_rather_than_a_lost_write():
    coordination = FakeCoordination(["n2"], {"p": Placement("n1", ("n2",), 5)})
    controller(coordination, {"n2": "b" * 40}).reconcile()
    assert coordination.placements["p"] == Placement("n1", ("n2",), 5)


def test_new_projects_are_spread_over_the_nodes_and_each_gets_a_follower():
    coordination = FakeCoordination(["n1", "n2", "n3"], {f"p{i}": Placement(None) for i in range(6)})
    controller(coordination, {"n1": HEAD, "n2": HEAD, "n3": HEAD}).reconcile()
    leaders = [placement.leader for placement in coordination.placements.values()]
    assert sorted(leaders.count(node) for node in ("n1", "n2", "n3")) == [2, 2, 2]
    assert all(len(p.followers) == 1 and p.leader not in p.followers for p in coordination.placements.values())


def test_leaders_placed_on_one_node_move_to_a_joined_node_one_quiet_round_at_a_time():
    coordination = FakeCoordination(["n1", "n2"], {f"p{i}": Placement("n1", ("n2",), 1) for i in range(4)})
    rules = controller(coordination, {"n1": HEAD, "n2": HEAD})
    for _ in range(3):
        rules.reconcile()
    leaders = [placement.leader for placement in coordination.placements.values()]
    assert (leaders.count("n1"), leaders.count("n2")) == (2, 2)


def test_a_revoked_key_stays_revoked_whatever_a_stale_copy_sends():
    records = [{"id": "k1"}, {"id": "k2"}]
    kept, revoked = merge_change(records, set(), [], ["k1"])
    assert [r["id"] for r in kept] == ["k2"] and revoked == {"k1"}
    kept, revoked = merge_change(kept, revoked, [{"id": "k1"}, {"id": "k3"}], [])  # a stale node sends k1 again
    assert [r["id"] for r in kept] == ["k2", "k3"] and revoked == {"k1"}


def test_a_projects_recorded_refs_hold_main_first_and_every_other_branch_and_read_back_the_same():
    refs = {"main": HEAD, "release/1.0": "b" * 40, "feature": "c" * 40}
    raw = encode_refs(refs)
    assert raw.decode().splitlines()[0] == HEAD  # what a recorded head was before branches: still read alike
    recorded = decode_refs(raw, 4)
    assert recorded.head == HEAD and recorded.version == 4 and recorded.refs() == refs
    assert decode_refs(HEAD.encode(), 1).refs() == {"main": HEAD}
    assert decode_refs(b"", 0) == Recorded(None, 0)


def hook_copies(tmp_path, node: str, answers: dict[str, str], leader: str = "n1"):
    """`node`'s HookCopies of project p (led by `leader`, followed by n2) whose calls get `answers` (node -> status)."""
    from cluster.webhooks import HookCopies
    from storage.webhooks import HookStore

    coordination = FakeCoordination(["n1", "n2", "n3"], {"p": Placement(leader, ("n2",), 1)})
    sent: list[str] = []

    def call(url: str, method: str, target: str, body: bytes, timeout: float):
        sent.append(url)
        return answers[url.removeprefix("http://")], [], b"{}"

    store = HookStore(tmp_path / node)
    return HookCopies(store, coordination, node, call), store, sent  # type: ignore[arg-type]


def test_a_hook_made_on_the_leader_is_refused_and_kept_nowhere_unless_every_alive_follower_took_it(tmp_path):
    import pytest

    from storage.errors import Busy

    copies, store, sent = hook_copies(tmp_path, "n1", {"n2": "503 SERVICE UNAVAILABLE", "n3": "200 OK"})
    with pytest.raises(Busy):
        store.add("p", "https://example.com/hook", ["*"], "whsec_x", HEAD, "now")
    assert store.hooks("p") == [] and sorted(sent) == ["http://n2", "http://n3"]
    copies.push("p", b"{}", required=False)  # the deliverer's cursor: as well as it can, never refused


def test_a_copy_of_the_hooks_is_taken_from_the_projects_leader_only(tmp_path):
    copies, store, _ = hook_copies(tmp_path, "n2", {})
    data = b'{"hooks": []}'
    assert copies.take({"project": "p", "leader": "n3", "data": "e30="})[0] == 409  # (a fenced leader's)
    assert copies.take({"project": "../p", "leader": "n1", "data": None})[0] == 400
    assert store.raw("p") is None
    assert copies.take({"project": "p", "leader": "n1", "data": "eyJob29rcyI6IFtdfQ=="})[0] == 200
    assert store.raw("p") == data
    # a leader's answer read before a copy that came meanwhile never takes that copy back
    assert not store.replace("p", None, expected=b"{}") and store.raw("p") == data


class LeaderCoordination:
    """A project led by n1 and followed by n2 at its recorded head; counts the compare-and-sets it is asked."""

    def __init__(self, head: str):
        self.head, self.records = head, 0

    def placement(self, project: str, watched: bool = False) -> Placement:
        return Placement("n1", ("n2",), 7)

    def recorded(self, project: str, watched: bool = False) -> Recorded:
        return Recorded(self.head, 4)

    def alive_nodes(self, fresh: bool = False) -> dict[str, NodeInfo]:
        return {node: NodeInfo(node, f"http://{node}", 1) for node in ("n1", "n2")}

    def record_head(self, project: str, refs: dict[str, str], placement: Placement, recorded: Recorded) -> bool:
        self.records += 1
        self.head = refs["main"]
        return True


def leading_node(tmp_path, monkeypatch) -> tuple[ClusterNode, LeaderCoordination, list[dict[str, str]], str]:
    """Node n1 of a real store, leading project `p` (the coordination in memory); the copies it sends to n2."""
    store = Store(tmp_path / "data")
    project = store.create_project("P", "en", "English", project_id="p")
    secret = tmp_path / "secret"
    secret.write_text("s" * 40)
    config = ClusterConfig.load(write_config(tmp_path / "n1.json", "n1", "http://n1", "127.0.0.1:1", secret))
    node = ClusterNode(config, store, None)  # type: ignore[arg-type]  # (no request reaches it here)
    coordination = LeaderCoordination(project.repo.head().decode())
    node.coordination = coordination  # type: ignore[assignment]
    node._state("p").led_version = 7  # aligned as leader under placement version 7
    sent: list[dict[str, str]] = []
    monkeypatch.setattr(node, "_replicate_to", lambda target, project_id, refs, pack: sent.append(refs) or True)
    return node, coordination, sent, "p"


def test_a_leader_sends_its_commit_to_the_follower_while_making_it_durable_and_records_it_after(tmp_path, monkeypatch):
    node, coordination, sent, project_id = leading_node(tmp_path, monkeypatch)
    project = node.store.project(project_id)
    with project.transaction(SERVICE, "Add a locale", Action.ADD_LOCALE) as tx:
        tx.meta.update({"name": "Q"})
    head = project.repo.head().decode()
    assert sent == [{"main": head}]  # sent before the commit was durable here, as its fsync ran
    assert node._record_locked(project_id, node._state(project_id)) is None
    assert coordination.records == 1 and coordination.head == head and len(sent) == 1  # not sent twice


def test_a_commit_the_leader_failed_to_make_durable_is_never_recorded_though_a_follower_took_it(tmp_path,
                                                                                                 monkeypatch):
    node, coordination, sent, project_id = leading_node(tmp_path, monkeypatch)
    project = node.store.project(project_id)
    recorded = coordination.head

    def disk_failed(*args, **kwargs):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(project.repo, "move_head", disk_failed)
    with pytest.raises(OSError):
        with project.transaction(SERVICE, "Add a locale", Action.ADD_LOCALE) as tx:
            tx.meta.update({"name": "Q"})
    assert len(sent) == 1 and sent[0]["main"] != recorded  # the follower was sent the commit early
    assert node._record_locked(project_id, node._state(project_id)) is None
    assert coordination.records == 0 and coordination.head == recorded
