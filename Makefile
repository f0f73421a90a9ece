# mountns - build, test and demo. `make test` builds, runs every spec and
# luacheck; on a fresh Debian machine it first installs what is missing
# (make deps), elsewhere it names what is missing.

# LUA is the interpreter: lua5.1, lua5.2, lua5.3, lua5.4 or luajit; its
# pkg-config name is the same. 5.4 builds into build/ (build/mountns/core.so);
# the others into build/$(LUA)/ so each version keeps its own core.so.
LUA      ?= lua5.4
LUA_PC   ?= $(LUA)
CC       ?= cc
BUILD    ?= $(if $(filter lua5.4,$(LUA)),build,build/$(LUA))
CFLAGS_WARN = -std=c99 -Wall -Wextra -Wshadow -Wmissing-prototypes \
              -Wwrite-strings -Werror
CFLAGS   ?= -O2 -g
# only the headers of Lua: the interpreter provides its symbols
LUA_CFLAGS := $(shell pkg-config --cflags $(LUA_PC) 2>/dev/null)
MOUNT_CFLAGS := $(shell pkg-config --cflags mount 2>/dev/null)
# libmount is loaded at run time (dlopen, csrc/libmount.c): only its headers
MOUNT_LIBS := -ldl -lpthread

SRCS := $(wildcard csrc/*.c)
OBJS := $(SRCS:csrc/%.c=$(BUILD)/obj/%.o)
MODULE := $(BUILD)/mountns/core.so
# The Lua modules precompiled for $(LUA) (lua/mountns/bytecode.lua: used
# when built from the very source found, else the source is loaded)
LUA_SRCS := $(sort $(wildcard lua/mountns/*.lua lua/mountns/*/*.lua))
BYTECODE := $(LUA_SRCS:%.lua=$(BUILD)/%.luac)

export LUA_PATH  := $(CURDIR)/lua/?.lua;$(CURDIR)/lua/?/init.lua;$(CURDIR)/spec/?.lua;$(CURDIR)/spec/tools/?.lua;;
export LUA_CPATH := $(CURDIR)/$(BUILD)/?.so;;

# Debian's interpreter and headers for LUA (5.1's headers are liblua5.1-0-dev).
LUA_DEBS = $(if $(filter luajit,$(LUA)),luajit libluajit-5.1-dev,$(LUA) \
           $(if $(filter lua5.1,$(LUA)),liblua5.1-0-dev,lib$(LUA)-dev))
DEBS := $(LUA_DEBS) libmount-dev lua-busted lua-check pkg-config gcc make util-linux perl

.PHONY: all install deps tools test test-args soak check lint demo bench diagrams doc clean matrix \
        matrix-deps check-model man

all: $(MODULE) $(BYTECODE)

$(BUILD)/obj/%.o: csrc/%.c csrc/lmns.h csrc/uapi.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_WARN) $(CFLAGS) -fPIC -fvisibility=hidden $(LUA_CFLAGS) $(MOUNT_CFLAGS) \
	  -c $< -o $@

$(MODULE): $(OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS) -Wl,-z,now -o $@ $(OBJS) $(MOUNT_LIBS)

# All modules in one process when any changed (~30 ms): a grouped target.
# (mountns.core hashes the sources: core.so first)
$(BYTECODE) &: $(LUA_SRCS) $(MODULE)
	@mkdir -p $(sort $(dir $(BYTECODE)))
	$(LUA) lua/mountns/bytecode.lua --build $(BUILD)/lua $(LUA_SRCS)

# `make install` is what `luarocks make rockspec/mountns-scm-1.rockspec`
# runs (its build type "make"): core.so into INST_LIBDIR/mountns/, every
# module into INST_LUADIR with its bytecode beside it (x.luac next to
# x.lua: where mountns.bytecode looks in an installed tree), the layout of
# lua/. luarocks passes its interpreter (LUA), header dir (LUA_CFLAGS) and
# BUILD=build/rock$(LUA) to the build and to this; it installs bin/mountns itself.
install: all
	@test -n "$(INST_LUADIR)" && test -n "$(INST_LIBDIR)" || \
	  { echo "make install: set INST_LUADIR and INST_LIBDIR (luarocks make does)" >&2; exit 1; }
	mkdir -p $(INST_LIBDIR)/mountns
	cp $(MODULE) $(INST_LIBDIR)/mountns/core.so
	@for f in $(LUA_SRCS:lua/%=%); do \
	  mkdir -p "$(INST_LUADIR)/$${f%/*}" && cp "lua/$$f" "$(INST_LUADIR)/$$f" && \
	  cp "$(BUILD)/lua/$${f}c" "$(INST_LUADIR)/$${f}c" || exit 1; \
	done; echo "installed $(words $(LUA_SRCS)) modules and their bytecode into $(INST_LUADIR)"

