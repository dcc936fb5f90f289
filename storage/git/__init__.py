"""Git's own seams, one module each: durable files, objects and packs, the branch ref and its durability, the
working tree and index, maintenance, and queries that run the `git` command. storage.gitrepo.GitRepo composes
them into the one front the rest of storage uses."""
