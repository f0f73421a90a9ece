-- The documented kernel facts, as the kernel does them: the mount-explosion
-- counts of mount_namespaces(7) ("MS_UNBINDABLE example") and of the kernel's
-- Documentation/filesystems/sharedsubtree.rst (FAQ 3), and the semantics of
-- sharedsubtree.rst section 5 cell by cell: the state transitions (5a), bind
-- (5b), rbind (5c), move (5d), mount (5e), umount (5f) and the namespace
-- copy (5g). Each fact is a function of a scenario namespace that returns
-- what it saw; it runs on the kernel (asserted against the kernel's answer,
-- and each table cell against the document's word, where they agree) and
-- then on the model (`mountns.model`), whose answers and golden text
-- (`mountns.format.golden_text`) must equal the kernel's.
-- doc/kernel-vs-docs.md lists where the kernel and the documents disagree,
-- each shown by an example (examples/explosion-faq3.lua, umount-overmount.lua,
-- copy-unbindable.lua; explosion-man7.lua runs the man page's session).
-- Those examples and the quizzes of section 6 (examples/quiz-*.lua) assert
-- the kernel's answers; spec 04 runs them on the kernel, this spec on the
-- model.
local helper = require "helper"
local mountns = require "mountns"
local format = require "mountns.format"

local unpack = table.unpack or unpack -- luacheck: ignore

local model = require "mountns.model"

-- The running kernel's version, {major, minor}, from /proc (read only).
local COPY_DROPS_UNBINDABLE = helper.COPY_DROPS_UNBINDABLE
local MODEL_PENDING = helper.MODEL_PENDING

local function errno_of(err)
  return tostring(err):match("%((E[%u%d]+)%)%s*$") or tostring(err)
end

-- The mount exactly at path (nil when the topmost mount there is elsewhere).
local function at(t, path)
  local m = t:find(path)
  if m and m.target == path then return m end
  return nil
end

-- How mount m relates to the named mounts (names: name -> record, order:
-- the names to try, in order): "peer of A", "slave of Z", "shared" (a group
-- of its own), "unbindable", "private"; "none" when there is no m. Group IDs
-- are the kernel's, global across namespaces, so names may come from
-- another namespace's table.
local function rel(m, names, order)
  if not m then return "none" end
  local function named(group)
    for _, n in ipairs(order) do
      local o = names[n]
      if o and o ~= m and o.shared == group and not (o.id == m.id and o.target == m.target) then
        return n
      end
    end
  end
  local parts = {}
  if m.shared then
    local peer = named(m.shared)
    parts[#parts + 1] = peer and ("peer of " .. peer) or "shared"
  end
  if m.master then
    local master = named(m.master)
    parts[#parts + 1] = master and ("slave of " .. master) or "slave"
  end
  if m.unbindable then parts[#parts + 1] = "unbindable" end
  if #parts == 0 then parts[1] = "private" end
  return table.concat(parts, ", ")
end

-- ---- 5b, 5d, 5e: bind, move and mount, source type x destination type ----

-- The mount d/x of the given kind: a slave is the slave of a shared
-- d/<master>; a shared one has a peer d/<x>2 and, with_slave, a slave d/<x>3.
local function typed(ns, d, x, kind, master, with_slave)
  local p = d .. "/" .. x
  ns:mkdir(p)
  if kind == "slave" then
    local m = d .. "/" .. master
    ns:mkdir(m); ns:mount(master, m, "tmpfs"); ns:make_shared(m)
    ns:bind(m, p); ns:make_slave(p)
  else
    ns:mount(x, p, "tmpfs")
    if kind == "shared" then
      ns:make_shared(p)
      ns:mkdir(p .. "2"); ns:bind(p, p .. "2")
      if with_slave then ns:mkdir(p .. "3"); ns:bind(p, p .. "3"); ns:make_slave(p .. "3") end
    elseif kind == "unbindable" then
      ns:make_unbindable(p)
    end
  end
end

-- The source A (d/a; a slave's master Z, a shared one's peer A2) and the
-- destination B (d/b; a slave's master Y, a shared one's peer B2 and slave B3).
local function source(ns, d, kind)
  typed(ns, d, "a", kind, "z")
  ns:mkdir(d .. "/a/sub")
end
local function destination(ns, d, kind)
  typed(ns, d, "b", kind, "y", true)
  ns:mkdir(d .. "/b/dir")
end

local CELL_ORDER = { "A", "A2", "Z", "B", "B2", "B3", "Y", "C" }

-- What the operation left under d: {word = the propagation of the new (or
-- moved) mount at B/dir or the errno name, detail = how it and the copies
-- at B2/dir, B3/dir, Y/dir relate to the others}.
local function observe(t, d, outcome, moved)
  if outcome ~= "ok" then return { word = outcome, detail = outcome } end
  local names = {}
  for _, n in ipairs { "A2", "Z", "B", "B2", "B3", "Y" } do
    names[n] = at(t, d .. "/" .. n:lower())
  end
  names.C = at(t, d .. "/b/dir")
  names.A = moved and names.C or at(t, d .. "/a")
  local out = { (moved and "A: " or "C: ") .. rel(names.C, names, CELL_ORDER) }
  for _, n in ipairs { "B2", "B3", "Y" } do
    if names[n] then
      local copy = at(t, d .. "/" .. n:lower() .. "/dir")
      out[#out + 1] = "at " .. n .. ": " .. rel(copy, names, CELL_ORDER)
    end
  end
  return { word = names.C and names.C.propagation or "none", detail = table.concat(out, "; ") }
end

local KINDS = { "shared", "private", "slave", "unbindable" }

-- op: "bind" (A/sub onto B/dir), "move" (A onto B/dir) or "mount" (a new
-- tmpfs onto B/dir: 5e, "the same as bind ... the source mount is always
-- a private mount"). Each cell in a directory of its own under the private
-- /, so no cell propagates to another: the table is read once, at the end.
-- Returns "source -> dest" -> observation.
local function cells(ns, op)
  local done, k = {}, 0
  for _, s in ipairs(op == "mount" and { "new" } or KINDS) do
    for _, dk in ipairs(KINDS) do
      k = k + 1
      local d = "/" .. op .. k
      if op ~= "mount" then source(ns, d, s) end
      destination(ns, d, dk)
      local ok, err
      if op == "bind" then ok, err = pcall(ns.bind, ns, d .. "/a/sub", d .. "/b/dir")
      elseif op == "move" then ok, err = pcall(ns.move, ns, d .. "/a", d .. "/b/dir")
      else ok, err = pcall(ns.mount, ns, "c", d .. "/b/dir", "tmpfs") end
      done[#done + 1] = { s .. " -> " .. dk, d, ok and "ok" or errno_of(err) }
    end
  end
  local t, res = ns:mounts(), {}
  for _, c in ipairs(done) do res[c[1]] = observe(t, c[2], c[3], op == "move") end
  return res
end

-- The document's words (its tables' cells) as the kernel's propagation
-- words; "invalid" is the kernel's EINVAL.
local DOC_WORD = {
  shared = "shared", private = "private", slave = "slave", unbindable = "unbindable",
  ["shared & slave"] = "shared,slave", ["shared and slave"] = "shared,slave",
  invalid = "EINVAL",
}

-- 5b "BIND MOUNT OPERATION" and 5d "MOVE MOUNT OPERATION": [source] =
-- {dest shared, dest non-shared}; non-shared is private, slave or
-- unbindable ("a non-shared(private or slave or unbindable) mount").
local BIND_DOC = {
  shared = { "shared", "shared" },
  private = { "shared", "private" },
  slave = { "shared & slave", "slave" },
  unbindable = { "invalid", "invalid" },
}
local MOVE_DOC = {
  shared = { "shared", "shared" },
  private = { "shared", "private" },
  slave = { "shared and slave", "slave" },
  unbindable = { "invalid", "unbindable" },
}

-- What the kernel does, per cell (C: the new mount at B/dir; for move, A
-- itself there; B2 a peer of B, B3 a slave of B, Y the master of a slave B).
local BIND_KERNEL = {
  ["shared -> shared"] = "C: peer of A; at B2: peer of A; at B3: slave of A",
  ["shared -> private"] = "C: peer of A",
  ["shared -> slave"] = "C: peer of A; at Y: none",
  ["shared -> unbindable"] = "C: peer of A",
  ["private -> shared"] = "C: shared; at B2: peer of C; at B3: slave of C",
  ["private -> private"] = "C: private",
  ["private -> slave"] = "C: private; at Y: none",
  ["private -> unbindable"] = "C: private",
  ["slave -> shared"] = "C: shared, slave of Z; at B2: peer of C, slave of Z; at B3: slave of C",
  ["slave -> private"] = "C: slave of Z",
  ["slave -> slave"] = "C: slave of Z; at Y: none",
  ["slave -> unbindable"] = "C: slave of Z",
  ["unbindable -> shared"] = "EINVAL",
  ["unbindable -> private"] = "EINVAL",
  ["unbindable -> slave"] = "EINVAL",
  ["unbindable -> unbindable"] = "EINVAL",
}
local MOVE_KERNEL = {
  ["shared -> shared"] = "A: peer of A2; at B2: peer of A; at B3: slave of A",
  ["shared -> private"] = "A: peer of A2",
  ["shared -> slave"] = "A: peer of A2; at Y: none",
  ["shared -> unbindable"] = "A: peer of A2",
  ["private -> shared"] = "A: shared; at B2: peer of A; at B3: slave of A",
  ["private -> private"] = "A: private",
  ["private -> slave"] = "A: private; at Y: none",
  ["private -> unbindable"] = "A: private",
  ["slave -> shared"] = "A: shared, slave of Z; at B2: peer of A, slave of Z; at B3: slave of A",
  ["slave -> private"] = "A: slave of Z",
  ["slave -> slave"] = "A: slave of Z; at Y: none",
  ["slave -> unbindable"] = "A: slave of Z",
  ["unbindable -> shared"] = "EINVAL",
  ["unbindable -> private"] = "A: unbindable",
  ["unbindable -> slave"] = "A: unbindable; at Y: none",
  ["unbindable -> unbindable"] = "A: unbindable",
}

-- ---- 5a: the state transitions -------------------------------------------

-- A under d in the row's state: P is a peer, Z a master.
local function state(ns, d, row)
  ns:mkdir(d .. "/a"); ns:mkdir(d .. "/z"); ns:mkdir(d .. "/p")
  if row == "slave" or row == "shared and slave" then
    ns:mount("z", d .. "/z", "tmpfs"); ns:make_shared(d .. "/z")
    ns:bind(d .. "/z", d .. "/a"); ns:make_slave(d .. "/a")
    if row == "shared and slave" then ns:make_shared(d .. "/a"); ns:bind(d .. "/a", d .. "/p") end
  else
    ns:mount("a", d .. "/a", "tmpfs")
    if row == "shared" then ns:make_shared(d .. "/a"); ns:bind(d .. "/a", d .. "/p")
    elseif row == "shared, sole member" then ns:make_shared(d .. "/a")
    elseif row == "unbindable" then ns:make_unbindable(d .. "/a") end
  end
end

local function named(t, d)
  return { A = at(t, d .. "/a"), P = at(t, d .. "/p"), Z = at(t, d .. "/z") }
end
local STATE_ORDER = { "P", "A", "Z" }
local MAKES = { "make_shared", "make_slave", "make_private", "make_unbindable" }

-- The state diagram of 5a: [row] = the words of its make-shared,
-- make-slave, make-private and make-unbindable columns; "*slave/private"
-- is two rows here (a shared mount with a peer, and the sole member of its
-- group, which "makes it private automatically").
local STATE_DOC = {
  { "shared", { "shared", "slave", "private", "unbindable" } },
  { "shared, sole member", { "shared", "private", "private", "unbindable" } },
  { "slave", { "shared and slave", "slave", "private", "unbindable" } },
  { "shared and slave", { "shared and slave", "slave", "private", "unbindable" } },
  { "private", { "shared", "private", "private", "unbindable" } },
  { "unbindable", { "shared", "unbindable", "private", "unbindable" } },
}
local STATE_KERNEL = {
  ["shared"] = { "peer of P", "slave of P", "private", "unbindable" },
  ["shared, sole member"] = { "shared", "private", "private", "unbindable" },
  ["slave"] = { "shared, slave of Z", "slave of Z", "private", "unbindable" },
  ["shared and slave"] = { "peer of P, slave of Z", "slave of P", "private", "unbindable" },
  ["private"] = { "shared", "private", "private", "unbindable" },
  ["unbindable"] = { "shared", "unbindable", "private", "unbindable" },
}

local function transitions(ns)
  local k = 0
  for _, row in ipairs(STATE_DOC) do
    for _, op in ipairs(MAKES) do
      k = k + 1
      state(ns, "/state" .. k, row[1])
      ns[op](ns, "/state" .. k .. "/a")
    end
  end
  local t, res = ns:mounts(), {}
  k = 0
  for _, row in ipairs(STATE_DOC) do
    res[row[1]] = {}
    for j = 1, #MAKES do
      k = k + 1
      local n = named(t, "/state" .. k)
      res[row[1]][j] = { word = n.A.propagation, detail = rel(n.A, n, STATE_ORDER) }
    end
  end
  return res
end

-- ---- 5g: the namespace copy ----------------------------------------------

local COPY_ROWS = { "shared", "slave", "shared and slave", "private", "unbindable" }
-- unshare(2) alone (propagation "unchanged") is the document's "clone
-- namespace"; the other modes are unshare(1)'s, and `user` a copy owned by
-- a new user namespace (less privileged: shared becomes slave).
local COPIES = {
  { propagation = "unchanged" }, { propagation = "private" },
  { propagation = "slave" }, { propagation = "shared" },
  { propagation = "unchanged", user = true }, { propagation = "shared", user = true },
}
local function copy_key(c) return c.propagation .. (c.user and ", user" or "") end

-- 5g's words: "If 'A' is shared, then 'B' is also shared and 'A' and 'B'
-- propagate to each other", "... slave mount of 'Z', then 'B' is also the
-- slave mount of 'Z'", private, "unbindable mount too".
local COPY_DOC = {
  shared = "peer of A", slave = "slave of Z", ["shared and slave"] = "peer of A, slave of Z",
  private = "private", unbindable = "unbindable",
}
local UB = COPY_DROPS_UNBINDABLE and "private" or "unbindable"
local COPY_KERNEL = {
  ["unchanged"] = { "peer of A", "slave of Z", "peer of A, slave of Z", "private", UB },
  ["private"] = { "private", "private", "private", "private", "private" },
  ["slave"] = { "slave of A", "slave of Z", "slave of A", "private", UB },
  ["shared"] = { "peer of A", "shared, slave of Z", "peer of A, slave of Z", "shared", "shared" },
  ["unchanged, user"] = { "slave of A", "slave of Z", "slave of A", "private", UB },
  ["shared, user"] = { "shared, slave of A", "shared, slave of Z", "shared, slave of A", "shared",
                       "shared" },
}

local function copies(ns)
  for k, row in ipairs(COPY_ROWS) do
    state(ns, "/copy" .. k, row)
  end
  local res, all, tp = {}, { ns }, ns:mounts()
  for _, c in ipairs(COPIES) do
    local copy = ns:unshare { propagation = c.propagation, user = c.user }
    all[#all + 1] = copy
    local tc = copy:mounts()
    local out = {}
    for k = 1, #COPY_ROWS do
      local d = "/copy" .. k
      local n = named(tp, d)
      local m = at(tc, d .. "/a")
      out[k] = rel(m, { A = n.A, Z = n.Z }, { "A", "Z" })
    end
    res[copy_key(c)] = out
  end
  return res, all
end

-- ---- 5c and 5f: rbind and umount -----------------------------------------

-- 5c's example: A with B (D, E) and C (F, G); C unbindable; rbind A to Z.
local function rbind(ns)
  ns:mkdir("/A"); ns:mkdir("/Z")
  ns:mount("A", "/A", "tmpfs")
  for _, x in ipairs { "B", "C" } do
    ns:mkdir("/A/" .. x); ns:mount(x, "/A/" .. x, "tmpfs")
  end
  for _, x in ipairs { { "B", "D" }, { "B", "E" }, { "C", "F" }, { "C", "G" } } do
    local p = "/A/" .. x[1] .. "/" .. x[2]
    ns:mkdir(p); ns:mount(x[2], p, "tmpfs")
  end
  ns:make_unbindable("/A/C")
  ns:bind("/A", "/Z", { recursive = true })
  local out = {}
  for _, m in ipairs(ns:mounts():under("/Z")) do out[#out + 1] = m.target .. " " .. m.source end
  return out
end

-- 5f's example: B1, B2, B3 peers; A and then C mounted at b; umount C1.
-- case: "plain"; "C2 has a child" (at C2/x); "C3 over-mounted" (a mount on
-- C3's root); "C1 has a child". Returns the outcome and the stacks at b.
local function umount(ns, case)
  for _, d in ipairs { "/B1", "/B2", "/B3" } do ns:mkdir(d) end
  ns:mount("B", "/B1", "tmpfs"); ns:make_shared("/B1"); ns:mkdir("/B1/b")
  ns:bind("/B1", "/B2"); ns:bind("/B1", "/B3")
  ns:mount("A", "/B1/b", "tmpfs")
  ns:mount("C", "/B1/b", "tmpfs")
  ns:mkdir("/B1/b/x")
  -- a private C stops the child mount from propagating to the other Cs
  if case == "C2 has a child" then ns:make_private("/B2/b"); ns:mount("X", "/B2/b/x", "tmpfs") end
  if case == "C3 over-mounted" then ns:make_private("/B3/b"); ns:mount("O", "/B3/b", "tmpfs") end
  if case == "C1 has a child" then ns:make_private("/B1/b"); ns:mount("X", "/B1/b/x", "tmpfs") end
  local ok, err = pcall(ns.umount, ns, "/B1/b")
  local t = ns:mounts()
  local out = { ok and "ok" or errno_of(err) }
  for _, p in ipairs { "/B1/b", "/B2/b", "/B3/b", "/B2/b/x" } do
    local s = {}
    for _, m in ipairs(t:stack(p)) do s[#s + 1] = m.source end
    out[#out + 1] = p .. " " .. table.concat(s, ",")
  end
  return table.concat(out, "; ")
end

local UMOUNT_CASES = { "plain", "C2 has a child", "C3 over-mounted", "C1 has a child" }
local UMOUNT_KERNEL = {
  ["plain"] = "ok; /B1/b A; /B2/b A; /B3/b A; /B2/b/x ",
  -- the document: "If any of 'C2' or 'C3' has some child mounts, then that
  -- mount is not unmounted"
  ["C2 has a child"] = "ok; /B1/b A; /B2/b A,C; /B3/b A; /B2/b/x X",
  -- ... but a child on C3's root does not keep C3: C3 goes, O takes its
  -- place on A (Linux >= 4.11, "mnt: Tuck mounts under others")
  ["C3 over-mounted"] = "ok; /B1/b A; /B2/b A; /B3/b A,O; /B2/b/x ",
  -- "if 'C1' is told to be unmounted and 'C1' has some sub-mounts, the
  -- umount operation is failed entirely"
  ["C1 has a child"] = "EBUSY; /B1/b A,C; /B2/b A,C; /B3/b A,C; /B2/b/x ",
}

-- ---- the explosions --------------------------------------------------------

-- mount_namespaces(7), "MS_UNBINDABLE example": / with /mntX and /mntY,
-- then `mount --rbind / /home/USER` for cecilia, henry and otto; how
-- "cure": with --make-unbindable after each rbind; "shared": / and its
-- submounts shared first (the man page does not say; its counts are
-- those of private mounts). Returns the mount counts, and for the cure
-- the errno of `mount --bind /home/cecilia /mntZ`.
local function man7(ns, how)
  for _, d in ipairs { "/mntX", "/mntY", "/mntZ", "/home/cecilia", "/home/henry", "/home/otto" } do
    ns:mkdir(d)
  end
  ns:mount("/dev/sdb6", "/mntX", "tmpfs"); ns:mount("/dev/sdb7", "/mntY", "tmpfs")
  if how == "shared" then ns:make_shared("/", { recursive = true }) end
  local counts, refused = { #ns:mounts() }, nil
  for _, user in ipairs { "cecilia", "henry", "otto" } do
    ns:bind("/", "/home/" .. user, { recursive = true })
    if how == "cure" then
      ns:make_unbindable("/home/" .. user)
      if user == "cecilia" then
        local ok, err = pcall(ns.bind, ns, "/home/cecilia", "/mntZ")
        refused = ok and "ok" or errno_of(err)
      end
    end
    counts[#counts + 1] = #ns:mounts()
  end
  return { counts = counts, refused = refused }
end

-- sharedsubtree.rst FAQ 3: "root" with tmp and usr, one vfsmount (the
-- scenario's /); step 2: `mount --make-shared /root; mkdir -p /tmp/m1;
-- mount --rbind /root /tmp/m1`, steps 3 and 4 the same with m2, m3 ("root"
-- is / here: /tmp/m1 is in it). "cure": the document's second run, with
-- /tmp bound on itself and made unbindable. Returns the vfsmount counts
-- before and after each rbind.
local function faq3(ns, how)
  ns:mkdir("/tmp"); ns:mkdir("/usr")
  if how == "cure" then
    ns:bind("/tmp", "/tmp")
    ns:make_shared("/", { recursive = true })
    ns:make_unbindable("/tmp")
  else
    ns:make_shared("/")
  end
  local counts = { #ns:mounts() }
  for i = 1, 3 do
    ns:mkdir("/tmp/m" .. i)
    ns:bind("/", "/tmp/m" .. i, { recursive = true })
    counts[#counts + 1] = #ns:mounts()
  end
  return counts
end

-- ---- running a fact on the kernel and on the model -------------------------

-- name -> steps(ns) returning (result, namespaces for the golden text or
-- nil for {ns}).
local FACTS = {
  { "mount_namespaces(7) explosion", function(ns) return man7(ns, "private") end },
  { "mount_namespaces(7) explosion, / rshared", function(ns) return man7(ns, "shared") end },
  { "mount_namespaces(7) explosion, unbindable", function(ns) return man7(ns, "cure") end },
  { "FAQ 3 explosion", function(ns) return faq3(ns, "shared") end },
  { "FAQ 3 explosion, unbindable", function(ns) return faq3(ns, "cure") end },
  { "5a state transitions", transitions },
  { "5b bind", function(ns) return cells(ns, "bind") end },
  { "5c rbind", rbind },
  { "5d move", function(ns) return cells(ns, "move") end },
  { "5d move from a shared parent", function(ns)
    ns:mkdir("/B"); ns:mkdir("/D")
    ns:mount("b", "/B", "tmpfs"); ns:make_shared("/B"); ns:mkdir("/B/x")
    ns:mount("a", "/B/x", "tmpfs")
    local ok, err = pcall(ns.move, ns, "/B/x", "/D")
    return ok and "ok" or errno_of(err)
  end },
  { "5e mount", function(ns) return cells(ns, "mount") end },
  { "5g namespace copy", copies },
}
for _, case in ipairs(UMOUNT_CASES) do
  FACTS[#FACTS + 1] = { "5f umount, " .. case, function(ns) return umount(ns, case) end }
end

-- The scenarios of an example file, collected without running them:
-- mountns.scenario is swapped for a collector while the file loads.
local EXAMPLES = { "quiz-a-move.lua", "quiz-b-rbind-root.lua", "quiz-c-slave-chain.lua",
                   "explosion-man7.lua", "explosion-faq3.lua", "umount-overmount.lua",
                   "copy-unbindable.lua" }
local function scenarios_of(file)
  local found, real = {}, mountns.scenario
  mountns.scenario = function(name, fn)
    if type(name) == "function" then name, fn = file, name end
    found[#found + 1] = { name = name, fn = fn }
  end
  local ok, err = pcall(dofile, helper.ROOT .. "/examples/" .. file)
  mountns.scenario = real
  assert(ok, err)
  return found
end
-- each example scenario: its own assertions are the kernel's answers (spec
-- 04 runs it on the kernel), so they must hold on the model too
local EXAMPLE_SCENARIOS = {}
for _, file in ipairs(EXAMPLES) do
  for _, sc in ipairs(scenarios_of(file)) do
    EXAMPLE_SCENARIOS[#EXAMPLE_SCENARIOS + 1] = { "examples/" .. file .. ": " .. sc.name, sc.fn }
  end
end

local STEPS = {}
for _, f in ipairs(FACTS) do STEPS[f[1]] = f[2] end

-- The fact on an engine (mountns or the model): {result =, golden =}.
local function run(engine, name)
  local result, golden = engine.scenario(name, function(ns)
    local r, nss = STEPS[name](ns)
    nss = nss or { ns }
    return r, format.golden_text(unpack(nss))
  end)
  return { result = result, golden = golden }
end

local kernel_runs, model_runs = {}, {}
local function kernel(name)
  kernel_runs[name] = kernel_runs[name] or run(mountns, name)
  return kernel_runs[name].result
end

describe("documented facts on the kernel:", function()
  it("mount_namespaces(7): rbind / three times gives 3 -> 6 -> 12 -> 24 mounts", function()
    assert.same({ 3, 6, 12, 24 }, kernel("mount_namespaces(7) explosion").counts)
  end)

  it("mount_namespaces(7) with / rshared first: 3 -> 6 -> 18 -> 126 (the man page's "
    .. "counts are those of private mounts)", function()
    assert.same({ 3, 6, 18, 126 }, kernel("mount_namespaces(7) explosion, / rshared").counts)
  end)

  it("mount_namespaces(7) --make-unbindable: 3 -> 6 -> 9 -> 12, bind of one refused", function()
    local r = kernel("mount_namespaces(7) explosion, unbindable")
    assert.same({ 3, 6, 9, 12 }, r.counts)
    assert.equal("EINVAL", r.refused)
  end)

  it("sharedsubtree.rst FAQ 3: 1 -> 2 -> 6 -> 42 vfsmounts (the document says 24)", function()
    assert.same({ 1, 2, 6, 42 }, kernel("FAQ 3 explosion"))
  end)

  it("sharedsubtree.rst FAQ 3 with /tmp unbindable: 2 -> 3 -> 4 -> 5", function()
    assert.same({ 2, 3, 4, 5 }, kernel("FAQ 3 explosion, unbindable"))
  end)

  it("5a state diagram: every cell as the document says, * and ** included", function()
    local r = kernel("5a state transitions")
    for _, row in ipairs(STATE_DOC) do
      for j, word in ipairs(row[2]) do
        local cell = row[1] .. " | " .. MAKES[j]
        assert.equal(DOC_WORD[word], r[row[1]][j].word, cell .. ": the document's word")
        assert.equal(STATE_KERNEL[row[1]][j], r[row[1]][j].detail, cell)
      end
    end
  end)

  for _, t in ipairs {
    { "5b bind", BIND_DOC, BIND_KERNEL }, { "5d move", MOVE_DOC, MOVE_KERNEL },
  } do
    it(t[1] .. ": all 16 cells (4 sources x shared/private/slave/unbindable), as the "
      .. "document's table says", function()
      local r = kernel(t[1])
      for _, s in ipairs(KINDS) do
        for _, dk in ipairs(KINDS) do
          local cell = s .. " -> " .. dk
          local word = t[2][s][dk == "shared" and 1 or 2]
          assert.equal(DOC_WORD[word], r[cell].word, t[1] .. " " .. cell .. ": the document's word")
          assert.equal(t[3][cell], r[cell].detail, t[1] .. " " .. cell)
        end
      end
    end)
  end

  it("5d: moving a mount whose parent is shared is EINVAL (the table's note)", function()
    assert.equal("EINVAL", kernel("5d move from a shared parent"))
  end)

  it("5e mount: the same as bind with a private source, on every destination", function()
    local r = kernel("5e mount")
    local b = kernel("5b bind")
    for _, dk in ipairs(KINDS) do
      assert.same(b["private -> " .. dk], r["new -> " .. dk], dk)
    end
  end)

  it("5c rbind: the tree under the unbindable C is pruned", function()
    assert.same({ "/Z A", "/Z/B B", "/Z/B/D D", "/Z/B/E E" }, kernel("5c rbind"))
  end)

  for _, case in ipairs(UMOUNT_CASES) do
    it("5f umount of C1, " .. case, function()
      assert.equal(UMOUNT_KERNEL[case], kernel("5f umount, " .. case))
    end)
  end

  it("5g namespace copy: as the document says but for unbindable (kept before 6.17, "
    .. "private since)", function()
    local r = kernel("5g namespace copy")
    for k, row in ipairs(COPY_ROWS) do
      if row ~= "unbindable" or not COPY_DROPS_UNBINDABLE then
        assert.equal(COPY_DOC[row], r["unchanged"][k], row .. ": the document's word")
      end
    end
    for _, c in ipairs(COPIES) do
      assert.same(COPY_KERNEL[copy_key(c)], r[copy_key(c)], copy_key(c))
    end
  end)
end)

describe("documented facts on the model: #model", function()
  for _, f in ipairs(FACTS) do
    local name = f[1]
    it(name .. ": the model's answer and golden text are the kernel's", function()
      if MODEL_PENDING then
        pending(MODEL_PENDING)
        return
      end
      kernel(name)
      model_runs[name] = model_runs[name] or run(model, name)
      assert.same(kernel_runs[name].result, model_runs[name].result)
      assert.equal(kernel_runs[name].golden, model_runs[name].golden)
    end)
  end

  for _, sc in ipairs(EXAMPLE_SCENARIOS) do
    it(sc[1] .. ": the example's assertions (the kernel's answers) hold", function()
      if MODEL_PENDING then
        pending(MODEL_PENDING)
        return
      end
      model.scenario(sc[1], sc[2])
    end)
  end
end)