# Install missing Debian packages; a no-op when all are present (dpkg-query
# only, so any user passes it). Missing packages and not root: one line
# naming them and the command to run as root, and a failure.
DEPS_CMD = make deps$(if $(filter-out lua5.4,$(LUA)), LUA=$(LUA))$(if \
           $(filter command line,$(origin DEBS)), DEBS='$(strip $(DEBS))')
deps:
	@missing=""; for p in $(DEBS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ] && [ "$$(id -u)" -ne 0 ]; then \
	  echo "missing Debian packages:$$missing; install them as root: $(DEPS_CMD)" >&2; \
	  exit 1; \
	fi; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq $$missing >/dev/null; \
	fi

# What `make test` runs, looked for as commands and pkg-config names (any
# distribution, any user): when all are there nothing else happens, no
# dpkg-query and no apt-get; else one line names what is missing and `make
# deps` follows (on Debian as root it installs them: the first run).
TEST_TOOLS = $(CC) pkg-config busted luacheck $(LUA)
tools:
	@missing=""; for c in $(TEST_TOOLS); do \
	  command -v $$c >/dev/null 2>&1 || missing="$$missing $$c"; \
	done; \
	for p in $(LUA_PC) mount; do \
	  pkg-config --exists $$p 2>/dev/null || missing="$$missing $$p.pc"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make test needs:$$missing (make deps installs them on Debian)" >&2; \
	  $(MAKE) --no-print-directory deps; \
	fi

