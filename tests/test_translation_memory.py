"""Translation memory: suggestions from the project's translations and its memory group's (issue #23, item 2)."""
from __future__ import annotations

import pytest

from app import create_app
from app.cli import main as gloss
from tests.api import Api, chunked_project
from tests.support import git

SUGGESTION_FIELDS = {"text", "score", "source", "origin", "project", "asset", "file", "author", "commit"}


def head(project) -> str:
    return git(project.path, "rev-parse", "HEAD").strip()


def new_project(client, store, keystore, name: str, source: str = "en", user: str = "Tester"):
    project = store.create_project(name, source, source)
    key, _ = keystore.create(project.id, "full", user, f"{user.lower()}@example.com")
    api = Api(client, key)
    assert api.post("/api/locales", data={"code": "fr"})[0] in (200, 201)
    return project, api


def add(api, asset_id: str, source: str, french: str | None = None) -> None:
    assert api.post("/api/assets", data={"id": asset_id, "text": source})[0] == 201
    if french is not None:
        assert api.post(f"/api/translations/{asset_id}/fr", data=french.encode())[0] == 200


def suggested(api, asset_id: str, locale: str = "fr", **query) -> list[dict]:
    status, found = api.get(f"/api/translations/{asset_id}/{locale}/suggestions", query_string=query)
    assert status == 200, found
    assert all(set(item) == SUGGESTION_FIELDS for item in found)
    return found


@pytest.fixture
def shop(client, store, keystore):
    project, api = new_project(client, store, keystore, "Shop")
    add(api, "save", "Save the file", "Enregistrer le fichier")
    return project, api


def test_an_exact_source_match_scores_100_and_names_its_project_asset_author_and_commit(shop):
    project, api = shop
    commit = head(project)
    add(api, "save.again", "Save the file")
    assert suggested(api, "save.again") == [{
        "text": "Enregistrer le fichier", "score": 100, "source": "Save the file", "origin": "translation",
        "project": project.id, "asset": "save", "file": None, "author": "Tester", "commit": commit}]


def test_a_similar_source_scores_below_100_and_an_unrelated_one_finds_nothing(shop):
    _, api = shop
    add(api, "saves", "Save the files")
    add(api, "weather", "It is raining in Lisbon")
    [found] = suggested(api, "saves")
    assert 50 <= found["score"] < 100 and found["asset"] == "save"
    assert suggested(api, "weather") == []


def test_an_asset_is_never_suggested_to_itself(shop):
    _, api = shop
    assert suggested(api, "save") == []


def test_suggestions_are_best_first_one_per_distinct_text_and_limited(shop):
    _, api = shop
    add(api, "save.2", "Save the file", "Enregistrer le fichier")  # the same pair again: shown once
    add(api, "save.3", "Save the files", "Enregistrer les fichiers")
    add(api, "save.4", "Save this file", "Enregistrer ce fichier")
    add(api, "ask", "Save the file")
    found = suggested(api, "ask", limit=5)
    assert [item["text"] for item in found][0] == "Enregistrer le fichier" and found[0]["score"] == 100
    assert len({item["text"] for item in found}) == len(found) == 3
    assert [item["score"] for item in found] == sorted((item["score"] for item in found), reverse=True)
    assert len(suggested(api, "ask", limit=1)) == 1


def test_a_new_translation_is_suggested_at_once_with_the_commit_that_made_it(shop):
    project, api = shop
    add(api, "ask", "Save the file")
    assert api.post("/api/translations/save/fr", data="Sauvegarder le fichier".encode())[0] == 200
    [found] = suggested(api, "ask")
    assert (found["text"], found["commit"]) == ("Sauvegarder le fichier", head(project))
    assert api.delete("/api/translations/save/fr")[0] == 200
    assert suggested(api, "ask") == []


def test_a_changed_source_text_changes_what_its_translation_is_suggested_for(shop):
    _, api = shop
    add(api, "ask", "Save the file")
    assert api.post("/api/translations/save/en", data=b"Delete everything")[0] == 200  # its source text
    assert suggested(api, "ask") == []


def test_bad_limits_are_400_and_the_source_locale_or_an_unknown_one_answers_accordingly(shop):
    _, api = shop
    for limit in ("0", "21", "x", "-1", "٣"):
        status, error = api.get("/api/translations/save/fr/suggestions", query_string={"limit": limit})
        assert status == 400 and "max_suggestions" in error["error"]
    assert suggested(api, "save", "en") == []
    assert api.get("/api/translations/save/xx/suggestions")[0] == 404
    assert api.get("/api/translations/nothing/fr/suggestions")[0] == 404


