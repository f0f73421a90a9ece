-- Outputs read by machines and people (issue 10): one escaping rule for
-- every text mountns shows, `show --json` always valid JSON, and the CLI's
-- usage errors, watch endings and start-up paths. Crafted names are mounted
-- only inside isolated children.
local mountns = require "mountns"
local core = require "mountns.core"
local expect = require "mountns.expect"
local watch = require "mountns.watch"
local helper = require "helper"

local isolate = mountns.isolate

-- Mount points a container could craft: a newline that would forge a row,
-- ESC and OSC sequences, CR, tab, DEL, a byte that is not UTF-8, a C1 CSI
-- (U+009B), a literal backslash before digits, and honest UTF-8.
local NAMES = { "nl\nfake 1 2 shared", "esc\027[31mred", "cr\rx", "tab\tx", "del\127x",
                "ff\255x", "c1\194\155x", "bs\\012x", "ok-日本" }
-- sources too: they are chosen by whoever mounts
local SOURCES = { "src\nforged 9 9 tmpfs", "\027]0;title\007", "plain" }

-- Inside an isolated child: a tmpfs on each crafted name under base.
local function mount_crafted()
  local base = helper.sandbox()
  local targets = {}
  for i, n in ipairs(NAMES) do
    local t = base .. "/" .. n
    assert(mountns.mkdir(t))
    assert(mountns.mount(SOURCES[(i - 1) % #SOURCES + 1], t, "tmpfs"))
    targets[i] = t
  end
  return targets
end

-- The inverse of the rule: each \ooo back to its byte.
local function unescape(s)
  return (s:gsub("\\([0-7][0-7][0-7])", function(o) return string.char(tonumber(o, 8)) end))
end

-- Whether s is well-formed UTF-8 (Lua 5.1 and LuaJIT have no utf8 library).
local function valid_utf8(s)
  local i, n = 1, #s
  while i <= n do
    local c = s:byte(i)
    local len = c < 0x80 and 1 or (c >= 0xc2 and c <= 0xdf) and 2
      or (c >= 0xe0 and c <= 0xef) and 3 or (c >= 0xf0 and c <= 0xf4) and 4
    if not len or i + len - 1 > n then return false end
    for k = i + 1, i + len - 1 do
      local b = s:byte(k)
      if b < 0x80 or b > 0xbf then return false end
    end
    i = i + len
  end
  return true
end

-- No control character but the line breaks, no C1 control, valid UTF-8.
local function assert_clean(text, what)
  local bad = text:find("[%z\1-\9\11-\31\127]")
  assert(not bad, what .. ": raw control byte " .. tostring(bad and text:byte(bad)))
  assert(not text:find("\194[\128-\159]"), what .. ": raw C1 control")
  assert(valid_utf8(text), what .. ": not UTF-8")
end

local function lines(s)
  local out = {}
  for l in (s:sub(-1) == "\n" and s or s .. "\n"):gmatch("([^\n]*)\n") do out[#out + 1] = l end
  return out
end

local function set_of(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p " .. d))
  return d
end

local has_python = helper.sh("command -v python3 || true") ~= ""

describe("mountns.escape", function()
  it("turns controls, DEL, C1, non-UTF-8 and the backslash into \\ooo, and back", function()
    local e = mountns.escape
    assert.are.equal("/a\\012b", e("/a\nb"))
    assert.are.equal("\\033[31m\\015\\011\\177\\000", e("\027[31m\r\t\127\0"))
    assert.are.equal("\\377\\302\\233\\300\\257\\355\\240\\200", -- C1, overlong, surrogate
      e("\255\194\155\192\175\237\160\128"))
    assert.are.equal("\\134012", e("\\012"))
    assert.are.equal("/ü/日本 x", e("/ü/日本 x"))
    assert.are.equal("a\\040b\\134", e("a b\\", " "))
    -- every byte alone and in pairs comes back as it was, as clean text
    for c = 0, 255 do
      for _, s in ipairs { string.char(c), string.char(c) .. "\128", "\226" .. string.char(c) } do
        assert.are.equal(s, unescape(e(s)))
        assert_clean(e(s), "escape of byte " .. c)
      end
    end
  end)
end)

describe("a crafted mount point or source", function()
  local r
  setup(function()
    r = isolate(function()
      local targets = mount_crafted()
      local t = mountns.mountinfo()
      local fake = { mounts = function() return t end,
                     find = function(_, p) return t:find(p) end }
      local _, diag = pcall(expect.not_mounted, fake, targets[1])
      local ev = { kind = "change", ns = fake, mount = t:find(targets[2]),
                   before = t:find(targets[1]), fields = { "target", "source" } }
      return {
        targets = targets, n = #t, tree = tostring(t),
        mountinfo = mountns.format(t, "mountinfo"), article = mountns.format(t, "article"),
        ftree = mountns.format(t, "tree"), json = select(2, pcall(mountns.format, t, "json")),
        dot = mountns.dot(t), diag = diag,
        event = watch.describe(ev) .. "\n" .. watch.describe { kind = "attach", ns = fake,
          mount = t:find(targets[1]) },
        records = (function()
          local out = {}
          for i, m in ipairs(t) do out[i] = { target = m.target, source = m.source } end
          return out
        end)(),
      }
    end)
  end)

  it("gives one clean row per mount in tostring(t) and format's tree", function()
    assert_clean(r.tree, "tostring")
    assert.are.equal(r.n + 1, #lines(r.tree))
    -- format's tree escapes spaces too: the TARGET column of each row,
    -- unescaped, is a mount point the kernel has
    local l = lines(r.ftree)
    local want, got = {}, {}
    for _, m in ipairs(r.records) do want[#want + 1] = m.target end
    for k = 2, #l do
      got[#got + 1] = unescape(l[k]:gsub("^[│├└─ ]*", ""):match("^(%S+)"))
    end
    assert.are.same(set_of(want), set_of(got))
    assert.truthy(r.tree:find("/nl\\012fake 1 2 shared ", 1, true))
    assert.truthy(r.tree:find("src\\012forged", 1, true))
    assert.truthy(r.tree:find("/ok-日本", 1, true))
  end)

  it("stays one line per mount in format's three styles and round-trips", function()
    for _, style in ipairs { "mountinfo", "article", "ftree" } do
      assert_clean(r[style], style)
    end
    assert.are.equal(r.n, #lines(r.mountinfo))
    assert.are.equal(r.n, #lines(r.article))
    assert.are.equal(r.n + 1, #lines(r.ftree))
    local back = assert(mountns.parse_mountinfo(r.mountinfo))
    for i, m in ipairs(r.records) do
      assert.are.equal(m.target, back[i].target)
      assert.are.equal(m.source, back[i].source)
    end
  end)

  it("stays inside its label in the dot text", function()
    assert_clean(r.dot, "dot")
    assert.truthy(r.dot:find('label="/tmp/mns/esc\\\\033[31mred\\n#', 1, true))
  end)

  it("is escaped in expect's diagnostic and in watch event lines", function()
    assert_clean(r.diag, "diagnostic")
    -- headline, the namespace, the header, one row per mount; one marked row
    local l = lines(r.diag)
    assert.are.equal(r.n + 3, #l)
    assert.matches("^expected no mount at /tmp/mns/nl\\012fake 1 2 shared in ", l[1])
    local marked = 0
    for _, x in ipairs(l) do if x:find("^  >> ") then marked = marked + 1 end end
    assert.are.equal(1, marked)
    assert_clean(r.event, "watch.describe")
    local ev = lines(r.event)
    assert.are.equal(2, #ev)
    assert.matches("^change /tmp/mns/esc\\033%[31mred in .*; target /tmp/mns/nl\\012fake 1 2 "
      .. "shared %-> /tmp/mns/esc\\033%[31mred; source src\\012forged 9 9 tmpfs %-> "
      .. "\\033%]0;title\\007$", ev[1])
    assert.matches("^attach /tmp/mns/nl\\012fake 1 2 shared in ", ev[2])
  end)

  it("keeps format(t, \"json\") valid JSON with the bytes recoverable", function()
    assert_clean(r.json, "json")
    assert.are.equal(r.n, #lines(r.json))
    -- each target as a JSON string: decode JSON's \\ and \", then \ooo
    local targets = {}
    for s in r.json:gmatch('"target":"(.-[^\\])"') do
      targets[#targets + 1] = unescape((s:gsub('\\(["\\])', "%1")))
    end
    local want = {}
    for _, m in ipairs(r.records) do want[#want + 1] = m.target end
    assert.are.same(want, targets)
  end)
end)

describe("an error message", function()
  it("names a crafted path escaped, as every output does", function()
    local msgs = isolate(function()
      local base = helper.sandbox()
      local _, e1 = mountns.mount("x", base .. "/no\nsuch\027[31m", "tmpfs")
      local _, e2 = mountns.bind(base .. "/a\255", base .. "/b\\")
      return { e1, e2 }
    end)
    assert.are.equal("mount x /tmp/mns/no\\012such\\033[31m: No such file or directory "
      .. "(ENOENT)", msgs[1])
    assert.matches("^bind /tmp/mns/a\\377 /tmp/mns/b\\134: .* %(ENOENT%)$", msgs[2])
  end)
end)

describe("bin/mountns show", function()
  local pyit = has_python and it or pending

  pyit("--json is valid UTF-8 JSON for python3, lossless after \\ooo decoding", function()
    local out = isolate(function()
      mount_crafted()
      local want = {}
      for _, m in ipairs(mountns.mountinfo()) do
        want[#want + 1] = (m.target:gsub(".", function(c)
          return string.format("%02x", c:byte())
        end))
      end
      local file = "/tmp/mns/show.json"
      local status = helper.sh("cd " .. helper.ROOT .. " && " .. helper.lua_vars()
        .. " bin/mountns show --json > " .. file .. "; echo $?")
      -- one python3: the file decoded strictly as UTF-8 (what json.tool
      -- does with a file; stdin would pass bad bytes), then its status
      local got = lines(helper.sh("python3 -c '\n"
        .. "import json, re, sys\n"
        .. "d = json.load(open(sys.argv[1], encoding=\"utf-8\"))\n"
        .. "for m in d[\"mounts\"]:\n"
        .. "    b = re.sub(rb\"\\\\([0-7]{3})\", lambda x: bytes([int(x.group(1), 8)]),\n"
        .. "               m[\"target\"].encode())\n"
        .. "    print(b.hex())\n' " .. file .. " 2>/dev/null; echo $?"))
      local tool = table.remove(got)
      return { status = status, tool = tool, want = want, got = got }
    end)
    assert.are.equal("0", out.status)
    assert.are.equal("0", out.tool)
    assert.are.same(out.want, out.got)
  end)

  it("prints one row per mount, whatever the names", function()
    local out = isolate(function()
      mount_crafted()
      local n = #mountns.mountinfo()
      return { n = n, text = helper.sh("cd " .. helper.ROOT .. " && " .. helper.lua_vars()
        .. " bin/mountns show") }
    end)
    assert_clean(out.text, "show")
    assert.are.equal(out.n + 1, #lines(out.text))
  end)

  it("--watch prints one clean line per event on a crafted mount point", function()
    local out = isolate(function()
      local base = helper.sandbox()
      local t = base .. "/" .. NAMES[1]
      assert(mountns.mkdir(t))
      -- the shell prints its PID and execs the watcher, which is ended once
      -- its line is read, not waited out (--timeout only bounds a watcher
      -- that misses the event); what it printed up to then is got[3]
      local p = io.popen("cd " .. helper.ROOT .. " && echo $$ && exec " .. helper.lua_cmd()
        .. " bin/mountns show --watch --fallback --timeout 10 --interval 0.05")
      local watcher = tonumber(p:read("*l"))
      local got = { p:read("*l") }
      assert(mountns.mount(SOURCES[2], t, "tmpfs"))
      got[2] = p:read("*l")
      assert(core.kill(watcher, "TERM"))
      got[3] = p:read("*a")
      p:close()
      return got
    end)
    assert.matches("^watching ", out[1])
    assert.matches("^attach /tmp/mns/nl\\012fake 1 2 shared in mnt:%[%d+%]: private %(id %d+%)$",
      out[2])
    assert_clean(out[3], "watch")
  end)

  it("refuses bad arguments with one usage line, exit 2", function()
    local cases = {
      { "99999999999999999999", "PID 99999999999999999999 out of range" },
      { "0", "PID 0 out of range" },
      { "1 2", "one PID at most %(got 1 and 2%)" },
      { "--json --dot", "%-%-json and %-%-dot exclude each other" },
      { "--json --json", "%-%-json given twice" },
      { "--timeout 1", "%-%-timeout needs %-%-watch" },
      { "--interval 1", "%-%-interval needs %-%-watch" },
      { "--fallback", "%-%-fallback needs %-%-watch" },
      { "--watch --json", "%-%-json does not apply to %-%-watch" },
      { "--watch --interval 0 --timeout 1", "%-%-interval must be more than 0 seconds" },
      { "--watch --interval -1 --timeout 1", "%-%-interval must be more than 0 seconds" },
      { "--watch --timeout -1", "%-%-timeout must not be negative" },
      { "--watch --timeout 1e999", "%-%-timeout needs seconds %(a number%), got '1e999'" },
      { "--watch --timeout", "%-%-timeout needs seconds %(a number%), got nothing" },
    }
    for _, c in ipairs(cases) do
      -- `timeout`: the old code spun for ever on --interval 0
      local out = helper.sh("cd " .. helper.ROOT .. " && timeout 20 " .. helper.lua_cmd()
        .. " bin/mountns show " .. c[1] .. " 2>&1; echo \"exit=$?\"")
      assert.matches("^mountns: show: " .. c[2] .. "[^\n]*\nexit=2$", out)
    end
  end)

  -- A background `bin/mountns ...` started through the shell: its PID,
  -- then its output and a last line "exit=N" on the pipe. The PID is
  -- printed by a child of the subshell that then execs the program, so it
  -- comes before the program's first line (`CMD & echo $!` raced with it).
  local function spawn(args)
    local p = io.popen("cd " .. helper.ROOT .. " && { ( sh -c 'echo $PPID'; exec "
      .. helper.lua_cmd() .. " bin/mountns " .. args
      .. " 2>&1 ) & wait $!; echo \"exit=$?\"; }")
    return p, tonumber(p:read("*l"))
  end

  it("--watch PID ends with a line when that process exits, exit 0", function()
    local sleeper = io.popen("echo $$; exec sleep 600")
    local spid = tonumber(sleeper:read("*l"))
    local p = spawn("show --watch --timeout 30 --interval 0.1 " .. spid)
    local header = p:read("*l")
    assert(core.kill(spid, "TERM"))
    local rest = p:read("*a")
    p:close()
    sleeper:close()
    assert.matches("^watching mnt:%[%d+%] via ", header)
    assert.are.equal("watch ended: process " .. spid .. " exited\nexit=0\n", rest)
  end)

  it("--watch ends on Ctrl-C (SIGINT) without a traceback, exit 130", function()
    local p, pid = spawn("show --watch --timeout 30")
    local header = p:read("*l")
    assert(core.kill(pid, "INT"))
    local rest = p:read("*a")
    p:close()
    assert.matches("^watching ", header)
    assert.are.equal("mountns: show --watch: interrupted\nexit=130\n", rest)
  end)
end)

describe("ns:watch", function()
  it("refuses an interval <= 0 and holds its timeout with a tiny interval", function()
    local r = mountns.scenario(function(ns)
      local errs = {}
      for _, opts in ipairs { { interval = 0 }, { interval = -1 }, { timeout = 0 / 0 },
                              { timeout = "1" } } do
        local ok, err = pcall(ns.watch, ns, opts)
        errs[#errs + 1] = not ok and err or "accepted"
      end
      local w = watch.open(ns)
      errs[#errs + 1] = select(2, pcall(w.next, w, 0 / 0))
      w:close()
      ns:mkdir("/X")
      -- re-reads without end before: the re-read branch starved the deadline
      local n = 0
      -- (a re-read every microsecond until the timeout: 0.1 s of a busy core)
      for _ in ns:watch { timeout = 0.1, interval = 1e-6, run = function()
        ns:mount("x", "/X", "tmpfs")
      end } do n = n + 1 end
      return { errs = errs, n = n }
    end, { timeout = 20 })
    assert.matches("option 'interval' must be a number of seconds > 0, got 0", r.errs[1])
    assert.matches("option 'interval' must be a number of seconds > 0, got %-1", r.errs[2])
    assert.matches("option 'timeout' must be a number of seconds >= 0, got %-?nan", r.errs[3])
    assert.matches("option 'timeout' must be a number of seconds >= 0, got string", r.errs[4])
    assert.matches("bad argument #1 to 'watch:next' %(seconds expected, got %-?nan%)", r.errs[5])
    assert.are.equal(1, r.n)
  end)
end)

describe("bin/mountns start-up", function()
  local interp = helper.lua_cmd():match("(%S+)$")
  local clean = "env -u LUA_PATH -u LUA_CPATH -u LUA_PATH_5_2 -u LUA_CPATH_5_2 -u LUA_PATH_5_3 "
    .. "-u LUA_CPATH_5_3 -u LUA_PATH_5_4 -u LUA_CPATH_5_4 "

  it("finds the tree's modules as ./mountns from inside bin/", function()
    local out = helper.sh("cd " .. helper.ROOT .. "/bin && " .. clean .. interp
      .. " ./mountns show --json 2>&1")
    assert.matches('^{"mounts":%[{"id":%d+', out)
  end)

  it("run by its path in the tree, starts no readlink (a shell and a process)", function()
    local dir = tmpdir()
    local root = helper.sh("cd " .. helper.ROOT .. " && pwd")
    -- a readlink first in PATH that leaves a trace when it is started
    local f = assert(io.open(dir .. "/readlink", "w"))
    f:write("#!/bin/sh\n: > " .. dir .. "/called\nexec /bin/readlink \"$@\"\n")
    f:close()
    assert(os.execute("chmod +x " .. dir .. "/readlink"))
    local out = helper.sh("cd / && PATH=" .. dir .. ":$PATH " .. clean .. interp .. " "
      .. root .. "/bin/mountns show --json 2>&1")
    local called = io.open(dir .. "/called")
    if called then called:close() end
    -- through a symlink elsewhere it is needed, and started
    assert(os.execute("ln -s " .. root .. "/bin/mountns " .. dir .. "/mns"))
    local out2 = helper.sh("cd / && PATH=" .. dir .. ":$PATH " .. clean .. interp .. " "
      .. dir .. "/mns show --json 2>&1")
    local called2 = io.open(dir .. "/called")
    if called2 then called2:close() end
    os.execute("rm -rf " .. dir)
    assert.matches('^{"mounts":%[{"id":%d+', out)
    assert.is_nil(called)
    assert.matches('^{"mounts":%[{"id":%d+', out2)
    assert.is_not_nil(called2)
  end)

  it("finds the tree's modules through a symlink elsewhere", function()
    local dir = tmpdir()
    local root = helper.sh("cd " .. helper.ROOT .. " && pwd")
    local ok = os.execute("ln -s " .. root .. "/bin/mountns " .. dir .. "/mns")
    assert(ok == true or ok == 0)
    local out = helper.sh("cd / && " .. clean .. interp .. " " .. dir .. "/mns show --json 2>&1")
    os.execute("rm -rf " .. dir)
    assert.matches('^{"mounts":%[{"id":%d+', out)
  end)
end)