# Every spec with busted under $(LUA), and the lint: spec/parallel runs each
# spec file in a busted of its own and the lint beside them, TEST_JOBS at a
# time (the cores, plus one to fill the specs' waits), then prints all in
# file order as one stream (BUSTED_ARGS="-o TAP": one TAP stream, the points
# numbered across files); any failure fails make test. --cpath overrides
# .busted's build/?.so, which holds the 5.4 module. The soak (#soak: 09's
# few thousand scenarios) is `make soak`; make test keeps 09's short one.
TEST_JOBS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
SPEC_FILES = $(sort $(wildcard spec/*/*_spec.lua))
# busted is a Lua script (#!/usr/bin/env lua): `busted --lua=X` starts the
# default lua, parses its arguments and runs `X busted --ignore-lua ...`
# through a shell. Started by $(LUA) at once instead: two processes fewer
# and 15 ms less CPU a spec file. A wrapper that is not Lua (luarocks'
# shell scripts): --lua as before.
BUSTED_BIN := $(shell command -v busted 2>/dev/null)
BUSTED_LUA := $(shell head -n 1 '$(BUSTED_BIN)' 2>/dev/null | grep -E '^\#!.*lua')
BUSTED_RUN = $(if $(BUSTED_LUA),$(LUA) $(BUSTED_BIN) --ignore-lua,busted --lua=$(LUA))
test: export BUSTED_CMD = $(BUSTED_RUN) --cpath='$(BUILD)/?.so' \
  --exclude-tags=soak $(BUSTED_ARGS)
# One document per busted process would be what `-o junit` (or json)
# prints: the specs run in several busted processes at once and the lint beside
# them, and their outputs are joined as text. So it is refused, naming what
# gives one document; TAP is joined into one stream (spec/parallel).
test: tools test-args
	$(MAKE) all
	sh spec/parallel $(TEST_JOBS) $(BUILD)/test '$(MAKE) --no-print-directory lint' \
	  $(SPEC_FILES)

test-args:
	@case " $(BUSTED_ARGS) " in *junit*|*json*) \
	  echo "make test: BUSTED_ARGS='$(BUSTED_ARGS)': spec/parallel runs the spec files in" \
	    "several busted processes, which would print one document each: refused. One" \
	    "JUnit document: $(BUSTED_RUN) --cpath='$(BUILD)/?.so' -o junit spec (no lint)" \
	    "; one stream of all: make test BUSTED_ARGS='-o TAP'" >&2; exit 2;; esac

# `make check`: the name autotools users type for the tests; the same as
# `make test`.
check: test

# The soak alone: 09's few thousand scenarios in a row (flat memory, no fd
# or process left); .ci/run counts it as a check of its own.
soak: tools
	$(MAKE) all
	$(BUSTED_RUN) --cpath='$(BUILD)/?.so' --tags=soak $(BUSTED_ARGS) spec

# luacheck keeps its per-file results in $(BUILD)/luacheck.cache (a file
# whose mtime changed is checked again; .luacheckrc applies after the cache).
lint:
	@mkdir -p $(BUILD)
	luacheck -q --no-color --cache $(BUILD)/luacheck.cache lua spec bin examples bench doc
	$(LUA) spec/tools/layers.lua

demo: deps
	$(MAKE) all
	$(LUA) bin/mountns run examples/article.lua

# The suite and the examples inside virtual machines booting Debian's
# kernels (vm/README.md): KERNELS (default: every series vm/kernel knows),
# JOBS at a time (default: the online CPUs); one table.
KERNELS ?=
JOBS ?=
matrix-deps:
	$(MAKE) deps DEBS="qemu-system-x86 busybox-static"

matrix: deps matrix-deps
	$(MAKE) all
	KERNELS="$(KERNELS)" JOBS="$(JOBS)" vm/matrix

# The model against the kernel (issue 13): CHECK_N generated sequences of
# CHECK_OPS steps from seed CHECK_SEED, each run on both and compared after
# every step; divergences shrunk into $(BUILD)/check/check-SEED-I.lua.
CHECK_N ?= 100000
CHECK_SEED ?= 1
CHECK_OPS ?= 12
check-model: all
	$(LUA) bin/mountns check --random $(CHECK_N) --seed $(CHECK_SEED) --ops $(CHECK_OPS) \
	  --out $(BUILD)/check

# Every benchmark under bench/: ratios against baselines of the same run
# (bench/lib.lua is what they share, not a benchmark).
bench: deps
	$(MAKE) all
	@for f in $(filter-out bench/lib.lua,$(wildcard bench/*.lua)); do echo "== $$f"; \
	  $(LUA) $$f || exit 1; done

# Render every example's namespaces (peer groups, slave edges) to SVG and
# PNG under doc/diagrams with Graphviz; README shows doc/diagrams/article-1.
diagrams: deps
	$(MAKE) all
	@command -v dot >/dev/null || $(MAKE) --no-print-directory deps DEBS=graphviz
	rm -rf $(BUILD)/diagrams && mkdir -p doc/diagrams
	$(LUA) bin/mountns run --dot $(BUILD)/diagrams examples/*.lua >/dev/null
	@for f in $(BUILD)/diagrams/*.dot; do b=$$(basename $$f .dot); \
	  cp $$f doc/diagrams/$$b.dot; \
	  dot -Tsvg $$f -o doc/diagrams/$$b.svg && dot -Tpng $$f -o doc/diagrams/$$b.png || exit 1; \
	done; echo "diagrams: $$(ls doc/diagrams/*.svg | wc -l) rendered into doc/diagrams"

# The man page and the bash and zsh completions, made from the command
# line's one source (mountns.cli.COMMANDS) by doc/mkusage.lua; spec 39
# fails when the files in the tree are not what it makes now.
USAGE_FILES = doc/mountns.1 doc/completion/mountns.bash doc/completion/_mountns
man: $(USAGE_FILES)
doc/mountns.1: lua/mountns/cli.lua lua/mountns/init.lua doc/mkusage.lua | $(MODULE)
	$(LUA) doc/mkusage.lua man > $@.tmp && mv $@.tmp $@
doc/completion/mountns.bash: lua/mountns/cli.lua lua/mountns/init.lua doc/mkusage.lua | $(MODULE)
	@mkdir -p $(dir $@)
	$(LUA) doc/mkusage.lua bash > $@.tmp && mv $@.tmp $@
doc/completion/_mountns: lua/mountns/cli.lua lua/mountns/init.lua doc/mkusage.lua | $(MODULE)
	@mkdir -p $(dir $@)
	$(LUA) doc/mkusage.lua zsh > $@.tmp && mv $@.tmp $@

# LDoc HTML of the whole API in doc/ldoc/ (see config.ld; discount renders
# the README's Markdown and the manual's pages in doc/*.md as topics). Any LDoc warning fails; spec/tools/undocumented.lua names
# each function of mountns.core without a /*** comment in csrc/.
doc: deps man
	$(MAKE) all
	$(MAKE) deps DEBS="lua-ldoc lua-discount"
	rm -rf doc/ldoc
	@ldoc . >$(BUILD)/ldoc.log 2>&1; rc=$$?; \
	grep -v '^found master module\|^\*\*\*closing section' $(BUILD)/ldoc.log; \
	if [ $$rc -ne 0 ] || grep -q ':[0-9][0-9]*: ' $(BUILD)/ldoc.log; then exit 1; fi
	@$(LUA) spec/tools/undocumented.lua

# ---- hardening (fuzz/README.md): libFuzzer, ASan + UBSan, valgrind -----

# make fuzz: both libFuzzer harnesses, FUZZ_SECONDS each, seeded from
# fuzz/corpus; new inputs go to build/fuzz/corpus (fuzz-merge keeps the few
# that add coverage), a crash to fuzz/crash-*. The harnesses link the module's
# C files and liblua5.4 statically into one clang binary: the gcc build keeps
# -Werror, this one only warns.
FUZZ_SECONDS ?= 60
FUZZ_CC  ?= clang
FUZZ_DIR := build/fuzz
FUZZERS  := mountinfo flags args
FUZZ_MAXLEN_mountinfo := 65536
FUZZ_MAXLEN_flags := 4096
FUZZ_CFLAGS := -std=c99 -Wall -Wextra -Wshadow -Wmissing-prototypes \
               -Wwrite-strings -g -O1 -fsanitize=fuzzer,address,undefined \
               -fno-sanitize-recover=undefined
FUZZ_DEBS := clang libclang-rt-14-dev liblua5.4-dev libmount-dev pkg-config

.PHONY: fuzz fuzz-deps fuzz-merge asan valgrind

fuzz-deps:
	@$(MAKE) --no-print-directory deps DEBS="$(FUZZ_DEBS)"

$(FUZZ_DIR)/%_fuzz: fuzz/%_fuzz.c fuzz/harness.h $(SRCS) csrc/lmns.h csrc/uapi.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $$(pkg-config --cflags lua5.4) $(MOUNT_CFLAGS) \
	  -Icsrc $< $(SRCS) -o $@ $$(pkg-config --libs lua5.4) $(MOUNT_LIBS)

fuzz: fuzz-deps
	$(MAKE) $(FUZZERS:%=$(FUZZ_DIR)/%_fuzz)
	@for f in $(FUZZERS); do \
	  case $$f in mountinfo) max=$(FUZZ_MAXLEN_mountinfo);; *) max=$(FUZZ_MAXLEN_flags);; esac; \
	  mkdir -p $(FUZZ_DIR)/corpus/$$f; \
	  echo "fuzz: $$f for $(FUZZ_SECONDS) s (log: $(FUZZ_DIR)/$$f.log)"; \
	  if ! $(FUZZ_DIR)/$${f}_fuzz -max_total_time=$(FUZZ_SECONDS) -max_len=$$max \
	      -timeout=10 -rss_limit_mb=2048 -artifact_prefix=fuzz/ \
	      $(FUZZ_DIR)/corpus/$$f fuzz/corpus/$$f >$(FUZZ_DIR)/$$f.log 2>&1; then \
	    tail -n 40 $(FUZZ_DIR)/$$f.log; echo "fuzz: $$f FAILED"; exit 1; \
	  fi; \
	  grep -E '^Done [0-9]+ runs' $(FUZZ_DIR)/$$f.log | sed "s/^/fuzz: $$f: /"; \
	done

# Keep in fuzz/corpus only the new inputs that reach new edges (-merge=1;
# -use_counters=0: a new hit count alone is not worth a file in the repo).
fuzz-merge: fuzz-deps
	$(MAKE) $(FUZZERS:%=$(FUZZ_DIR)/%_fuzz)
	@for f in $(FUZZERS); do \
	  $(FUZZ_DIR)/$${f}_fuzz -merge=1 -use_counters=0 fuzz/corpus/$$f $(FUZZ_DIR)/corpus/$$f \
	    2>&1 | grep -E '^MERGE-OUTER: [0-9]+ new files' | sed "s/^/$$f: /"; \
	done

# make asan: the module built with -fsanitize=address,undefined (gcc) into
# build/asan and the whole suite run against it. lua5.4 is not instrumented,
# so the ASan runtime is preloaded; the preload reaches every program the
# specs start (sh, ls, dot...), so reports go to files, leaks do not change
# exit codes, and fuzz/sanitizer-logs fails on any ASan/UBSan error and on a
# leak with a frame in mountns' code (it ignores other programs' leaks).
ASAN_CC    ?= gcc
# the spec files (or directory) it runs: ASAN_SPECS=spec/core/30-core-args_spec.lua
ASAN_SPECS ?= spec
ASAN_BUILD := build/asan
ASAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
              -fno-sanitize-recover=undefined

asan: deps
	$(MAKE) $(ASAN_BUILD)/mountns/core.so BUILD=$(ASAN_BUILD) CC=$(ASAN_CC) \
	  CFLAGS="$(ASAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined"
	$(MAKE) all # the bytecode where the searcher looks for $(LUA)'s (spec 40)
	rm -rf $(ASAN_BUILD)/log && mkdir -p $(ASAN_BUILD)/log
	LD_PRELOAD=$$($(ASAN_CC) -print-file-name=libasan.so) \
	ASAN_OPTIONS=log_path=$(CURDIR)/$(ASAN_BUILD)/log/asan:detect_leaks=1 \
	LSAN_OPTIONS=exitcode=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$(CURDIR)/$(ASAN_BUILD)/log/ubsan \
	  busted --lua=$(LUA) --cpath='$(ASAN_BUILD)/?.so' $(BUSTED_ARGS) $(ASAN_SPECS)
	sh fuzz/sanitizer-logs $(ASAN_BUILD)/log

# make valgrind: the suite under memcheck (forked children included, via
# one log fd that survives pivot_root). Fails on any error or definite leak.
# Specs tagged #novalgrind are left out: valgrind 3.19 answers ENOSYS to the
# new mount syscalls, and RSS budgets do not hold under it (fuzz/README.md).
# So are the blocks tagged #model (specs 22-25: the pure-Lua model beside
# kernel scenarios, thousands of them): they add no C path that the other
# specs do not run under memcheck, and would take the run past an hour.
VALGRIND_LOG   := $(BUILD)/valgrind.log
VALGRIND_FLAGS := --vgdb=no --log-fd=9 --error-exitcode=97 --leak-check=full \
                  --show-leak-kinds=definite --errors-for-leak-kinds=definite \
                  --suppressions=$(CURDIR)/fuzz/valgrind.supp

valgrind: deps
	$(MAKE) all
	@$(MAKE) --no-print-directory deps DEBS=valgrind
	rm -f $(VALGRIND_LOG)
	valgrind $(VALGRIND_FLAGS) $(LUA) $$(command -v busted) --ignore-lua \
	  --cpath='$(BUILD)/?.so' --exclude-tags=novalgrind,model $(BUSTED_ARGS) spec \
	  9>>$(VALGRIND_LOG)
	@n=$$(grep -c 'ERROR SUMMARY' $(VALGRIND_LOG)); \
	if grep -q 'ERROR SUMMARY: [1-9]' $(VALGRIND_LOG); then \
	  grep -B40 'ERROR SUMMARY: [1-9]' $(VALGRIND_LOG); \
	  echo "valgrind: errors (see $(VALGRIND_LOG))"; exit 1; \
	fi; echo "valgrind: $$n processes, no error, no definite leak"

clean:
	rm -rf $(BUILD)
