--- mountns.check.generate: the sequences `mountns check` runs: its own
-- random number generator (L'Ecuyer's combined multiplicative generator,
-- exact in doubles as in integers, so a seed gives the same sequences on
-- every Lua version; sequence `i` of a seed depends only on the seed and
-- `i`), the generator of namespace method calls, and a step as Lua text.
-- @module mountns.check.generate

local M = {}

-- ---- the random number generator ------------------------------------------

-- L'Ecuyer (1988): two multiplicative congruential generators combined.
-- Every product is below 2^47, so doubles (Lua 5.1-5.3, LuaJIT) and 5.4's
-- integers compute the same numbers.
local M1, M2 = 2147483563, 2147483399
local A1, A2 = 40014, 40692

local Rng = {}
Rng.__index = Rng

--- A random number generator for sequence `index` of `seed`.
-- @tparam int seed 0 <= seed < 2^31
-- @tparam[opt=0] int index
-- @return an object with `:int(n)` (1..n) and `:pick(list)`
function M.rng(seed, index)
  local r = setmetatable({ s1 = math.floor(seed) % (M1 - 1) + 1,
                           s2 = math.floor(index or 0) % (M2 - 1) + 1 }, Rng)
  -- nearby seeds start nearby: a few rounds spread them over the range
  for _ = 1, 8 do r:next() end
  return r
end

--- The next number, 1 .. M1 - 1.
function Rng:next()
  self.s1 = A1 * self.s1 % M1
  self.s2 = A2 * self.s2 % M2
  return (self.s1 - self.s2 - 1) % (M1 - 1) + 1
end

--- An integer 1 .. n.
function Rng:int(n)
  return math.floor((self:next() - 1) * n / (M1 - 1)) + 1
end

