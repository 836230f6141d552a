# tinytool — the same gates locally and in CI (.ci/run calls these targets).

PREFIX ?= /usr/local
CARGO ?= cargo
BIN := target/release/tinytool

.PHONY: build release test lint doc check demo install man completions bench clean

build:
	$(CARGO) build --locked

release:
	$(CARGO) build --locked --release

test:
	$(CARGO) test --locked

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --locked --all-targets -- -D warnings

doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --locked --no-deps

check: lint test doc

# Build the release binary and pipe sample tool calls through one `exec --jsonl` process.
demo: release
	@echo "# $(BIN) --dir examples/project exec --jsonl < examples/demo.jsonl"
	@$(BIN) --dir examples/project exec --jsonl < examples/demo.jsonl

install: release
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/tinytool
	install -m 0644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 0644 completions/tinytool.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/tinytool
	install -m 0644 completions/_tinytool $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_tinytool
	install -m 0644 completions/tinytool.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/tinytool.fish

clean:
	$(CARGO) clean
