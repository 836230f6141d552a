# tinytool — the same gates locally and in CI (.ci/run calls these targets).

PREFIX ?= /usr/local
CARGO ?= cargo
BIN := $(or $(CARGO_TARGET_DIR),target)/release/tinytool

.PHONY: build release test lint doc check demo install man completions bench soak conformance clean

build:
	$(CARGO) build --locked

release:
	$(CARGO) build --locked --release

# Tests that cannot make their check here (no user namespaces, not root, a missing tool)
# fail under CI; elsewhere they pass, and the run ends with a count of them and why.
SKIPPED := $(abspath $(or $(CARGO_TARGET_DIR),target))/skipped-tests.txt

test:
	@mkdir -p $(dir $(SKIPPED)) && rm -f $(SKIPPED)
	TINYTOOL_SKIPPED=$(SKIPPED) $(CARGO) test --locked
	@if [ -s $(SKIPPED) ]; then \
		echo "$$(wc -l < $(SKIPPED)) tests skipped (they fail under CI):"; sort $(SKIPPED) | sed 's/^/  /'; \
	else \
		echo "no test skipped"; \
	fi

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --locked --all-targets -- -D warnings

# The code's docs are for the people who build it: private items documented and linked.
doc:
	RUSTDOCFLAGS="-D warnings -A rustdoc::private_intra_doc_links" $(CARGO) doc --locked --no-deps --document-private-items

check: lint test doc

# Build the release binary and pipe sample tool calls through one `exec --jsonl` process.
demo: release
	@echo "# $(BIN) --dir examples/project exec --jsonl < examples/demo.jsonl"
	@$(BIN) --dir examples/project exec --jsonl < examples/demo.jsonl

# Regenerate the committed man pages and completion scripts from the definitions
# (a test fails when they drift). One generator run writes both.
man:
	$(CARGO) run --locked --quiet --example gen-docs > /dev/null

completions: man
	@:

# Binary, man pages (each into the folder of its section) and completions under PREFIX.
install: release
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/tinytool
	for page in man/*.[1-9]; do \
		section=$${page##*.}; \
		install -d $(DESTDIR)$(PREFIX)/share/man/man$$section && \
		install -m 0644 $$page $(DESTDIR)$(PREFIX)/share/man/man$$section/ || exit 1; \
	done
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 0644 completions/tinytool.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/tinytool
	install -m 0644 completions/_tinytool $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_tinytool
	install -m 0644 completions/tinytool.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/tinytool.fish

# Benchmarks against peer commands (installs hyperfine, ripgrep, fd-find and GNU time via
# apt-get when missing; never run by .ci/run). One table of medians and ratios.
bench:
	bench/run

# A shorter version of the MCP soak (issue 44): a steady mix of write, read, edit, grep, bash
# and glob calls from several sessions over stdio and HTTP for SOAK_MINUTES, printing each
# server's resident memory at the start, after the warm-up and at the end (bench/soak.py
# --help for the knobs; never run by .ci/run).
SOAK_MINUTES ?= 3
soak: release
	python3 bench/soak.py --bin $(BIN) --minutes $(SOAK_MINUTES)

# The official MCP conformance suite against `tinytool mcp --listen`, for the 2025-11-25 and
# 2026-07-28 requirement sets, with conformance/expected-failures-*.yml (installs the
# pinned suite, and node 22 when needed, with npm); then the official Python and TypeScript
# SDK clients against both transports (conformance/clients: pip and npm install them under
# target/). Never run by .ci/run; both halves run, and either failing fails the target.
conformance: release
	BIN=$(BIN) conformance/run; suite=$$?; \
	BIN=$(BIN) conformance/clients; clients=$$?; \
	test $$suite -eq 0 -a $$clients -eq 0

clean:
	$(CARGO) clean