--- An element of a list.
function Rng:pick(list)
  return list[self:int(#list)]
end

-- ---- the generator ----------------------------------------------------------

--- The paths the generator uses (with `/` for some operations).
M.PATHS = { "/a", "/b", "/c", "/a/x", "/b/x", "/a/x/y" }

local PROPAGATIONS = { "private", "shared", "slave", "unchanged" }
local MAKES = { "make_shared", "make_private", "make_slave", "make_unbindable" }

-- The operations and their weights.
local OPS = {
  { "mkdir", 3 }, { "mount", 4 }, { "bind", 5 }, { "move", 2 }, { "umount", 3 },
  { "remount", 1 }, { "make", 6 }, { "unshare", 3 }, { "close", 1 },
  -- what a script sees: files through the mounts, and root views
  { "write", 2 }, { "read", 1 }, { "exists", 1 }, { "ls", 1 }, { "mounts", 1 },
  -- the new mount API, by paths, and detached trees attached (COMPOUND)
  { "mount_setattr", 2 }, { "move_mount", 2 }, { "attach_clone", 2 }, { "attach_fsmount", 1 },
  -- a new root for the namespace (made private first: COMPOUND)
  { "pivot_private", 1 },
}
-- mount_setattr's attribute sets the generator draws (each alone, maybe
-- with recursive), and move_mount's three kinds
local SETATTRS = {
  { ro = true }, { ro = false }, { nosuid = true }, { noexec = false }, { noatime = true },
  { propagation = "shared" }, { propagation = "private" }, { propagation = "slave" },
  { propagation = "unbindable" },
}
local MOVE_KINDS = { "move", "move", "set_group", "beneath" }
-- mount data (mount's and remount's last argument, fsmount's config):
-- values tmpfs takes, values it refuses (EINVAL), and for ramfs, which
-- knows mode and ignores the rest
local TMPFS_DATA = { "size=1m", "mode=0700", "nr_inodes=64", "size=50%", "huge=never",
                     "mode=755,size=2m", "bogus=1", "size=1x", "mode=8", "nr_inodes=" }
local RAMFS_DATA = { "mode=0711", "bogus=1", "mode=x" }
local REMOUNT_DATA = { "size=2m", "nr_inodes=32", "mode=0700", "bogus=1", "size=" }

--- The steps that are more than one call, as functions of a namespace
-- (a model one or a kernel one alike) and the arguments a step holds: a
-- mount fd lives only between open_tree or fsmount and move_mount, so it
-- cannot be a step's argument. Each closes its fd whatever happens (an
-- fd left to the collector would hold the mount: umount's EBUSY would
-- depend on when it runs); a failed move_mount's detached tree goes with
-- it. `mountns.check` exports them, so a shrunk script calls them by name.
M.COMPOUND = {}

local function attached(ns, fd, to)
  local ok, err = pcall(ns.move_mount, ns, fd, to)
  fd:close()
  if not ok then error(err, 0) end
end

--- open_tree(from, opts) (a detached copy with `clone`, the mount itself
-- without), then move_mount of it onto to.
-- @param ns a namespace
-- @tparam string from
-- @tparam string to
-- @tparam[opt] table opts open_tree's
function M.COMPOUND.attach_clone(ns, from, to, opts)
  attached(ns, ns:open_tree(from, opts), to)
end

--- make_private(new_root), then pivot_root(new_root, opts). Private
-- first because a new root that receives propagation can get a mount
-- stacked on its root dentry (a mount in a peer or master on the
-- directory the new root is a bind of), and what a namespace with a mount
-- on its `/` lists depends on who reads it (see "Never a mount on a
-- namespace's `/`" below).
-- @param ns a namespace
-- @tparam string new_root
-- @tparam[opt] table opts pivot_root's
function M.COMPOUND.pivot_private(ns, new_root, opts)
  ns:make_private(new_root)
  ns:pivot_root(new_root, opts)
end

--- fsmount(fstype, config) (a new detached superblock), then move_mount of
-- it onto to.
-- @param ns a namespace
-- @tparam string fstype
-- @tparam table config
-- @tparam string to
function M.COMPOUND.attach_fsmount(ns, fstype, config, to)
  attached(ns, ns:fsmount(fstype, config), to)
end

--- The operations whose answer (not only success or the errno) is
-- compared: the file a read gives, a directory's names, a root view.
M.ANSWERS = { read = true, exists = true, ls = true, mounts = true }
local TOTAL = 0
for _, o in ipairs(OPS) do TOTAL = TOTAL + o[2] end

local function pick_op(r)
  local x = r:int(TOTAL)
  for _, o in ipairs(OPS) do
    x = x - o[2]
    if x <= 0 then return o[1] end
  end
end

-- Never a mount on a namespace's `/`: no call targets `/`, and `/` is no
-- bind source (a bind of `/` is a peer of the root, so a mount on it would
-- propagate onto the root). A mount stacked on `/` is seen by a process
-- that enters the namespace after it (setns, an agent) but not by one that
-- was there before (its root stays the mount below), so the kernel's
-- answer would depend on which process looks, not on the rules.

-- Path helpers of the generator's guess below.
local function under(p, dir) -- p strictly under dir
  if dir == "/" then return p ~= "/" end
  return p:sub(1, #dir + 1) == dir .. "/"
end

local function set_copy(t)
  local c = {}
  for k in pairs(t) do c[k] = true end
  return c
end

--- The method calls of sequence `index` of `seed`: a list of steps
-- `{id = i, ns = 0 (the first namespace) or the id of the unshare step
-- that made it, op = method name, args = {n = N, ...}}`.
-- The generator keeps a rough guess of the directories each namespace
-- has (mkdir adds them, a mount on a path hides those under it, a bind or
-- a move shows the source's there; propagation is not guessed) and picks
-- mostly paths that exist, so that most steps do something.
-- @tparam int seed
-- @tparam int index
-- @tparam[opt=8] int k the number of steps
-- @tparam[opt] table opts `user = false`: no user-namespace copies
-- @treturn table the steps
function M.generate(seed, index, k, opts)
  local r = M.rng(seed, index)
  local user = not (opts and opts.user == false)
  -- the guess: namespace -> {dirs = set of paths, mounts = set of paths}
  local guess = { [0] = { dirs = {}, mounts = {} } }
  local function listed(set, want)
    local out = {}
    for _, p in ipairs(M.PATHS) do
      if (set[p] or false) == want then out[#out + 1] = p end
    end
    return out
  end
  -- a directory, mostly one that exists (never `/`: see above)
  local function dir(g)
    local have = listed(g.dirs, true)
    if #have > 0 and r:int(8) > 1 then return r:pick(have) end
    return r:pick(M.PATHS)
  end
  -- a mount point: mostly one that the sequence mounted, or `/` (one time
  -- in `root`; never for umount: a namespace whose root is unmounted
  -- shows a reader the mount under it, which depends on how it entered)
  local function mountpoint(g, root)
    local have = listed(g.mounts, true)
    if root and (r:int(root) == 1 or #have == 0) then return "/" end
    if #have == 0 or r:int(12) == 1 then return r:pick(M.PATHS) end
    return r:pick(have)
  end
  local function hide(g, p) -- a mount on p hides what was under it
    for _, set in ipairs { g.dirs, g.mounts } do
      for q in pairs(set_copy(set)) do
        if under(q, p) then set[q] = nil end
      end
    end
  end
  local function show(g, a, b) -- a bind or a move of a onto b
    if not g.dirs[b] then return end
    local from = set_copy(g.dirs)
    hide(g, b)
    g.mounts[b] = true
    for q in pairs(from) do
      if under(q, a) then
        g.dirs[(b == "/" and "" or b) .. q:sub(a == "/" and 1 or #a + 1)] = true
      end
    end
  end
  local open = { 0 }
  local steps = {}
  local sources = 0
  local files = {} -- the files written, to read mostly those
  local function file(g)
    if #files > 0 and r:int(4) > 1 then return r:pick(files) end
    return dir(g) .. "/f"
  end
  for i = 1, k or 8 do
    local ns = r:pick(open)
    local g = guess[ns]
    local op, args
    if #listed(g.dirs, true) < 2 and r:int(3) == 1 then
      op = "mkdir"
    else
      repeat
        op = pick_op(r)
      until not ((op == "unshare" and #open >= 4) or (op == "close" and #open < 2))
    end
    if op == "mkdir" then
      local missing = listed(g.dirs, false)
      local p = (#missing > 0 and r:int(4) > 1) and r:pick(missing) or r:pick(M.PATHS)
      local q = p
      while q ~= "" do
        g.dirs[q] = true
        q = q:match("^(.*)/[^/]*$")
      end
      args = { p, n = 1 }
    elseif op == "mount" then
      sources = sources + 1
      local p = dir(g)
      if g.dirs[p] then hide(g, p); g.mounts[p] = true end
      local how = r:int(8)
      args = how <= 5 and { "t" .. sources, p, "tmpfs", n = 3 }
        or how <= 7 and { "t" .. sources, p, "tmpfs", nil, r:pick(TMPFS_DATA), n = 5 }
        or { "t" .. sources, p, "ramfs", nil, r:pick(RAMFS_DATA), n = 5 }
    elseif op == "attach_clone" then
      local a, b = mountpoint(g), dir(g)
      show(g, a, b)
      local how = r:int(4)
      args = { a, b, how == 1 and {} or { clone = true, recursive = how == 2 or nil }, n = 3 }
    elseif op == "attach_fsmount" then
      sources = sources + 1
      local p = dir(g)
      if g.dirs[p] then hide(g, p); g.mounts[p] = true end
      local fstype = r:int(4) == 1 and "ramfs" or "tmpfs"
      local config = { source = "f" .. sources }
      if r:int(2) == 1 then
        local item = r:pick(fstype == "tmpfs" and TMPFS_DATA or RAMFS_DATA)
        local key, v = item:match("^([^=,]*)=?([^,]*)")
        config[key] = v
      end
      args = { fstype, config, p, n = 3 }
    elseif op == "bind" then
      local a, b = dir(g), dir(g)
      show(g, a, b)
      args = r:int(3) == 1 and { a, b, { recursive = true }, n = 3 } or { a, b, n = 2 }
    elseif op == "move" then
      local a, b = r:int(10) == 1 and "/" or mountpoint(g), dir(g)
      if g.dirs[b] then
        show(g, a, b)
        hide(g, a)
        g.mounts[a] = nil
      end
      args = { a, b, n = 2 }
    elseif op == "umount" then
      local p = mountpoint(g)
      g.mounts[p] = nil
      local how = r:int(6)
      args = how <= 2 and { p, "detach", n = 2 } or how == 3 and { p, "force", n = 2 }
        or how == 4 and { p, "expire", n = 2 } or { p, n = 1 }
    elseif op == "mount_setattr" then
      local attrs = {}
      for key, v in pairs(r:pick(SETATTRS)) do attrs[key] = v end
      if r:int(3) == 1 then attrs.recursive = true end
      args = { mountpoint(g, 6), attrs, n = 2 }
    elseif op == "move_mount" then
      -- by paths only: a mount fd cannot be a step's argument (never `/`)
      local kind = r:pick(MOVE_KINDS)
      local a, b = mountpoint(g), kind == "move" and dir(g) or mountpoint(g)
      if kind == "move" then
        if g.dirs[b] then show(g, a, b); hide(g, a); g.mounts[a] = nil end
        args = { a, b, n = 2 }
      else
        args = { a, b, { [kind] = true }, n = 3 }
      end
    elseif op == "pivot_private" then
      local p, how = mountpoint(g), r:int(4)
      args = how == 1 and { p, { put_old = "/x" }, n = 2 }
        or how == 2 and { p, { old_root = r:pick { "rslave", "rprivate" } }, n = 2 }
        or { p, n = 1 }
      -- the guess: what was under p is the namespace's now
      local dirs, mounts = {}, {}
      for q in pairs(g.dirs) do if under(q, p) then dirs[q:sub(#p + 1)] = true end end
      for q in pairs(g.mounts) do if under(q, p) then mounts[q:sub(#p + 1)] = true end end
      g.dirs, g.mounts = dirs, mounts
    elseif op == "remount" then
      local how, kind = r:pick { "ro", "rw" }, r:int(4)
      args = kind <= 2 and { mountpoint(g, 6), how, nil, { bind = true }, n = 4 }
        or kind == 3 and { mountpoint(g, 6), how, r:pick(REMOUNT_DATA), n = 3 }
        or { mountpoint(g, 6), how, n = 2 }
    elseif op == "make" then
      op = r:pick(MAKES)
      args = r:int(3) == 1 and { mountpoint(g, 3), { recursive = true }, n = 2 }
        or { mountpoint(g, 3), n = 1 }
    elseif op == "unshare" then
      local o = { propagation = r:pick(PROPAGATIONS) }
      if user and r:int(4) == 1 then o.user = true end
      args = { o, n = 1 }
      open[#open + 1] = i
      guess[i] = { dirs = set_copy(g.dirs), mounts = set_copy(g.mounts) }
    elseif op == "close" then
      for j, v in ipairs(open) do
        if v == ns then table.remove(open, j); break end
      end
      args = { n = 0 }
    elseif op == "write" then
      local p = file(g)
      files[#files + 1] = p
      args = { p, "w" .. i, n = 2 }
    elseif op == "read" or op == "exists" then
      args = { file(g), n = 1 }
    elseif op == "ls" then
      args = { r:int(4) == 1 and "/" or dir(g), n = 1 }
    elseif op == "mounts" then
      -- a root view: the table a process chrooted at a mount point sees
      args = { { root = mountpoint(g) }, n = 1 }
    end
    steps[i] = { id = i, ns = ns, op = op, args = args }
  end
  return steps
end

-- ---- steps as text ----------------------------------------------------------

-- A value as Lua source.
local function lua_value(v)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) == "table" then
    local keys = {}
    for key in pairs(v) do keys[#keys + 1] = key end
    table.sort(keys)
    local parts = {}
    for j, key in ipairs(keys) do
      local k = type(key) == "string" and key:match("^[%a_][%w_]*$") and key
        or "[" .. lua_value(key) .. "]"
      parts[j] = k .. " = " .. lua_value(v[key])
    end
    return "{ " .. table.concat(parts, ", ") .. " }"
  end
  return tostring(v)
end

--- The names of a sequence's namespaces: `{[0] = "ns1", [id] = "nsK"}`, K
-- in the order the unshare steps come.
-- @tparam table steps
-- @treturn table
function M.names(steps)
  local names, k = { [0] = "ns1" }, 1
  for _, st in ipairs(steps) do
    if st.op == "unshare" then
      k = k + 1
      names[st.id] = "ns" .. k
    end
  end
  return names
end

--- A step as a Lua call: `ns2:bind("/a", "/b", { recursive = true })`.
-- @tparam table step
-- @tparam[opt] table names from `names` (default: "ns?")
-- @treturn string
function M.call_text(step, names)
  local a = {}
  for j = 1, step.args.n do a[j] = lua_value(step.args[j]) end
  local who = names and names[step.ns] or "ns?"
  if M.COMPOUND[step.op] then
    table.insert(a, 1, who)
    return "check." .. step.op .. "(" .. table.concat(a, ", ") .. ")"
  end
  if step.op == "unshare" and step.args.n == 1 then
    return who .. ":unshare " .. a[1]
  end
  return who .. ":" .. step.op .. "(" .. table.concat(a, ", ") .. ")"
end

M.lua_value = lua_value

return M
