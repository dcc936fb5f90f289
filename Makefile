# Two commands for a newcomer on a fresh Debian machine with Python 3.11:
#   make run    install into .venv, seed the demo project, start the server, print a key and a curl example
#   make test   install what the tests need (system tools via apt when missing) and run the whole suite
# and, for people working on Gloss:
#   make fast   the fast loop: the unit and API tests, without the slow ones (README, "Development")
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DATA   ?= data
HOST   ?= 127.0.0.1
PORT   ?= 8000
WORKERS ?= 2
# Debian packages the test-suite's independent validators and the store need: git (a runtime dependency: the
# store runs `git repack`; the tests clone and fsck), gettext (msgfmt/msgunfmt validate PO and MO files), libxml2-utils (xmllint: XLIFF schemas,
# TMX DTD), qttools5-dev-tools (lrelease/lconvert: Qt TS), aapt (Android resources; the stub project
# needs no android.jar), openjdk-17-jdk-headless (javac/java: Properties.loadFromXML, .properties),
# ruby (Psych reads YAML exports), php-cli (php -l, include and parse_ini_string read PHP and INI exports).
APT_TOOLS := git:git msgfmt:gettext msgunfmt:gettext xmllint:libxml2-utils lrelease:qttools5-dev-tools \
	lconvert:qttools5-dev-tools aapt:aapt javac:openjdk-17-jdk-headless java:openjdk-17-jdk-headless \
	ruby:ruby php:php-cli plistutil:libplist-utils sfparse:gnustep-base-runtime genrb:icu-devtools derb:icu-devtools \
	chromium:chromium chromedriver:chromium-driver
# libplist-utils (plistutil reads plist, bplist and stringsdict exports), gnustep-base-runtime (sfparse checks .strings),
# icu-devtools (genrb compiles .txt, derb dumps .res), chromium and its driver (the web
# pages are tested in a real headless browser).
# Debian packages without a command to look for: python3-icu (ICU4C's MessageFormat, for the system
# python3, reads ARB exports as ICU messages).
APT_LIBS := python3-icu
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: install system-tools run-tools run test fast bench clean

$(BIN)/.installed: pyproject.toml
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { $(SUDO) apt-get update -q && \
		$(SUDO) apt-get install -y -q python3-venv && $(PYTHON) -m venv $(VENV); }
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	@touch $@

install: $(BIN)/.installed

# apt-get install the Debian packages of the given commands (command:package pairs) and libraries that are missing
define apt_install_missing
	@missing=""; for pair in $(1); do tool=$${pair%%:*}; pkg=$${pair##*:}; \
		command -v $$tool >/dev/null 2>&1 || missing="$$missing $$pkg"; done; \
	for pkg in $(2); do dpkg-query -W -f='$${Status}' $$pkg 2>/dev/null | grep -q "ok installed" || \
		missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
		$(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q $$missing; fi
endef

system-tools:
	$(call apt_install_missing,$(APT_TOOLS),$(APT_LIBS))

# running needs git alone (the store runs git); the validators are for the tests
run-tools:
	$(call apt_install_missing,git:git,)

run: install run-tools
	@if [ -d $(DATA)/projects/acme-notes ]; then \
		key=$$($(BIN)/gloss --data $(DATA) key create acme-notes --user "make run" | tail -n 1); \
		echo "Full-access API key for the demo project: $$key"; \
		echo "Try: curl -H \"Authorization: Loco $$key\" http://localhost:$(PORT)/api/auth/verify"; \
		echo "Dashboard: http://localhost:$(PORT)/ (sign in with the key)"; \
	fi
	$(BIN)/gloss --data $(DATA) serve --host $(HOST) --port $(PORT) --workers $(WORKERS)

# The whole suite on TEST_WORKERS processes (pytest-xdist; TEST_WORKERS=0 runs it in this one process).
TEST_WORKERS ?= 2
test: install system-tools
	$(BIN)/python -m pytest -n $(TEST_WORKERS)

# The fast loop while working on Gloss: every test but those marked slow (tests/conftest.py lists them), on
# FAST_WORKERS processes (pytest-xdist). It needs no system tool: a test whose validator is missing skips
# (outside CI). More pytest arguments: make fast ARGS="-k export".
# Its temporary files (each test's data directory and repositories, ~400 MB a run) live in memory, in FAST_TMP
# (/dev/shm when there is one): on disk, the commits' fsyncs and the deletes took as much time as the tests
# (a sample of 7 files: 46-66 s on disk, 14-26 s in /dev/shm, sys CPU 10-12 s -> 2.4 s). Only failed tests keep
# theirs, so runs do not pile up in memory. It keeps Python's compiled bytecode, and pytest's assert-rewritten
# test modules, between runs even where PYTHONDONTWRITEBYTECODE is set: compiling them all again took each
# worker 5.6 s of CPU a run (collection 8.3 s -> 2.7 s).
FAST_WORKERS ?= 2
FAST_TMP ?= $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm)
fast: install
	$(if $(FAST_TMP),TMPDIR=$(FAST_TMP)) PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -m "not slow" \
		-n $(FAST_WORKERS) -o tmp_path_retention_policy=failed $(ARGS)

$(BIN)/.bench-installed: $(BIN)/.installed
	$(BIN)/pip install -q -e '.[test,bench]'
	@touch $@

# Each benchmark prints its figures beside the targets and its peers; a missed target does not stop the others.
bench: install system-tools $(BIN)/.bench-installed
	-$(BIN)/python bench/bench_durability.py
	-$(BIN)/python bench/bench_storage.py
	-$(BIN)/python bench/bench_transfer.py
	-$(BIN)/python bench/formats/bench_formats.py
	-$(BIN)/python bench/formats/bench_formats3.py
	-$(BIN)/python bench/bench_api.py
	-$(BIN)/python bench/bench_xcstrings.py
	-$(BIN)/python bench/bench_git_http.py
	-$(BIN)/python bench/bench_hostile.py
	-$(BIN)/python bench/bench_history.py
	-$(BIN)/python bench/bench_web.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .benchmarks
