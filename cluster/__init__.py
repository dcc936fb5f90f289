"""Gloss as a cluster: shared-nothing nodes, Git's own protocol between them, ZooKeeper for what they agree on.

Every node keeps its own repositories (a whole `gloss serve` data directory). ZooKeeper holds three things and
nothing else (cluster.coordination): which nodes are alive (ephemeral znodes), which node leads each project and
which follow it (placement), and each project's recorded refs (main's head and every named branch's), moved by
compare-and-set on the znode's version.
A write is made by the project's leader as on a single node, fetched by at least one follower over Git's smart
HTTP (cluster.replication), and recorded in ZooKeeper before it is answered; a leader whose compare-and-set fails
rolls its branches back to the recorded refs and answers 503 (Gerrit multi-site's rule). cluster.node is the WSGI
layer that routes requests (forward to the leader, serve a read where the recorded head is), cluster.controller
the one elected node that places projects and moves leadership when a leader's session ends.

The single node needs none of this: `create_app` wires a node only when given a cluster configuration.
"""
