# mountns - build, test and demo. `make test` on a fresh Debian machine
# installs what is missing (make deps), builds, runs every spec and luacheck.

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
MOUNT_LIBS := $(shell pkg-config --libs mount 2>/dev/null || echo -lmount)

SRCS := $(wildcard csrc/*.c)
OBJS := $(SRCS:csrc/%.c=$(BUILD)/obj/%.o)
MODULE := $(BUILD)/mountns/core.so

export LUA_PATH  := $(CURDIR)/lua/?.lua;$(CURDIR)/lua/?/init.lua;$(CURDIR)/spec/?.lua;;
export LUA_CPATH := $(CURDIR)/$(BUILD)/?.so;;

# Debian's interpreter and headers for LUA (5.1's headers are liblua5.1-0-dev).
LUA_DEBS = $(if $(filter luajit,$(LUA)),luajit libluajit-5.1-dev,$(LUA) \
           $(if $(filter lua5.1,$(LUA)),liblua5.1-0-dev,lib$(LUA)-dev))
DEBS := $(LUA_DEBS) libmount-dev lua-busted lua-check pkg-config gcc make util-linux

.PHONY: all deps test check lint demo bench diagrams doc clean

all: $(MODULE)

$(BUILD)/obj/%.o: csrc/%.c csrc/lmns.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_WARN) $(CFLAGS) -fPIC $(LUA_CFLAGS) $(MOUNT_CFLAGS) -c $< -o $@

$(MODULE): $(OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS) -o $@ $(OBJS) $(MOUNT_LIBS)

# Install missing Debian packages; a no-op when all are present.
deps:
	@missing=""; for p in $(DEBS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq $$missing >/dev/null; \
	fi

# Run every spec with busted under $(LUA) then luacheck. --cpath overrides
# .busted's build/?.so, which holds the 5.4 module.
test: deps
	$(MAKE) all
	busted --lua=$(LUA) --cpath='$(BUILD)/?.so' $(BUSTED_ARGS) spec
	$(MAKE) lint

lint:
	luacheck -q --no-color lua spec bin examples bench

demo: deps
	$(MAKE) all
	$(LUA) bin/mountns run examples/article.lua

# Every benchmark under bench/: ratios against baselines of the same run.
bench: deps
	$(MAKE) all
	@for f in bench/*.lua; do echo "== $$f"; $(LUA) $$f || exit 1; done

# Render every example's namespaces (peer groups, slave edges) to SVG and
# PNG under doc/diagrams with Graphviz; README shows doc/diagrams/article-1.
diagrams: deps
	$(MAKE) all
	@command -v dot >/dev/null || { export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq graphviz >/dev/null; }
	rm -rf $(BUILD)/diagrams && mkdir -p doc/diagrams
	$(LUA) bin/mountns run --dot $(BUILD)/diagrams examples/*.lua >/dev/null
	@for f in $(BUILD)/diagrams/*.dot; do b=$$(basename $$f .dot); \
	  cp $$f doc/diagrams/$$b.dot; \
	  dot -Tsvg $$f -o doc/diagrams/$$b.svg && dot -Tpng $$f -o doc/diagrams/$$b.png || exit 1; \
	done; echo "diagrams: $$(ls doc/diagrams/*.svg | wc -l) rendered into doc/diagrams"

# LDoc HTML of the whole API in doc/ldoc/ (see config.ld; discount renders
# the README's Markdown). Any LDoc warning fails; doc/undocumented.lua names
# each function of mountns.core without a /*** comment in csrc/.
doc: deps
	$(MAKE) all
	$(MAKE) deps DEBS="lua-ldoc lua-discount"
	rm -rf doc/ldoc
	@ldoc . >$(BUILD)/ldoc.log 2>&1; rc=$$?; \
	grep -v '^found master module\|^\*\*\*closing section' $(BUILD)/ldoc.log; \
	if [ $$rc -ne 0 ] || grep -q ':[0-9][0-9]*: ' $(BUILD)/ldoc.log; then exit 1; fi
	@$(LUA) doc/undocumented.lua

clean:
	rm -rf $(BUILD)