def test_read_only_keys_read_suggestions_and_export_keys_do_not(client, keystore, shop):
    project, api = shop
    add(api, "ask", "Save the file")
    for access, expected in (("readonly", 200), ("export", 403)):
        key, _ = keystore.create(project.id, access, "Someone", "")
        assert Api(client, key).get("/api/translations/ask/fr/suggestions")[0] == expected


def test_projects_share_memory_only_within_a_group_both_opted_into(client, store, keystore, data_dir, shop, capsys):
    project, _ = shop
    other, other_api = new_project(client, store, keystore, "Other", user="Other")
    outsider, outsider_api = new_project(client, store, keystore, "Outsider", user="Outsider")
    add(outsider_api, "save", "Save the file", "Fichier enregistré (hors groupe)")
    add(other_api, "ask", "Save the file")
    assert suggested(other_api, "ask") == []  # nobody opted in

    assert gloss(["--data", str(data_dir), "project", "memory", project.id, "shared"]) == 0
    assert suggested(other_api, "ask") == []  # one side alone shares nothing
    assert gloss(["--data", str(data_dir), "project", "memory", other.id, "shared"]) == 0
    assert capsys.readouterr().out.split() == ["shared", "shared"]
    [found] = suggested(other_api, "ask")
    assert (found["project"], found["asset"], found["author"]) == (project.id, "save", "Tester")

    assert gloss(["--data", str(data_dir), "project", "memory", outsider.id, "elsewhere"]) == 0
    assert all(item["project"] != outsider.id for item in suggested(other_api, "ask", limit=20))
    assert gloss(["--data", str(data_dir), "project", "memory", project.id, "none"]) == 0
    assert suggested(other_api, "ask") == []
    assert gloss(["--data", str(data_dir), "project", "memory", project.id]) == 0
    assert capsys.readouterr().out.split()[-1] == "none"


def test_a_group_name_is_checked(data_dir, shop, capsys):
    project, _ = shop
    for name in (".x", "a b", "x" * 65, "../up"):
        assert gloss(["--data", str(data_dir), "project", "memory", project.id, name]) == 1
    assert "memory group" in capsys.readouterr().err


def test_projects_of_another_source_locale_share_nothing_even_in_one_group(client, store, keystore, data_dir, shop):
    project, _ = shop
    german, german_api = new_project(client, store, keystore, "German", source="de")
    add(german_api, "ask", "Save the file")  # a German source text that happens to be the same
    for member in (project, german):
        assert gloss(["--data", str(data_dir), "project", "memory", member.id, "g"]) == 0
    assert suggested(german_api, "ask") == []


def test_another_process_builds_the_same_memory_from_git_with_each_pairs_commit(client, store, keystore,
                                                                                data_dir):
    project, api = chunked_project(client, store, keystore, "Chunked", lambda i: {"fr": f"Texte {i}"}, assets=25)
    expected = git(project.path, "log", "--format=%H", "--fixed-strings", "--grep", "Translate a7 [fr]").strip()
    assert api.post("/api/assets", data={"id": "ask", "text": "Text 7"})[0] == 201
    [warm] = suggested(api, "ask", limit=1)
    assert (warm["asset"], warm["commit"]) == ("a7", expected)
    fresh = Api(create_app(data_dir, testing=True).test_client(), api.key)
    assert suggested(fresh, "ask", limit=1) == [warm]


def test_writes_made_by_another_process_are_attributed_to_their_own_commits(client, store, keystore, data_dir):
    project, api = chunked_project(client, store, keystore, "Chunked", lambda i: {"fr": f"Texte {i}"}, assets=12)
    assert api.post("/api/assets", data={"id": "ask", "text": "Text 3"})[0] == 201
    assert api.post("/api/assets", data={"id": "ask5", "text": "Text 5"})[0] == 201
    suggested(api, "ask")  # built here
    other = Api(create_app(data_dir, testing=True).test_client(), api.key)
    assert other.post("/api/translations/a3/fr", data="Texte trois".encode())[0] == 200
    first = head(project)
    assert other.post("/api/translations/a5/fr", data="Texte cinq".encode())[0] == 200
    [three] = suggested(api, "ask", limit=1)
    [five] = suggested(api, "ask5", limit=1)
    assert (three["text"], three["commit"]) == ("Texte trois", first)
    assert (five["text"], five["commit"]) == ("Texte cinq", head(project))


