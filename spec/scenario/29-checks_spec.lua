-- Checks that must check (issue 23): a check's arguments are validated the
-- same way whichever way it is asked (expect.*, expect.not_*, assert.*,
-- assert.is_not.*, expect.checks.*), so that a typo, a list too short or
-- the same mount named twice raises a usage error at the caller's line
-- instead of making a negated check pass because the thing it names is
-- never there. Every check runs from a table of cases, enumerated from the
-- modules (a new check without a case fails here), with each kind of bad
-- argument and, with good ones, in both polarities, on the kernel and on
-- the model.
local mountns = require "mountns"
local expect = require "mountns.expect"
local model = require "mountns.model"
local core = require "mountns.core"
local luassert = require "mountns.luassert" -- before any scenario starts

local unpack = table.unpack or unpack -- luacheck: ignore

local function pack(...) return { n = select("#", ...), ... } end

-- ---- the faces of a check, each called on a line it reports ----------------
-- (no tail call: `return f()` would leave the frame that the error names)

local function call_expect(name, a)
  local line = debug.getinfo(1, "l").currentline + 1
  local ok, err = pcall(function() local r = expect[name](unpack(a, 1, a.n)); return r end)
  return line, ok, err
end

local function call_check(name, a)
  local line = debug.getinfo(1, "l").currentline + 1
  local ok, err = pcall(function() local r = expect.checks[name](unpack(a, 1, a.n)); return r end)
  return line, ok, err
end

local function call_assert(name, a)
  local line = debug.getinfo(1, "l").currentline + 1
  local ok, err = pcall(function() local r = luassert[name](unpack(a, 1, a.n)); return r end)
  return line, ok, err
end

local function call_assert_not(name, a)
  local line = debug.getinfo(1, "l").currentline + 1
  local ok, err = pcall(function() local r = luassert.is_not[name](unpack(a, 1, a.n)); return r end)
  return line, ok, err
end

-- The expect functions that are no check: plumbing.
local NOT_A_CHECK = { run = true, diagnostic = true }

