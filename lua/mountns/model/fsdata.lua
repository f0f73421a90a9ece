-- model.fsdata: the mount data (mount(2)'s last argument) tmpfs and ramfs
-- accept, as the kernel reads it, and the superblock options text
-- mountinfo shows. A mount or remount with data the kernel refuses is
-- EINVAL on the model too: before this, `ns:mount("a", "/a", "tmpfs", nil,
-- "bogus=1")` succeeded where the kernel said EINVAL.
--
-- What the kernel does, measured on 6.18 (spec 41) and read in
-- fs/fs_context.c, mm/shmem.c, fs/ramfs/inode.c: the data is split at
-- commas (empty items skipped); `source` is refused (mount(2) gave one);
-- ro, rw, sync, async, dirsync, lazytime, nolazytime, mand, nomand are
-- superblock flags for any filesystem (a value after them is ignored);
-- the rest is the filesystem's. tmpfs knows size, nr_blocks, nr_inodes
-- (memparse: a number in C's bases with K M G T P E, size also N%),
-- mode (octal), uid and gid (mapped in the caller's user namespace),
-- huge, mpol, inode32, inode64, noswap (not in a user namespace), and
-- refuses anything else; ramfs knows mode and ignores anything else. A
-- remount of tmpfs changes size, nr_inodes, huge, mpol and inode32/64
-- (not mode, uid, gid), and refuses noswap and a limit where there was
-- none. Numbers beyond 2^53 are not exact here (Lua 5.1's doubles).
-- @module mountns.model

local errors = require "mountns.model.errors"

local M = {}

local fail = errors.fail

-- The machine's memory in pages (totalram_pages: MemTotal / 4 KiB) and its
-- NUMA nodes with memory: tmpfs's defaults and `size=N%` depend on them.
-- Read once when the module loads, as the kernel version is (model.rules).
local PAGE = 4096
local TOTALRAM, MEM_NODES = 1048576, { [0] = true }
do
  local f = io.open("/proc/meminfo")
  if f then
    local kb = tonumber((f:read("*l") or ""):match("^MemTotal:%s*(%d+)"))
    f:close()
    if kb then TOTALRAM = math.floor(kb / 4) end
  end
  f = io.open("/sys/devices/system/node/has_memory")
  if f then
    local list = f:read("*l")
    f:close()
    if list and list ~= "" then
      MEM_NODES = {}
      for a, b in list:gmatch("(%d+)%-?(%d*)") do
        for n = tonumber(a), tonumber(b ~= "" and b or a) do MEM_NODES[n] = true end
      end
    end
  end
end
-- The caller's real uid and gid (/proc/self/status), read once when the
-- module loads: an unprivileged caller's scenario lives in a user
-- namespace that maps its 0 to them, and a tmpfs made there shows them
-- (uid=65534,gid=65534: mountinfo shows IDs as the initial namespace sees
-- them).
local CALLER_UID, CALLER_GID = 0, 0
do
  local f = io.open("/proc/self/status")
  if f then
    local text = f:read("*a") or ""
    f:close()
    CALLER_UID = tonumber(text:match("\nUid:%s*(%d+)")) or 0
    CALLER_GID = tonumber(text:match("\nGid:%s*(%d+)")) or 0
  end
end

-- Whether the running kernel was built with CONFIG_TMPFS_INODE64 (Debian's
-- 6.1 and 6.12 are, measured; its 5.10 and this host's 6.18 are not): tmpfs
-- then takes inode64 by default and its options text always names inode64
-- or inode32 (shmem_show_options). A build option, not a release: read
-- once when the module loads from the tmpfs mounts mountinfo shows.

--- Whether a mountinfo text says its kernel was built with
-- CONFIG_TMPFS_INODE64: some tmpfs names inode64 or inode32, none neither
-- (a text with no tmpfs: not built so).
-- @tparam string text
-- @treturn boolean
function M.tmpfs_inode64_of(text)
  local named, plain = false, false
  for line in text:gmatch("[^\n]+") do
    local opts = line:match(" %- tmpfs %S+ (%S+)$")
    if opts then
      if ("," .. opts .. ","):find(",inode[36][24],") then named = true else plain = true end
    end
  end
  return named and not plain
end
local TMPFS_INODE64 = false
do
  local f = io.open("/proc/self/mountinfo")
  if f then
    TMPFS_INODE64 = M.tmpfs_inode64_of(f:read("*a") or "")
    f:close()
  end
end
--- What the running kernel's build says (M.tmpfs_inode64_of of this
-- process's mountinfo when the module loaded).
M.TMPFS_INODE64 = TMPFS_INODE64

--- Who mounts, for uid=, gid= and noswap: `init` (the initial user
-- namespace: every ID is its own), `uid`, `gid` (what the caller's 0 is
-- in the initial namespace: its own uid and gid there). A world's first
-- namespace is root's (M.ROOT), or with `locked_root` an unprivileged
-- caller's (M.caller()); a user namespace made in it maps its 0 to the
-- same IDs.
M.ROOT = { init = true, uid = 0, gid = 0 }
function M.caller(init)
  return { init = init or false, uid = CALLER_UID, gid = CALLER_GID }
end

local DEFAULT_BLOCKS = math.floor(TOTALRAM / 2)
local DEFAULT_INODES = math.floor(TOTALRAM / 2)

-- ---- numbers as the kernel reads them ---------------------------------------

local DIGIT = { ["0"] = 0, ["1"] = 1, ["2"] = 2, ["3"] = 3, ["4"] = 4, ["5"] = 5, ["6"] = 6,
                ["7"] = 7, ["8"] = 8, ["9"] = 9, a = 10, b = 11, c = 12, d = 13, e = 14, f = 15 }

-- _parse_integer_fixup_radix: base 16 after 0x (and a hex digit), 8
-- after 0, else 10 (base 0); the position after the prefix
local function radix(s, i, base)
  if base == 0 then
    if s:sub(i, i) == "0" then
      local x, d = s:sub(i + 1, i + 1):lower(), s:sub(i + 2, i + 2):lower()
      if x == "x" and DIGIT[d] then return 16, i + 2 end
      return 8, i
    end
    return 10, i
  end
  return base, i
end

-- The digits of s from i in base: value, the position after them (the
-- value is a Lua number: exact below 2^53, which is what matters here)
local function digits(s, i, base)
  local v = 0
  while true do
    local d = DIGIT[s:sub(i, i):lower()]
    if not d or d >= base then return v, i end
    v = v * base + d
    i = i + 1
  end
end

-- kstrtouint(s, base): an optional +, digits only (and one newline at
-- the end), up to 2^32 - 1; nil when the kernel refuses it
local function kstrtouint(s, base)
  if s:sub(-1) == "\n" then s = s:sub(1, -2) end
  local i = s:sub(1, 1) == "+" and 2 or 1
  local b, j = radix(s, i, base)
  local v, k = digits(s, j, b)
  if k == j or k <= #s or v > 4294967295 then return nil end
  return v
end

local SHIFT = { k = 10, m = 20, g = 30, t = 40, p = 50, e = 60 }

-- memparse: a number (base 0) and a suffix K M G T P E; the value and the
-- rest of s after them
local function memparse(s)
  local b, j = radix(s, 1, 0)
  local v, k = digits(s, j, b)
  local shift = SHIFT[s:sub(k, k):lower()]
  if shift then
    v = v * 2 ^ shift
    k = k + 1
  end
  return v, s:sub(k)
end

-- ---- the options -------------------------------------------------------------

-- the superblock flags of fs_context (vfs_parse_sb_flag): name -> field, value
local SB_FLAGS = { ro = { "ro", true }, rw = { "ro", false }, sync = { "sync", true },
                   async = { "sync", false }, dirsync = { "dirsync", true },
                   lazytime = { "lazytime", true }, nolazytime = { "lazytime", false },
                   mand = { "mand", true }, nomand = { "mand", false } }

local HUGE = { never = true, always = true, within_size = true, advise = true }
local MPOL_MODES = { default = "none", ["local"] = "none", prefer = "one", bind = "some",
                     interleave = "all" }

-- mpol_parse_str: MODE[=static|relative][:NODELIST] over the nodes with
-- memory; the text shmem_show_mpol gives (nil for the default policy)
local function parse_mpol(v)
  local mode, rest = v:match("^([%a%-]+)(.*)$")
  local kind = mode and MPOL_MODES[mode]
  if not kind then return nil end
  local flag, list = rest:match("^(=?%a*)(.*)$")
  if flag ~= "" and flag ~= "=static" and flag ~= "=relative" then return nil end
  local nodes = {}
  if list ~= "" then
    if list:sub(1, 1) ~= ":" then return nil end
    for item in (list:sub(2) .. ","):gmatch("([^,]*),") do
      local a, b = item:match("^(%d+)%-(%d+)$")
      a, b = tonumber(a or item:match("^%d+$")), tonumber(b or a or item:match("^%d+$"))
      if not a or b < a then return nil end
      for n = a, b do
        if not MEM_NODES[n] then return nil end
        nodes[#nodes + 1] = n
      end
    end
  end
  if kind == "none" then
    if #nodes > 0 then return nil end
    return true, mode == "local" and "local" or nil
  end
  if kind == "one" then
    -- one node number, no list or range; none: local (flags refused)
    if list == "" then
      if flag ~= "" then return nil end
      return true, "local"
    end
    if not list:match("^:%d+$") then return nil end
  end
  if kind == "some" and #nodes == 0 then return nil end
  if #nodes == 0 then
    for n in pairs(MEM_NODES) do nodes[#nodes + 1] = n end
  end
  table.sort(nodes)
  local uniq = {} -- (a node mask: each node once)
  for _, n in ipairs(nodes) do if uniq[#uniq] ~= n then uniq[#uniq + 1] = n end end
  nodes = uniq
  -- the node list as the kernel prints it (ranges: 0-3)
  local out, i = {}, 1
  while i <= #nodes do
    local j = i
    while nodes[j + 1] == nodes[j] + 1 do j = j + 1 end
    out[#out + 1] = j > i and (nodes[i] .. "-" .. nodes[j]) or tostring(nodes[i])
    i = j + 1
  end
  return true, mode .. flag .. ":" .. table.concat(out, ",")
end

-- An ID for uid= or gid=: a u32, valid (not -1) and mapped in the caller's
-- user namespace (mountns's user namespaces map 0 alone)
-- (mine: who's ID that 0 stands for, outside the initial namespace)
local function parse_id(v, who, mine)
  local n = kstrtouint(v, 0)
  if not n or n == 4294967295 or (n ~= 0 and not who.init) then return nil end
  if not who.init then return mine end
  return n
end

-- tmpfs's options (shmem_parse_one): key, value -> field, parsed value,
-- or nil when refused
local TMPFS = {
  size = function(v)
    if v == nil or v == "" then return nil end
    local size, rest = memparse(v)
    if rest:sub(1, 1) == "%" then
      size, rest = size * PAGE * TOTALRAM / 100, rest:sub(2)
    end
    if rest ~= "" then return nil end
    return "blocks", math.ceil(size / PAGE)
  end,
  nr_blocks = function(v)
    if v == nil or v == "" then return nil end
    local n, rest = memparse(v)
    if rest ~= "" then return nil end
    return "blocks", n
  end,
  nr_inodes = function(v)
    if v == nil or v == "" then return nil end
    local n, rest = memparse(v)
    if rest ~= "" then return nil end
    return "inodes", n
  end,
  mode = function(v)
    local n = v and kstrtouint(v, 8)
    if not n then return nil end
    return "mode", n % 4096
  end,
  uid = function(v, who)
    local n = v and parse_id(v, who, who.uid)
    if not n then return nil end
    return "uid", n
  end,
  gid = function(v, who)
    local n = v and parse_id(v, who, who.gid)
    if not n then return nil end
    return "gid", n
  end,
  huge = function(v)
    if not (v and HUGE[v]) then return nil end
    return "huge", v
  end,
  mpol = function(v)
    if not v then return nil end
    local ok, text = parse_mpol(v)
    if not ok then return nil end
    return "mpol", text or false
  end,
  inode32 = function(v)
    if v ~= nil then return nil end
    return "inode64", false
  end,
  inode64 = function(v)
    if v ~= nil then return nil end
    return "inode64", true
  end,
  noswap = function(v, who, rules)
    -- "Turning off swap in unprivileged tmpfs mounts unsupported"; 6.4+
    if v ~= nil or not who.init or not rules.tmpfs_noswap then return nil end
    return "noswap", true
  end,
}

local RAMFS = {
  mode = TMPFS.mode,
}

local FS = { tmpfs = { known = TMPFS, others = "refused" },
             ramfs = { known = RAMFS, others = "ignored" } }

-- The items of data: split at commas, but for tmpfs an item that starts
-- with a digit belongs to the one before (shmem_parse_options: mpol's
-- node lists hold commas)
local function items(fstype, data)
  local out = {}
  for item in ((data or "") .. ","):gmatch("([^,]*),") do
    if fstype == "tmpfs" and #out > 0 and item:find("^%d") then
      out[#out] = out[#out] .. "," .. item
    else
      out[#out + 1] = item
    end
  end
  return out
end

--- The settings mount data gives: a list of {field, value} in the data's
-- order (a later one wins), or raise EINVAL for op (p1, p2) as the kernel
-- does.
-- @tparam string fstype "tmpfs" or "ramfs"
-- @tparam ?string data
-- @tparam table who who mounts (`M.ROOT`, `M.caller`): outside the
-- initial user namespace only ID 0 is mapped for uid= and gid=
-- @tparam table rules the world's (model.rules: tmpfs_noswap)
-- @tparam string op the call a refusal names ("mount", "fsconfig")
-- @tparam[opt] string p1 its first path
-- @tparam[opt] string p2 its second
local function parse(fstype, data, who, rules, op, p1, p2)
  local fs = FS[fstype]
  local out = {}
  for _, item in ipairs(items(fstype, data)) do
    local key, value = item:match("^([^=]*)=(.*)$")
    key = key or item
    -- (an empty item is passed over; so is an empty name, "=5", where the
    -- rules say so, before that the filesystem's to judge:
    -- rules.empty_key_skipped)
    if item ~= "" and (key ~= "" or not rules.empty_key_skipped) then
      local sbf = SB_FLAGS[key]
      if sbf then
        -- (mand and nomand set nothing where mountinfo no longer shows it)
        if sbf[1] ~= "mand" or rules.sb_mand then out[#out + 1] = { sbf[1], sbf[2] } end
      elseif key == "source" and fstype == "ramfs" and rules.ramfs_swallows then
        local _ = nil -- luacheck: ignore (ramfs took every name it did not know)
      elseif key == "source" then
        fail("EINVAL", op, p1, p2) -- mount(2) gave the source already
      else
        local reader = fs.known[key]
        if reader then
          local field, v = reader(value, who, rules)
          if field == nil then fail("EINVAL", op, p1, p2) end
          out[#out + 1] = { field, v }
        elseif fs.others == "refused" then
          fail("EINVAL", op, p1, p2)
        end
      end
    end
  end
  return out
end

-- The superblock flags mount(2)'s flags set (names: the flag names given,
-- checked): ro, sync, dirsync, lazytime (MS_RDONLY, MS_SYNCHRONOUS,
-- MS_DIRSYNC, MS_LAZYTIME); their negations set no bit.
local SB_BY_FLAG = { ro = "ro", sync = "sync", dirsync = "dirsync", lazytime = "lazytime" }
local function sb_flags(names, rules)
  local f = {}
  for _, n in ipairs(names) do
    local k = SB_BY_FLAG[n]
    if k then f[k] = true end
    -- MS_MANDLOCK: a superblock flag mountinfo shows until 6.12 (rules.sb_mand)
    if n == "mand" and rules and rules.sb_mand then f.mand = true end
  end
  return f
end
M.sb_flags = sb_flags

-- a new superblock's options (f: sb_flags's; who: its owner is who's 0)
local function defaults(fstype, f, who)
  local o
  if fstype == "ramfs" then
    o = { mode = 493 } -- 0755
  else
    o = { blocks = DEFAULT_BLOCKS, inodes = DEFAULT_INODES, mode = 1023, -- 01777
          uid = who.uid, gid = who.gid, huge = "never", mpol = false,
          inode64 = TMPFS_INODE64, noswap = false }
  end
  o.ro, o.sync, o.dirsync, o.lazytime = f.ro or false, f.sync or false, f.dirsync or false,
    f.lazytime or false
  o.mand = f.mand or false
  return o
end

-- show_sb_opts's order; mand shown only where the rules keep it (sb_mand)
local SB_TEXT = { "sync", "dirsync", "mand", "lazytime" }

local function num(n)
  return string.format("%.0f", n)
end

--- The superblock options text of mountinfo (show_sb_opts and the
-- filesystem's show_options).
-- @tparam string fstype
-- @tparam table o the options (sb.opts)
local function text(fstype, o)
  local out = { o.ro and "ro" or "rw" }
  for _, k in ipairs(SB_TEXT) do if o[k] then out[#out + 1] = k end end
  if fstype == "ramfs" then
    if o.mode ~= 493 then out[#out + 1] = string.format("mode=%o", o.mode) end
  else
    if o.blocks ~= DEFAULT_BLOCKS then out[#out + 1] = "size=" .. num(o.blocks * 4) .. "k" end
    if o.inodes ~= DEFAULT_INODES then out[#out + 1] = "nr_inodes=" .. num(o.inodes) end
    if o.mode ~= 1023 then out[#out + 1] = string.format("mode=%03o", o.mode) end
    if o.uid ~= 0 then out[#out + 1] = "uid=" .. num(o.uid) end
    if o.gid ~= 0 then out[#out + 1] = "gid=" .. num(o.gid) end
    if TMPFS_INODE64 or o.inode64 then out[#out + 1] = o.inode64 and "inode64" or "inode32" end
    if o.huge ~= "never" then out[#out + 1] = "huge=" .. o.huge end
    if o.mpol then out[#out + 1] = "mpol=" .. o.mpol end
    if o.noswap then out[#out + 1] = "noswap" end
  end
  return table.concat(out, ",")
end

-- ---- the limits: nr_inodes and size -------------------------------------------

-- A superblock's use: inodes (its root, each directory and file) and
-- pages (each file's text, rounded up to pages; directories take none),
-- kept on the superblock (sb.inodes_used, sb.pages_used) by the model's
-- file operations. tmpfs refuses what goes past nr_inodes or size (0: no
-- limit) with ENOSPC; ramfs has no limits.

local function pages(n)
  return math.ceil(n / PAGE)
end
M.pages = pages

--- Whether sb has room for one more inode.
function M.inode_room(sb)
  local limit = sb.opts.inodes
  return not limit or limit == 0 or sb.inodes_used < limit
end

--- The pages sb has free (math.huge without a limit).
function M.pages_free(sb)
  local limit = sb.opts.blocks
  if not limit or limit == 0 then return math.huge end
  return limit - sb.pages_used
end

-- a remount's new limits against what is in use ("Too small a size for
-- current use", "Too few inodes for current use")
local function check_use(sb, o, op, p1, p2)
  if o.blocks and o.blocks ~= 0 and sb.pages_used > o.blocks then fail("EINVAL", op, p1, p2) end
  if o.inodes and o.inodes ~= 0 and sb.inodes_used > o.inodes then
    fail("EINVAL", op, p1, p2)
  end
end

-- the options and text of a superblock mounted without data, by fstype
-- and ro: one table for all of them (a superblock's opts is replaced,
-- never changed in place)
local plain = {}

--- Who mounts in ns: root in the initial user namespace, else the
-- world's owner of the user namespaces (space.lua's World:namespace sets
-- w.init_user and w.userns_who): what uid, gid and noswap may be.
-- @param ns a model namespace
-- @treturn table
function M.who(ns)
  local w = ns.world
  if ns.user == w.init_user then return M.ROOT end
  return w.userns_who
end

--- The options of a new superblock of fstype mounted with the flags
-- `names` and data (raises EINVAL for op as the kernel does).
-- @treturn table the options (sb.opts)
-- @treturn string their text (sb.super_options)
function M.new_options(fstype, data, names, who, rules, op, p1, p2)
  local f = sb_flags(names, rules)
  if data == nil or data == "" then
    local key = fstype .. " " .. who.uid .. " " .. who.gid
    for _, k in ipairs { "ro", "sync", "dirsync", "lazytime", "mand" } do
      if f[k] then key = key .. "," .. k end
    end
    local p = plain[key]
    if not p then
      local o = defaults(fstype, f, who)
      p = { o, text(fstype, o) }
      plain[key] = p
    end
    return p[1], p[2]
  end
  local o = defaults(fstype, f, who)
  for _, s in ipairs(parse(fstype, data, who, rules, op, p1, p2)) do o[s[1]] = s[2] end
  return o, text(fstype, o)
end

-- what a remount of tmpfs changes (shmem_reconfigure: not mode, uid, gid)
local REMOUNT_KEEPS = { mode = true, uid = true, gid = true }

--- The options of sb after a remount with the flags `names` and data
-- (raises EINVAL for op as the kernel does, before changing anything).
-- @treturn table the new options
-- @treturn string their text
function M.remount_options(sb, data, names, who, rules, op, p1, p2)
  local fstype, old = sb.fstype, sb.opts
  local settings = parse(fstype, data, who, rules, op, p1, p2)
  local o = {}
  for k, v in pairs(old) do o[k] = v end
  -- the flags set ro, sync, mand and lazytime anew (MS_RMT_MASK), not dirsync;
  -- the data's flags come after them
  local f = sb_flags(names, rules)
  o.ro, o.sync, o.lazytime, o.mand = f.ro or false, f.sync or false, f.lazytime or false,
    f.mand or false
  for _, s in ipairs(settings) do
    local field = s[1]
    if fstype == "ramfs" and field == "mode" then field = nil end -- ramfs keeps its mode
    if field and not (fstype == "tmpfs" and REMOUNT_KEEPS[field]) then o[field] = s[2] end
  end
  if fstype == "tmpfs" then
    -- "Cannot disable swap on remount"; "Cannot retroactively limit
    -- size/inodes" (0 is no limit)
    if o.noswap and not old.noswap then fail("EINVAL", op, p1, p2) end
    if old.blocks == 0 and o.blocks ~= 0 then fail("EINVAL", op, p1, p2) end
    if old.inodes == 0 and o.inodes ~= 0 then fail("EINVAL", op, p1, p2) end
  end
  check_use(sb, o, op, p1, p2)
  return o, text(fstype, o)
end

M.text = text

return M