def test_a_stretch_of_history_longer_than_the_in_process_walk_is_attributed_the_same(client, store, keystore,
                                                                                      data_dir, monkeypatch):
    import storage.memory

    project, api = chunked_project(client, store, keystore, "Chunked", lambda i: {"fr": f"Texte {i}"}, assets=12)
    assert api.post("/api/assets", data={"id": "ask", "text": "Text 2"})[0] == 201
    [near] = suggested(Api(create_app(data_dir, testing=True).test_client(), api.key), "ask", limit=1)
    monkeypatch.setattr(storage.memory, "WALK_IN_PROCESS", 1)  # the rest from storage.textchanges (git)
    [far] = suggested(Api(create_app(data_dir, testing=True).test_client(), api.key), "ask", limit=1)
    assert far == near and far["commit"] == git(
        project.path, "log", "--format=%H", "--fixed-strings", "--grep", "Translate a2 [fr]").strip()


# ----------------------------------------------------------------------------- TMX into the memory
TMX = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE tmx SYSTEM "tmx14.dtd">
<tmx version="1.4">
  <header creationtool="test" creationtoolversion="1" segtype="sentence" o-tmf="x" adminlang="en"
          srclang="en" datatype="plaintext"/>
  <body>
    <tu tuid="1"><tuv xml:lang="en"><seg>Open the door</seg></tuv><tuv xml:lang="fr"><seg>Ouvrez la porte</seg></tuv></tu>
    <tu tuid="2"><tuv xml:lang="en"><seg>Close the window</seg></tuv><tuv xml:lang="de"><seg>Schließen Sie das Fenster</seg></tuv></tu>
    <tu tuid="3"><tuv xml:lang="en"><seg>Only English</seg></tuv></tu>
  </body>