-- expect's functions by the check they ask, and which way: expect.X asks
-- check X (or, for golden, which has no check form, itself), expect.not_X
-- asks X negated.
local function expect_faces()
  local out = {}
  for name, v in pairs(expect) do
    if type(v) == "function" and not NOT_A_CHECK[name] then
      local base = name:match("^not_(.+)$")
      out[#out + 1] = { name = name, check = base or name, negated = base ~= nil }
    end
  end
  table.sort(out, function(a, b) return a.name < b.name end)
  return out
end

-- The assertions mountns.luassert registered: those whose message says so.
local function luassert_names()
  local say = require "say"
  local out = {}
  for name, a in pairs(require("luassert.namespaces").assertion) do
    local text = a.positive_message and say(a.positive_message)
    if type(text) == "string" and text:find("mountns check", 1, true) then
      out[#out + 1] = name
    end
  end
  table.sort(out)
  return out
end

-- Every way to ask check `check`: {label, call, negated}, the negated ones
-- marked (nil when the face has no negated form: checks.X returns ok).
local function faces_of(check)
  local out = {}
  for _, f in ipairs(expect_faces()) do
    if f.check == check then
      out[#out + 1] = { label = "expect." .. f.name, negated = f.negated,
                        call = function(a) return call_expect(f.name, a) end }
    end
  end
  if expect.checks[check] then
    out[#out + 1] = { label = "expect.checks." .. check, direct = true,
                      call = function(a) return call_check(check, a) end }
    out[#out + 1] = { label = "assert." .. check, negated = false,
                      call = function(a) return call_assert(check, a) end }
    out[#out + 1] = { label = "assert.is_not." .. check, negated = true,
                      call = function(a) return call_assert_not(check, a) end }
  end
  return out
end

-- ---- the scene: one namespace with a mount of each kind ---------------------
-- /a shared (srcA, nosuid) with its peer /p, /c a slave of them, /b private
-- (srcB); B and C (copies) for propagate_from, U (a user namespace: its
-- mounts locked) for locked. The same calls on the kernel and the model.
local function scene(ns)
  for _, d in ipairs { "/a", "/b", "/c", "/p", "/X", "/Y" } do ns:mkdir(d) end
  ns:mount("srcA", "/a", "tmpfs", "nosuid"); ns:make_shared("/a")
  ns:mkdir("/a/x")
  ns:bind("/a", "/p")
  ns:bind("/a", "/c"); ns:make_slave("/c")
  ns:mount("srcB", "/b", "tmpfs")
  ns:mount("g1", "/X", "tmpfs"); ns:make_shared("/X")
  -- sharedsubtree's slave of a slave (as spec 18): C's /Y receives from A's /X
  local B = ns:unshare { propagation = "unchanged", label = "B" }
  B:bind("/X", "/Y"); B:make_slave("/Y"); B:make_shared("/Y")
  local C = B:unshare { propagation = "unchanged", label = "C" }
  C:make_slave("/Y")
  local U = ns:unshare { user = true, propagation = "unchanged", label = "U" }
  local t = mountns.format(ns:mounts(), "mountinfo")
  return {
    ns = ns, B = B, C = C, U = U,
    rec_a = ns:mounts():find("/a"),
    text = t,
    -- the text without its last line: one mount less than ns has
    short = t:gsub("[^\n]*\n?$", "", 1),
    noop = function() end,
  }
end

-- ---- the cases -----------------------------------------------------------------
-- For each check: `holds` and `fails`, valid arguments with which it holds
-- and does not hold in the scene, and `bad`: {kind, arguments} that must
-- raise a usage error, of the KINDS that the check's arguments can have
-- (count has no word and names one mount: no "wrong word", no "the same
-- item twice"). `kernel_only`: the model cannot ask it (no events).

local KINDS = { "wrong word", "too few items", "too many items", "the same item twice",
                "unknown option key", "wrong type" }

local CASES = {}

CASES.mounted = {
  holds = function(e) return pack(e.ns, "/a", { source = "srcA", options = "nosuid,rw" }) end,
  fails = function(e) return pack(e.ns, "/b", { options = "nosuid" }) end,
  bad = {
    { "wrong word", function(e) return pack(e.ns, "/a", { options = "rw,nosiud" }) end },
    { "wrong word", function(e) return pack(e.ns, "/b", { options = { "rw", "nosiud" } }) end },
    { "wrong word", function(e) return pack(e.ns, "/a", { options = "rw,,nosuid" }) end },
    { "wrong word", function(e) return pack(e.ns, "/a", { options = "shared" }) end },
    { "unknown option key", function(e) return pack(e.ns, "/a", { sorce = "srcA" }) end },
    { "unknown option key", function(e)
      return pack(e.ns, "/a", { options = { "rw", x = 1 } }) end },
    { "wrong type", function() return pack(5, "/a") end },
    { "wrong type", function(e) return pack(e.ns, {}) end },
    { "wrong type", function(e) return pack(e.ns, "/nothing", { source = 5 }) end },
    { "wrong type", function(e) return pack(e.ns, "/a", { parent = 5 }) end },
    { "too few items", function(e) return pack(e.ns) end },
    { "too many items", function(e) return pack(e.ns, "/a", nil, 1) end },
    { "the same item twice", function(e) return pack(e.ns, "/a", { parent = "/a/" }) end },
  },
}

CASES.propagation = {
  holds = function(e) return pack(e.ns, "/b", "private") end,
  fails = function(e) return pack(e.ns, "/a", "private") end,
  bad = {
    { "wrong word", function(e) return pack(e.ns, "/b", "privat") end },
    { "wrong word", function(e) return pack(e.ns, "/", "rslave") end },
    { "wrong word", function(e) return pack(e.ns, "/a", "slave,shared") end },
    { "unknown option key", function(e) return pack(e.ns, "/c", "slave", { mastr = 1 }) end },
    { "wrong type", function(e) return pack(e.ns, "/b", 5) end },
    { "wrong type", function() return pack("ns", "/b", "private") end },
    { "wrong type", function(e) return pack(e.ns, "/c", "slave", { master = "/a" }) end },
    { "too few items", function(e) return pack(e.ns, "/b") end },
    { "too many items", function(e) return pack(e.ns, "/b", "private", nil, 1) end },
    { "the same item twice", function(e)
      return pack(e.ns, "/c", "slave", { master = { e.ns, "/c" } }) end },
  },
}

local function pair_cases(name, from, to)
  return {
    { "too few items", function(e) return pack({ e.ns, from }) end },
    { "too few items", function() return pack() end },
    { "the same item twice", function(e) return pack({ e.ns, from }, { e.ns, from }) end },
    { "the same item twice", function(e) return pack({ e.ns, "/a" }, { e.ns, "/a/x/.." }) end },
    { "the same item twice", function(e) return pack({ e.ns, e.rec_a }, { e.ns, "/a" }) end },
    { "wrong type", function(e) return pack({ e.ns, from }, 5) end },
    { "wrong type", function(e) return pack({ 5, from }, { e.ns, to }) end },
    { "wrong type", function(e) return pack({ e.ns, 5 }, { e.ns, to }) end },
    { "unknown option key", function(e) return pack({ e.ns, from, x = 1 }, { e.ns, to }) end },
    name ~= "peers" and { "too many items", function(e)
      return pack({ e.ns, from }, { e.ns, to }, { e.ns, "/b" }) end }
      or { "too few items", function(e) return pack({ e.ns, from }, nil, { e.ns, to }) end },
  }
end

CASES.peers = {
  holds = function(e) return pack({ e.ns, "/a" }, { e.ns, "/p" }) end,
  fails = function(e) return pack({ e.ns, "/a" }, { e.ns, "/b" }) end,
  bad = pair_cases("peers", "/a", "/p"),
}

CASES.slave_of = {
  holds = function(e) return pack({ e.ns, "/c" }, { e.ns, "/a" }) end,
  fails = function(e) return pack({ e.ns, "/p" }, { e.ns, "/a" }) end,
  bad = pair_cases("slave_of", "/c", "/a"),
}

CASES.propagate_from = {
  holds = function(e) return pack({ e.C, "/Y" }, { e.ns, "/X" }) end,
  fails = function(e) return pack({ e.C, "/Y" }, { e.B, "/Y" }) end,
  bad = pair_cases("propagate_from", "/c", "/a"),
}

CASES.locked = {
  holds = function(e) return pack(e.U, "/a") end,
  fails = function(e) return pack(e.ns, "/a") end,
  bad = {
    { "wrong type", function() return pack(5, "/a") end },
    { "wrong type", function(e) return pack(e.ns, {}) end },
    { "wrong word", function(e) return pack(e.ns, "a") end }, -- not absolute
    { "too few items", function(e) return pack(e.ns) end },
    { "too many items", function(e) return pack(e.ns, "/a", true) end },
  },
}

CASES.stack = {
  holds = function(e) return pack(e.ns, "/a", { "srcA" }) end,
  fails = function(e) return pack(e.ns, "/a", { "srcB" }) end,
  bad = {
    { "wrong type", function(e) return pack(e.ns, "/a", "srcA") end },
    { "wrong type", function(e) return pack(e.ns, "/a", { 1 }) end },
    { "wrong type", function() return pack(nil, "/a", { "srcA" }) end },
    { "unknown option key", function(e) return pack(e.ns, "/a", { "srcA", top = "x" }) end },
    { "too few items", function(e) return pack(e.ns, "/a") end },
    { "too many items", function(e) return pack(e.ns, "/a", { "srcA" }, 1) end },
  },
}

CASES.order = {
  holds = function(e) return pack(e.ns, { "/a", "/b" }) end,
  fails = function(e) return pack(e.ns, { "/b", "/a" }) end,
  bad = {
    { "too few items", function(e) return pack(e.ns, { "/a" }) end },
    { "the same item twice", function(e) return pack(e.ns, { "/a", "/b", "/a/" }) end },
    { "the same item twice", function(e) return pack(e.ns, { e.rec_a, "/a" }) end },
    { "wrong type", function(e) return pack(e.ns, "/a") end },
    { "wrong type", function(e) return pack(e.ns, { "/a", 5 }) end },
    { "unknown option key", function(e) return pack(e.ns, { "/a", "/b", x = "/c" }) end },
    { "too many items", function(e) return pack(e.ns, { "/a", "/b" }, 1) end },
  },
}

CASES.count = {
  holds = function(e) return pack(e.ns, "/b", 1) end,
  fails = function(e) return pack(e.ns, "/b", 2) end,
  bad = {
    { "wrong type", function(e) return pack(e.ns, "/b", "1") end },
    { "wrong type", function(e) return pack(e.ns, "/b", -1) end },
    { "wrong type", function() return pack({}, "/b", 1) end },
    { "too few items", function(e) return pack(e.ns, "/b") end },
    { "too many items", function(e) return pack(e.ns, "/b", 1, 1) end },
  },
}

CASES.fails = {
  holds = function(e) return pack("EINVAL", e.ns.umount, e.ns, "/a/x") end,
  fails = function(e) return pack("ENOENT", e.ns.umount, e.ns, "/a/x") end,
  bad = {
    { "wrong word", function(e) return pack("EINVLA", e.ns.umount, e.ns, "/a/x") end },
    { "wrong word", function(e) return pack("einval", e.ns.umount, e.ns, "/a/x") end },
    { "wrong type", function(e) return pack(22, e.ns.umount, e.ns, "/a/x") end },
    { "wrong type", function(e) return pack("EINVAL", "umount", e.ns, "/a/x") end },
    { "too few items", function() return pack("EINVAL") end },
  },
}

CASES.golden_mountinfo = {
  holds = function(e) return pack(e.text, e.ns) end,
  fails = function(e) return pack(e.short, e.ns) end,
  bad = {
    { "wrong type", function(e) return pack(5, e.ns) end },
    { "wrong type", function(e) return pack(e.text, e.ns, 5) end },
    { "wrong word", function(e) return pack("hello\n", e.ns) end },
    { "too few items", function(e) return pack(e.text) end },
    { "too few items", function(e) return pack(e.text, e.ns, e.ns) end }, -- one block, two
    { "unknown option key", function(e) return pack(e.text, { W = "/" }, e.ns) end },
  },
}

-- the kernel only: the model has no mount events
CASES.propagates = {
  kernel_only = true,
  holds = function(e)
    return pack(function() e.ns:mount("t", "/a/x", "tmpfs") end,
      { e.ns, "/a/x" }, { e.ns, "/p/x" }, { e.ns, "/c/x" }, { fallback = true })
  end,
  fails = function(e) return pack(e.noop, { e.ns, "/b" }, { fallback = true }) end,
  bad = {
    { "wrong word", function(e) return pack(e.noop, { e.ns, "/a/x", "atach" }) end },
    { "unknown option key", function(e) return pack(e.noop, { e.ns }, { setle = 1 }) end },
    { "unknown option key", function(e) return pack(e.noop, { e.ns, "/a", x = 1 }) end },
    { "wrong type", function(e) return pack("fn", { e.ns, "/a/x" }) end },
    { "wrong type", function(e) return pack(e.noop, 5) end },
    { "wrong type", function(e) return pack(e.noop, { e.ns }, { fallback = 1 }) end },
    { "too few items", function(e) return pack(e.noop) end },
    { "too few items", function(e) return pack(e.noop, { fallback = true }) end },
  },
}

-- golden: no check form, no negation
CASES.golden = {
  holds = function(e) return pack(require("mountns.format").golden_text(e.ns), e.ns) end,
  fails = function(e) return pack(e.text, e.ns) end,
  bad = {
    { "wrong type", function(e) return pack(5, e.ns) end },
    { "too few items", function() return pack("text") end },
    { "unknown option key", function(e) return pack("text", e.ns, { sorce = true }) end },
  },
}

local function sorted_keys(t)
  local out = {}
  for k in pairs(t) do out[#out + 1] = k end
  table.sort(out)
  return out
end

-- ---- running them --------------------------------------------------------------

-- Every bad case through every face: {check, kind, face, line, ok, err}.
local function try_bad(e, kernel)
  local out = {}
  for _, name in ipairs(sorted_keys(CASES)) do
    local case = CASES[name]
    for i, bad in ipairs(case.bad) do
      for _, face in ipairs(faces_of(name)) do
        local line, ok, err = face.call(bad[2](e))
        out[#out + 1] = { check = name, case = i, kind = bad[1], face = face.label, line = line,
                          ok = ok, err = tostring(err), kernel = kernel }
      end
    end
  end
  return out
end

-- Every valid case through every face: {check, want, face, ok, err, negated}
local function try_valid(e, kernel)
  local out = {}
  for _, name in ipairs(sorted_keys(CASES)) do
    local case = CASES[name]
    if case.holds and (kernel or not case.kernel_only) then
      for _, want in ipairs { "holds", "fails" } do
        for _, face in ipairs(faces_of(name)) do
          -- (the direct face's err is the check's ok, when it returns)
          local _, ok, err = face.call(case[want](e))
          out[#out + 1] = { check = name, want = want, face = face.label, negated = face.negated,
                            direct = face.direct, ok = ok, err = tostring(err) }
        end
      end
    end
  end
  return out
end

local SPEC = "29%-checks_spec%.lua:"

-- All of them, so that a failure lists every face and case that let a bad
-- argument through (the first ten of them).
local function check_bad(results)
  assert.is_true(#results > 400, "too few results: " .. #results)
  local wrong, passed = {}, 0
  for _, r in ipairs(results) do
    local what = string.format("%s (%s #%d, %s) on the %s", r.face, r.kind, r.case, r.check,
      r.kernel and "kernel" or "model")
    if r.ok then
      passed = passed + 1
      wrong[#wrong + 1] = what .. " passed"
    elseif not r.err:find("^[^\n]*" .. SPEC .. r.line .. ": bad argument #%d+ to '") then
      wrong[#wrong + 1] = what .. ": not a usage error at line " .. r.line .. ": "
        .. r.err:sub(1, 200)
    end
  end
  assert(#wrong == 0, #wrong .. " of " .. #results .. " bad calls wrong (" .. passed
    .. " passed):\n"
    .. table.concat(wrong, "\n", 1, math.min(10, #wrong)))
end

local function check_valid(results)
  assert.is_true(#results > 50, "too few results: " .. #results)
  for _, r in ipairs(results) do
    local what = string.format("%s (%s, %s)", r.face, r.want, r.check)
    local expect_pass = (r.want == "holds") ~= (r.negated == true)
    if r.direct then
      assert(r.ok, what .. " raised: " .. r.err)
      assert.are.equal(r.want == "holds", r.err == "true", what)
    elseif expect_pass then
      assert(r.ok, what .. " failed: " .. r.err)
    else
      assert(not r.ok, what .. " passed")
      -- a failure, not a usage error: the diagnostic
      assert(not r.err:find("bad argument", 1, true), what .. ": " .. r.err)
    end
  end
end

describe("checks that must check", function()
  -- issue 23's cases, as reported, on the kernel
  it("the issue's cases: each raises, or fails both ways", function()
    local r = mountns.scenario(function(ns)
      local e = scene(ns)
      local function raised(fn)
        local ok, err = pcall(fn)
        return ok and "(passed)" or tostring(err)
      end
      return {
        privat = raised(function() luassert.is_not.propagation(ns, "/b", "privat") end),
        one_peer = raised(function() luassert.is_not.peers({ ns, "/a" }) end),
        one_not_peer = raised(function() expect.not_peers({ ns, "/a" }) end),
        nosiud = raised(function() expect.not_mounted(ns, "/a", { options = "rw,nosiud" }) end),
        parent_neg = raised(function() expect.not_mounted(ns, "/a", { parent = "/zz" }) end),
        parent_pos = raised(function() expect.mounted(ns, "/a", { parent = "/zz" }) end),
        -- nothing at /nothing: still not vacuous
        parent_none = raised(function()
          expect.not_mounted(ns, "/nothing", { parent = "/zz" }) end),
        twice = raised(function() expect.peers({ ns, "/a" }, { ns, "/a" }) end),
        rslave = raised(function() expect.propagation(ns, "/", "rslave") end),
        -- the words that say a flag is absent hold where it is
        suid_b = raised(function() expect.mounted(ns, "/b", { options = "suid,rw" }) end),
        suid_a = raised(function() expect.not_mounted(ns, "/a", { options = "suid" }) end),
        strict = raised(function() expect.not_mounted(e.ns, "/b", { options = "strictatime" }) end),
      }
    end)
    assert.matches("bad argument #3 to 'propagation' %('privat' is not a propagation", r.privat)
    assert.matches("bad argument #2 to 'peers' %(at least 2 mounts", r.one_peer)
    assert.matches("bad argument #2 to 'peers' %(at least 2 mounts", r.one_not_peer)
    assert.matches("bad argument #3 to 'mounted' %(option 'options': unknown mount option "
      .. "'nosiud' %(mountinfo's: ro, rw, nosuid", r.nosiud)
    for _, k in ipairs { "parent_neg", "parent_pos", "parent_none" } do
      assert.matches("but nothing is mounted at /zz in ns1 mnt:%[%d+%] %(the parent%)", r[k])
    end
    assert.matches(": expected no mount at /a in", r.parent_neg)
    assert.matches(": expected a mount at /a in", r.parent_pos)
    assert.matches("bad argument #2 to 'peers' %(names the same mount as argument #1 %(/a in "
      .. "ns1 mnt:%[%d+%]%)", r.twice)
    assert.matches("bad argument #3 to 'propagation' %('rslave' is not a propagation %(a "
      .. "mount's propagation is one of: private shared slave shared,slave unbindable "
      .. "shared,unbindable slave,unbindable shared,slave,unbindable%)%)", r.rslave)
    assert.are.equal("(passed)", r.suid_b)
    assert.are.equal("(passed)", r.suid_a)
    -- a tmpfs mounted without flags is relatime: not strictatime
    assert.are.equal("(passed)", r.strict)
  end)

  it("the propagation words are the ones the core writes in records", function()
    -- each combination of mountinfo's optional fields, parsed by the core
    local seen, lines = {}, {}
    local fields = { "", "shared:1", "master:2", "shared:1 master:2", "unbindable",
                     "shared:1 unbindable", "master:2 unbindable", "shared:1 master:2 unbindable" }
    for i, f in ipairs(fields) do
      lines[i] = string.format("%d 1 0:%d / /m%d rw %s- tmpfs t rw", i + 1, i, i,
        f == "" and "" or (f .. " "))
    end
    local t = assert(mountns.parse_mountinfo("1 0 0:99 / / rw - tmpfs r rw\n"
      .. table.concat(lines, "\n") .. "\n"))
    for i = 2, #t do seen[#seen + 1] = t[i].propagation end
    table.sort(seen)
    local words = { unpack(require("mountns.record").PROPAGATIONS) }
    table.sort(words)
    assert.are.same(words, seen)
  end)

  it("the option words are the core's mount flags (but idmapped)", function()
    local words = expect.OPTION_WORDS
    for _, w in ipairs(words.shown) do
      if w ~= "idmapped" then
        assert(pcall(core._parse_flags, "mount", w), w .. " is no mount flag")
      end
    end
    for w, opposites in pairs(words.absent) do
      assert(pcall(core._parse_flags, "mount", w), w .. " is no mount flag")
      for _, o in ipairs(opposites) do
        assert(pcall(core._parse_flags, "mount", o), o .. " is no mount flag")
      end
    end
  end)

  it("every expect function and every luassert assertion has a case", function()
    for _, f in ipairs(expect_faces()) do
      assert(CASES[f.check], "no case for expect." .. f.name)
      assert(f.check == "golden" or expect.checks[f.check], "expect." .. f.name
        .. " asks no check of expect.checks")
    end
    for name in pairs(expect.checks) do assert(CASES[name], "no case for check " .. name) end
    local names = luassert_names()
    assert.are.same(sorted_keys(expect.checks), names)
    local known, used = {}, {}
    for _, k in ipairs(KINDS) do known[k] = true end
    for name in pairs(CASES) do
      assert(name == "golden" or expect.checks[name], "case for no check: " .. name)
      local kinds = {}
      for _, b in ipairs(CASES[name].bad) do
        assert(known[b[1]], name .. ": unknown kind " .. b[1])
        kinds[b[1]], used[b[1]] = true, true
      end
      assert(kinds["wrong type"] and kinds["too few items"], name .. ": kinds missing")
    end
    for _, k in ipairs(KINDS) do assert(used[k], "no case of kind " .. k) end
  end)

  it("every bad argument raises a usage error at the caller's line, on the model", function()
    local results = model.scenario(function(ns) return try_bad(scene(ns), false) end)
    check_bad(results)
  end)

  it("every bad argument raises a usage error at the caller's line, on the kernel", function()
    -- (a bound for valgrind's pace: every check is a few core calls)
    local results = mountns.scenario(function(ns) return try_bad(scene(ns), true) end,
      { timeout = 600 })
    check_bad(results)
  end)

  it("valid arguments, both polarities, every face, on the model", function()
    local results = model.scenario(function(ns) return try_valid(scene(ns), false) end)
    check_valid(results)
  end)

  -- #novalgrind: hundreds of kernel checks in one scenario pass its 60 s
  -- timeout under memcheck; their C paths run under it in specs 01-21
  it("valid arguments, both polarities, every face, on the kernel #novalgrind", function()
    local results = mountns.scenario(function(ns) return try_valid(scene(ns), true) end)
    check_valid(results)
  end)
end)