</tmx>
"""


def import_tmx(api, data: str | bytes = TMX, filename: str = "doors.tmx"):
    return api.post("/api/memory/import", query_string={"filename": filename},
                    data=data.encode() if isinstance(data, str) else data)


def test_a_tmx_file_is_one_commit_of_memory_json_and_its_units_are_suggested(shop):
    project, api = shop
    before = head(project)
    assert import_tmx(api) == (200, {"units": 3, "added": 2})
    assert git(project.path, "rev-parse", "HEAD~1").strip() == before
    assert "Action: import-memory" in git(project.path, "log", "-1", "--format=%B")
    assert git(project.path, "ls-files").split().count("memory.json") == 1
    commit = head(project)
    add(api, "open", "Open the doors")
    [found] = suggested(api, "open")
    assert found == {"text": "Ouvrez la porte", "score": found["score"], "source": "Open the door", "origin": "tmx",
                     "project": project.id, "asset": None, "file": "doors.tmx", "author": "Tester", "commit": commit}
    assert 50 <= found["score"] < 100
    assert api.post("/api/translations/save/fr", data="Sauver".encode())[0] == 200  # a later write: same unit
    assert suggested(api, "open")[0]["commit"] == commit


def test_importing_the_same_units_again_adds_nothing_and_makes_no_commit(shop):
    project, api = shop
    import_tmx(api)
    before = head(project)
    assert import_tmx(api, filename="again.tmx") == (200, {"units": 3, "added": 0})
    assert head(project) == before


def test_a_broken_or_empty_tmx_is_a_422_and_changes_nothing(shop):
    project, api = shop
    before = head(project)
    for data in ("<tmx><body><tu>", "<xliff/>", "", '<!DOCTYPE x [<!ENTITY a "b">]><tmx/>'):
        status, _ = import_tmx(api, data)
        assert status == 422
    assert import_tmx(api, filename="x" * 300)[0] == 400
    assert head(project) == before


def test_a_read_only_key_cannot_import_memory(client, keystore, shop):
    project, _ = shop
    key, _ = keystore.create(project.id, "readonly", "Reader", "")
    assert import_tmx(Api(client, key))[0] == 403


def test_imported_units_are_shared_with_the_memory_group(client, store, keystore, data_dir, shop):
    project, api = shop
    import_tmx(api)
    other, other_api = new_project(client, store, keystore, "Other")
    add(other_api, "open", "Open the door")
    assert suggested(other_api, "open") == []
    for member in (project, other):
        assert gloss(["--data", str(data_dir), "project", "memory", member.id, "doors"]) == 0
    [found] = suggested(other_api, "open")
    assert (found["origin"], found["score"], found["project"]) == ("tmx", 100, project.id)


def test_a_push_may_carry_memory_json_and_its_units_are_checked(demo, tmp_path):
    from storage.checks import CommitChecker
    from storage.errors import Invalid
    from storage.gitrepo import GitRepo

    project, keys = demo
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(project.path), str(clone))
    git(clone, "config", "user.name", "Tester")
    git(clone, "config", "user.email", "tester@example.com")

    def pushed(units: str) -> None:
        (clone / "memory.json").write_text("{\n" + units + "\n}\n", "utf-8")
        git(clone, "add", "-A")
        git(clone, "commit", "-q", "-m", "memory")
        commit = git(clone, "rev-parse", "HEAD").strip().encode()
        CommitChecker(GitRepo(clone), lambda key: False).check(commit, full=False)

    pushed('"u1": {"file": "a.tmx", "texts": {"en": "Yes", "fr": "Oui"}}')
    for units, reason in (('"u2": {"file": "a.tmx", "texts": {"en": "Yes"}}', "two locales or more"),
                          ('"u2": {"file": "a.tmx", "texts": {"en": "Yes", "../x": "Oui"}}', "locale"),
                          ('"u2": {"texts": {"en": "Yes", "fr": "Oui"}}', "file must be a string"),
                          ('"u2": {"file": "a", "texts": {"en": "Yes", "fr": "Oui"}, "x": 1}', "memory unit")):
        with pytest.raises(Invalid) as refused:
            pushed(units)
        assert reason in refused.value.message and "memory.json" in refused.value.message
        git(clone, "reset", "-q", "--hard", "HEAD~1")


@pytest.mark.slow  # a real `gloss serve` with two workers
def test_memory_units_pushed_with_git_are_merged_and_suggested_by_every_worker(tmp_path):
    from tests.gitserver import run_git, serving_demo
    from tests.support import require_tool

    require_tool("git")
    with serving_demo(tmp_path / "data") as served:
        key = served.keys["full"]
        repo = tmp_path / "clone"
        assert run_git(tmp_path, "clone", "-q", served.url(key), str(repo)).returncode == 0
        (repo / "memory.json").write_text(
            '{\n"u1": {"file": "hand.tmx", "texts": {"en": "Welcome to Acme Notebooks", "fr": "Bienvenue"}}\n}\n')
        for command in (("add", "-A"), ("commit", "-q", "-m", "A memory unit"), ("push", "-q", "origin", "main")):
            result = run_git(repo, *command)
            assert result.returncode == 0, result.stderr
        for _ in range(6):  # requests spread over both workers
            status, found = served.api("GET", "/api/translations/home.title/fr/suggestions", key)
            assert status == 200 and [(s["origin"], s["file"], s["text"]) for s in found if s["origin"] == "tmx"] == [
                ("tmx", "hand.tmx", "Bienvenue")]
        assert run_git(repo, "pull", "-q", "--ff-only").returncode == 0  # Gloss's merge commit
        (repo / "memory.json").write_text('{\n"u2": {"file": "hand.tmx", "texts": {"en": "Alone"}}\n}\n')
        run_git(repo, "commit", "-qam", "A unit of one locale")
        result = run_git(repo, "push", "-q", "origin", "main")
        assert result.returncode != 0 and "two locales or more" in result.stderr


def test_a_source_text_given_after_its_translation_pairs_them_with_the_translations_commit(shop):
    project, api = shop
    assert api.post("/api/assets", data={"id": "late", "text": "x"})[0] == 201
    assert api.post("/api/translations/late/en", data=b"")[0] == 200  # no source text
    assert api.post("/api/translations/late/fr", data="Plus tard".encode())[0] == 200
    translated = head(project)
    add(api, "ask", "Later on")
    assert suggested(api, "ask") == []
    assert api.post("/api/translations/late/en", data=b"Later on")[0] == 200
    [found] = suggested(api, "ask")
    assert (found["text"], found["commit"], found["score"]) == ("Plus tard", translated, 100)


def test_a_flagged_translation_is_no_suggestion_until_its_flag_is_cleared(shop):
    project, api = shop
    add(api, "ask", "Save the file")
    assert api.post("/api/translations/save/fr/flag", data={"flag": "fuzzy"})[0] == 200
    assert suggested(api, "ask") == []
    assert api.delete("/api/translations/save/fr/flag")[0] == 200
    [found] = suggested(api, "ask")
    assert (found["text"], found["commit"]) == ("Enregistrer le fichier", head(project))  # the unflagging commit
