--- shell: a transcript of mount commands, run as written.
-- Users meet propagation as shell sessions (the seed article,
-- mount_namespaces(7), sharedsubtree.rst, bug reports), so a scenario can
-- paste one: `mountns.shell(ns, text)` reads it line by line and does what
-- each command asks through the public `ns:` methods: no shell, no mount(8),
-- no fork per command. A command that fails prints what util-linux 2.38
-- prints (`mount: /Z: mount point does not exist.`, exit status 32) and
-- the transcript goes on, as it would in a terminal; a line this module
-- cannot read (an unknown command, an unknown option) raises naming the
-- line: a transcript is never half understood.
--
-- The messages are util-linux's (libmount's mount and umount "excode"
-- texts, coreutils' for mkdir/touch/ls/cat); the errno is the kernel's.
-- @module mountns.shell

local core = require "mountns.core"
local format = require "mountns.format"
local argcheck = require "mountns.args"
local model = require "mountns.model"

local M = {}

local unpack = table.unpack or unpack -- luacheck: ignore

-- ---- reading a line ------------------------------------------------------

-- A line that cannot be read: raised as a table so shell() re-raises it at
-- its caller's line with the transcript's line number.
local function bad(msg)
  error({ shell = msg }, 0)
end

local PIPE = {} -- the `|` token

-- The words of a command line, shell-quoted ('..', "..", \x), with `$?`
-- expanded to `status`; `|` gives PIPE; an unquoted `#` at the start of a
-- word starts a comment. Redirections, `;`, `&&`, `$VAR` and backquotes raise:
-- a transcript using them needs a real shell.
local function split(s, status)
  local words, cur, i, n = {}, nil, 1, #s
  local function flush()
    if cur then words[#words + 1] = cur; cur = nil end
  end
  local function dollar(j)
    if s:sub(j + 1, j + 1) ~= "?" then
      bad("'$' expansion other than $? is not supported: " .. s)
    end
    cur = (cur or "") .. tostring(status)
    return j + 2
  end
  while i <= n do
    local c = s:sub(i, i)
    if c == "'" then
      local j = s:find("'", i + 1, true)
      if not j then bad("unterminated quote: " .. s) end
      cur = (cur or "") .. s:sub(i + 1, j - 1)
      i = j + 1
    elseif c == '"' then
      cur = cur or ""
      i = i + 1
      while true do
        local d = s:sub(i, i)
        if d == "" then bad("unterminated quote: " .. s) end
        if d == '"' then i = i + 1; break end
        if d == "\\" and s:sub(i + 1, i + 1):match('["\\$`]') then
          cur = cur .. s:sub(i + 1, i + 1); i = i + 2
        elseif d == "$" then i = dollar(i)
        elseif d == "`" then bad("command substitution is not supported: " .. s)
        else cur = cur .. d; i = i + 1 end
      end
    elseif c == "\\" then
      cur = (cur or "") .. s:sub(i + 1, i + 1)
      i = i + 2
    elseif c:match("%s") then
      flush(); i = i + 1
    elseif c == "#" and not cur then
      break
    elseif c == "|" and s:sub(i + 1, i + 1) ~= "|" then
      flush(); words[#words + 1] = PIPE; i = i + 1
    elseif c == "$" then
      i = dollar(i)
    elseif c:match("[;&<>`|(){}]") then
      bad("'" .. c .. "' is not supported (one command per line, no redirection): " .. s)
    else
      cur = (cur or "") .. c; i = i + 1
    end
  end
  flush()
  return words
end

-- ---- the session ---------------------------------------------------------

-- The terminal's output and each command's status. Tables printed by cat or
-- findmnt are kept as tables until the end, so `normalize` can renumber
-- every table of the session at once (one numbering for the whole session).
local function new_session(first, opts)
  return { out = {}, steps = {}, terms = {}, first = first, opts = opts }
end

local function say(sh, text)
  local o = sh.out
  o[#o + 1] = text
  sh.printed[#sh.printed + 1] = text
end

local function say_table(sh, t, style)
  local item = { t = t, style = style }
  sh.out[#sh.out + 1] = item
  sh.printed[#sh.printed + 1] = item
end

-- Run fn inside ns (ns:run); its error as nil, message.
local function inside(ns, fn, ...)
  local res = { n = 0 }
  local function keep(...) res = { n = select("#", ...), ... } end
  keep(pcall(ns.run, ns, fn, ...))
  if not res[1] then return nil, tostring(res[2]) end
  return unpack(res, 2, res.n)
end

local function exists(ns, path)
  -- a model namespace has no files of its own for io.open: ask it
  if model.is_namespace(ns) then return ns:exists(path) end
  return inside(ns, function()
    local f = io.open(path, "r")
    if f then f:close(); return true end
    return false
  end)
end

local function is_dir(ns, path)
  if model.is_namespace(ns) then return (pcall(ns.ls, ns, path)) end
  return inside(ns, function()
    local f = io.open(path == "/" and "/." or path .. "/.", "r")
    if f then f:close(); return true end
    return false
  end)
end

-- The errno name and strerror text of a mountns message
-- ("bind /X /Z: No such file or directory (ENOENT)", maybe with a position).
local function errno_of(msg)
  msg = tostring(msg)
  local text, name = msg:match(": ([^:]*) %((E[%u%d]+)%)%s*$")
  return name, text or msg
end

-- Call ns:method(...): true, or false and the error's errno name and text.
local function call(ns, method, ...)
  local ok, err = pcall(ns[method], ns, ...)
  if ok then return true end
  local name, text = errno_of(err)
  if not name then error(err, 0) end -- a misuse inside mountns: a bug here
  return false, name, text
end

-- ---- mount ---------------------------------------------------------------

local PROPAGATION = { shared = "make_shared", private = "make_private",
                      slave = "make_slave", unbindable = "make_unbindable" }

-- Options mount(8) keeps to itself (fstab and helper options): no effect on
-- a mount made by hand, so the kernel's result is the same without them.
local USERSPACE = { auto = true, noauto = true, nofail = true, nouser = true,
                    _netdev = true, defaults = true }

local function is_vfs_flag(name)
  return (pcall(core._parse_flags, "mount", name))
end

local DMESG = "\n       dmesg(1) may have more information after failed mount system call."

-- mount(8)'s message for a failed mount(2) (util-linux 2.38,
-- mnt_context_get_mount_excode), without "mount: TARGET: ".
local function mount_message(ns, a, step, ename, text)
  local src, tgt = a.source, a.target
  if ename == "ENOENT" then
    if not exists(ns, tgt) then return "mount point does not exist" end
    if (a.op == "bind" or a.op == "rbind" or a.op == "move") and not exists(ns, src) then
      return "special device " .. src .. " does not exist"
    end
  elseif ename == "ENOTDIR" then
    if not is_dir(ns, tgt) then return "mount point is not a directory" end
  elseif ename == "EINVAL" then
    if step == "remount" then return "mount point not mounted or bad option" end
    if step == "propagation" then return "not mount point or bad option" end
    if a.op == "move" then
      local t = ns:mounts()
      local m = t:find(src)
      local parent = m and t:by_id(m.parent_id)
      if parent and parent.shared then
        return "bad option; moving a mount residing under a shared mount is unsupported"
      end
    end
    return "wrong fs type, bad option, bad superblock on " .. (src or "none")
      .. ", missing codepage or helper program, or other error"
  elseif ename == "EBUSY" then
    if step == "remount" then return "mount point is busy" end
    return (src or "none") .. " already mounted or mount point busy"
  elseif ename == "ENODEV" and a.fstype then
    return "unknown filesystem type '" .. a.fstype .. "'"
  elseif ename == "EPERM" then
    return "permission denied"
  elseif ename == "EMFILE" then
    return "mount table full"
  end
  return "mount(2) system call failed: " .. text
end

local function mount_failed(sh, ns, a, step, ename, text)
  say(sh, "mount: " .. a.target .. ": " .. mount_message(ns, a, step, ename, text)
    .. "." .. DMESG .. "\n")
  return 32
end

-- `mount` alone: "SOURCE on TARGET type FSTYPE (OPTIONS)" per mount.
local function list_mounts(sh, ns)
  local lines = {}
  for _, m in ipairs(ns:mounts()) do
    local opts = m.options
    for o in (m.super_options or ""):gmatch("[^,]+") do
      if o ~= "rw" and o ~= "ro" then opts = opts .. "," .. o end
    end
    lines[#lines + 1] = string.format("%s on %s type %s (%s)\n", core.escape(m.source or "none"),
      core.escape(m.target), core.escape(m.fstype), opts)
  end
  say(sh, table.concat(lines))
  return 0
end

local function parse_mount(args)
  local a = { props = {}, flags = {}, data = {}, positional = {}, dropped = {} }
  local function option_list(s)
    for o in s:gmatch("[^,]+") do
      local rec, word = o:match("^(r?)(%a+)$")
      local userspace = USERSPACE[o] or o:match("^x%-") or o:match("^comment=")
      if o == "bind" or o == "rbind" then
        a.op = o
      elseif o == "remount" then
        a.remount = true
      elseif word and PROPAGATION[word] then
        a.props[#a.props + 1] = { PROPAGATION[word], rec == "r" }
      elseif userspace then
        a.dropped[#a.dropped + 1] = o -- mount(8) does not pass it to the kernel
      elseif is_vfs_flag(o) then
        a.flags[#a.flags + 1] = o
      else
        a.data[#a.data + 1] = o -- the filesystem's own option, as mount(8) passes it
      end
    end
  end
  local i = 1
  while i <= #args do
    local w = args[i]
    local long, value = w:match("^(%-%-[%w-]+)=(.*)$")
    if long then w = long end
    local function arg()
      if value then return value end
      i = i + 1
      if args[i] == nil then bad("mount: option " .. w .. " requires an argument") end
      return args[i]
    end
    if w == "-t" or w == "--types" then
      a.fstype = arg()
    elseif w:match("^%-t.") then
      a.fstype = w:sub(3)
    elseif w == "-o" or w == "--options" then
      option_list(arg())
    elseif w:match("^%-o.") then
      option_list(w:sub(3))
    elseif w == "--bind" or w == "-B" then
      a.op = "bind"
    elseif w == "--rbind" or w == "-R" then
      a.op = "rbind"
    elseif w == "--move" or w == "-M" then
      a.op = "move"
    elseif w == "-r" or w == "--read-only" then
      a.flags[#a.flags + 1] = "ro"
    elseif w == "-w" or w == "--rw" or w == "--read-write" then
      a.flags[#a.flags + 1] = "rw"
    elseif w:match("^%-%-make%-") then
      local rec, word = w:match("^%-%-make%-(r?)(%a+)$")
      if not word or not PROPAGATION[word] then bad("mount: unrecognized option '" .. w .. "'") end
      a.props[#a.props + 1] = { PROPAGATION[word], rec == "r" }
    elseif w:sub(1, 1) == "-" and w ~= "-" then
      bad("mount: unrecognized option '" .. w .. "'")
    else
      a.positional[#a.positional + 1] = w
    end
    i = i + 1
  end
  return a
end

-- mount(8) as util-linux does it: the mount, then each propagation change
-- as its own mount(2) (the kernel takes one per call), in the order given;
-- `--bind -o ro` binds, then remounts the bind read-only.
local function cmd_mount(sh, ns, args)
  local a = parse_mount(args)
  local pos = a.positional
  if #pos == 0 then
    if #a.props > 0 or a.op or a.remount then bad("mount: no mount point given") end
    return list_mounts(sh, ns)
  end
  if #pos > 2 then bad("mount: too many arguments") end
  local flags = table.concat(a.flags, ",")
  local data = #a.data > 0 and table.concat(a.data, ",") or nil
  if #pos == 1 then
    a.target = pos[1]
    if a.remount then
      local ok, ename, text = call(ns, "remount", a.target, flags, data,
                                   { bind = a.op == "bind" })
      if not ok then return mount_failed(sh, ns, a, "remount", ename, text) end
    elseif #a.props > 0 and not a.op and not a.fstype and flags == "" and not data then
      a.source = a.target
    else
      bad("mount: " .. a.target .. ": a scenario has no /etc/fstab: give a source and a target")
    end
  else
    if a.remount then bad("mount: -o remount takes only the mount point") end
    a.source, a.target = pos[1], pos[2]
    if a.op == "move" or a.op == "bind" or a.op == "rbind" then
      if data then bad("mount: filesystem options (" .. data .. ") with --" .. a.op) end
      if a.fstype then bad("mount: -t with --" .. a.op) end
      local ok, ename, text
      if a.op == "move" then
        if flags ~= "" then bad("mount: -o " .. flags .. " with --move") end
        ok, ename, text = call(ns, "move", a.source, a.target)
      else
        ok, ename, text = call(ns, "bind", a.source, a.target, { recursive = a.op == "rbind" })
      end
      if not ok then return mount_failed(sh, ns, a, "mount", ename, text) end
      if flags ~= "" then
        ok, ename, text = call(ns, "remount", a.target, flags, nil, { bind = true })
        if not ok then return mount_failed(sh, ns, a, "remount", ename, text) end
      end
    else
      if not a.fstype then
        if not a.source:match("^/dev/.") then
          bad("mount: " .. a.source .. ": give -t TYPE (only a /dev/ source stands "
            .. "for a tmpfs without it)")
        end
        a.fstype = "tmpfs"
      end
      -- the article's machine had its mount points: one missing in the
      -- scenario's fresh root (on the mount at "/") is made first
      if exists(ns, a.target) == false then
        local t = ns:mounts()
        local on, best = nil, -1
        for _, m in ipairs(t) do
          local tg = m.target
          if (tg == "/" or a.target:sub(1, #tg + 1) == tg .. "/") and #tg > best then
            on, best = tg, #tg
          end
        end
        if on == "/" then pcall(ns.mkdir, ns, a.target) end
      end
      local ok, ename, text = call(ns, "mount", a.source, a.target, a.fstype, flags, data)
      if not ok then return mount_failed(sh, ns, a, "mount", ename, text) end
    end
  end
  for _, p in ipairs(a.props) do
    local ok, ename, text = call(ns, p[1], a.target, { recursive = p[2] })
    if not ok then return mount_failed(sh, ns, a, "propagation", ename, text) end
  end
  return 0
end

-- ---- umount --------------------------------------------------------------

local function umount_message(ename, text)
  if ename == "EINVAL" then return "not mounted" end
  if ename == "EBUSY" then return "target is busy" end
  if ename == "ENOENT" then return "no mount point specified" end
  return "umount failed: " .. text
end

-- The mounts at and below the topmost mount at path, deepest first.
local function below(ns, path)
  local t = ns:mounts()
  local top = t:find(path)
  if not top then return nil end
  local order = {}
  local function walk(m)
    for _, c in ipairs(t:children(m)) do walk(c) end
    order[#order + 1] = m.target
  end
  walk(top)
  return order
end

local function cmd_umount(sh, ns, args)
  local flags, recursive, targets = {}, false, {}
  for _, w in ipairs(args) do
    if w == "--lazy" then flags[#flags + 1] = "detach"
    elseif w == "--force" then flags[#flags + 1] = "force"
    elseif w == "--recursive" then recursive = true
    elseif w:match("^%-%a+$") then
      for c in w:sub(2):gmatch(".") do
        if c == "l" then flags[#flags + 1] = "detach"
        elseif c == "f" then flags[#flags + 1] = "force"
        elseif c == "R" then recursive = true
        else bad("umount: invalid option -- '" .. c .. "'") end
      end
    elseif w:sub(1, 1) == "-" then
      bad("umount: unrecognized option '" .. w .. "'")
    else
      targets[#targets + 1] = w
    end
  end
  if #targets == 0 then bad("umount: bad usage (no mount point given)") end
  local status = 0
  for _, target in ipairs(targets) do
    local list = { target }
    if recursive then
      list = below(ns, target)
      if not list then
        say(sh, "umount: " .. target .. ": not mounted.\n")
        status = 32
      end
    end
    for _, p in ipairs(list or {}) do
      local ok, ename, text = call(ns, "umount", p, table.concat(flags, ","))
      if not ok then
        say(sh, "umount: " .. p .. ": " .. umount_message(ename, text) .. ".\n")
        status = 32
        break
      end
    end
  end
  return status
end

-- ---- files ---------------------------------------------------------------

local function cmd_mkdir(sh, ns, args)
  local parents, paths = false, {}
  for _, w in ipairs(args) do
    if w == "-p" or w == "--parents" then parents = true
    elseif w:sub(1, 1) == "-" then bad("mkdir: unrecognized option '" .. w .. "'")
    else paths[#paths + 1] = w end
  end
  if #paths == 0 then bad("mkdir: missing operand") end
  local status = 0
  for _, p in ipairs(paths) do
    local ok, ename, text = call(ns, "mkdir", p, { parents = parents })
    if not ok and not (parents and ename == "EEXIST") then
      say(sh, "mkdir: cannot create directory \226\128\152" .. p .. "\226\128\153: "
        .. text .. "\n")
      status = 1
    end
  end
  return status
end

-- A path of the transcript as the namespace's methods take it: relative
-- to the session's working directory, / (as ls takes it).
local function absolute(p)
  return p:sub(1, 1) == "/" and p or "/" .. p
end

-- touch(1) through the namespace's own file methods (ns:exists, ns:read,
-- ns:write), never ns:run's host io: a model namespace's are its own
-- files, so a transcript on the model touches nothing of the host, and a
-- kernel scenario's write is a recorded step `run --both` mirrors. A
-- missing file is made empty; an existing one is only dated by touch(1),
-- which mountns does not see: it is written back as it is, so a read-only
-- mount refuses it (EROFS) as it refuses touch(1); a directory is left
-- alone. True, or false and the errno name and text.
local function touch(ns, path)
  local ok, there = pcall(ns.exists, ns, path)
  local failed = not ok and there
  if there == true then
    local rok, text = pcall(ns.read, ns, path)
    if rok then return call(ns, "write", path, text) end
    local name = errno_of(text)
    if name == "EISDIR" then return true end
    -- ENOENT: a dangling symlink, whose target touch(1) makes
    if name ~= "ENOENT" then failed = text end
  end
  if failed then
    local name, text = errno_of(failed)
    if not name then error(failed, 0) end -- a misuse inside mountns: a bug here
    return false, name, text
  end
  return call(ns, "write", path, "")
end

local function cmd_touch(sh, ns, args)
  if #args == 0 then bad("touch: missing file operand") end
  local status = 0
  for _, p in ipairs(args) do
    if p:sub(1, 1) == "-" then bad("touch: unrecognized option '" .. p .. "'") end
    local ok, _, text = touch(ns, absolute(p))
    if not ok then
      say(sh, "touch: cannot touch '" .. p .. "': " .. text .. "\n")
      status = 1
    end
  end
  return status
end

-- ls lists with ns:ls (readdir inside ns: no host tool, no process), as
-- GNU ls does in the C locale: operands and names sorted by byte, names
-- starting with '.' only with -a (with . and ..) or -A (the last wins); missing operands
-- named first, then the ones that are not directories (a file, a dangling
-- symlink) as given, then each directory (with a "DIR:" header when there
-- are several operands). Names are listed on one line, as in a terminal.
local function cmd_ls(sh, ns, args)
  local dots, paths = nil, {} -- dots: "a" (-a), "A" (-A), the last one given
  for _, w in ipairs(args) do
    if w:match("^%-[aA1]+$") then
      dots = w:match(".*([aA])") or dots
    elseif w:sub(1, 1) == "-" then bad("ls: option " .. w .. " is not supported (-a, -A, -1)")
    else paths[#paths + 1] = w end
  end
  if #paths == 0 then paths[1] = "." end
  table.sort(paths)
  local status, files, dirs = 0, {}, {}
  for _, p in ipairs(paths) do
    local abs = p:sub(1, 1) == "/" and p or "/" .. p
    local ok, names = pcall(ns.ls, ns, abs)
    local ename, text
    if not ok then ename, text = errno_of(names) end
    if ok then
      dirs[#dirs + 1] = { path = p, names = names }
    elseif (ename == "ENOTDIR" or ename == "ENOENT") and ns:exists(abs) then
      files[#files + 1] = p
    elseif not ename then
      error(names, 0) -- a misuse inside mountns: a bug here
    else
      say(sh, "ls: " .. (ename == "EACCES" and "cannot open directory" or "cannot access")
        .. " '" .. p .. "': " .. text .. "\n")
      status = 2
    end
  end
  if #files > 0 then say(sh, table.concat(files, "  ") .. "\n") end
  for i, d in ipairs(dirs) do
    local shown = dots == "a" and { ".", ".." } or {}
    for _, name in ipairs(d.names) do
      if dots or name:sub(1, 1) ~= "." then shown[#shown + 1] = name end
    end
    table.sort(shown)
    if #paths > 1 then
      say(sh, ((i > 1 or #files > 0) and "\n" or "") .. d.path .. ":\n")
    end
    if #shown > 0 then say(sh, table.concat(shown, "  ") .. "\n") end
  end
  return status
end

local MOUNTINFO = { ["/proc/self/mountinfo"] = true, ["/proc/thread-self/mountinfo"] = true }

local function cmd_cat(sh, ns, args, pipe)
  if #args ~= 1 then bad("cat: one file expected") end
  local p = args[1]
  if MOUNTINFO[p] then
    local style = "mountinfo"
    if pipe then
      if #pipe == 2 and pipe[1] == "sed" and pipe[2] == "s/ - .*//" then
        style = "article"
      else
        bad("only '| sed 's/ - .*//'' (the seed article's filter) can follow cat mountinfo")
      end
    end
    say_table(sh, ns:mounts(), style)
    return 0
  end
  if pipe then bad("a pipe is only supported after cat /proc/self/mountinfo") end
  -- ns:read, as touch: the model's files on a model namespace, never the host's
  local ok, text = pcall(ns.read, ns, absolute(p))
  if not ok then
    local name, why = errno_of(text)
    if not name then error(text, 0) end -- a misuse inside mountns: a bug here
    say(sh, "cat: " .. p .. ": " .. why .. "\n")
    return 1
  end
  say(sh, text)
  return 0
end

local function cmd_findmnt(sh, ns, args)
  if #args > 0 then bad("findmnt: arguments are not supported (the whole table is listed)") end
  say_table(sh, ns:mounts(), "tree")
  return 0
end

local function cmd_echo(sh, _, args)
  say(sh, table.concat(args, " ") .. "\n")
  return 0
end

-- ---- namespaces ----------------------------------------------------------

local SHELLS = { sh = true, bash = true, dash = true, zsh = true, ash = true,
                 ksh = true, ["/bin/sh"] = true, ["/bin/bash"] = true }

local UNSHARE_PROPAGATION = { private = true, shared = true, slave = true, unchanged = true }

local function cmd_unshare(sh, ns, args, _, term)
  local mount, user, prop = false, false, nil
  local i = 1
  while i <= #args do
    local w = args[i]
    local long, value = w:match("^(%-%-[%w-]+)=(.*)$")
    if long then w = long end
    if w == "--mount" then mount = true
    elseif w == "--user" or w == "--map-root-user" then user = true
    elseif w == "--fork" then -- luacheck: ignore 542
      -- unshare(1) forks the shell: the session goes on in it all the same
    elseif w == "--propagation" then
      if not value then i = i + 1; value = args[i] end
      if not value then bad("unshare: option '--propagation' requires an argument") end
      if not UNSHARE_PROPAGATION[value] then
        bad("unshare: unsupported propagation mode: " .. value)
      end
      prop = value
    elseif w:match("^%-%a+$") then
      for c in w:sub(2):gmatch(".") do
        if c == "m" then mount = true
        elseif c == "U" or c == "r" then user = true
        elseif c == "f" then -- luacheck: ignore 542
          -- as --fork
        else
          bad("unshare: option -" .. c .. " is not supported (-m, -U, -r, -f, --propagation)")
        end
      end
    elseif w:sub(1, 1) == "-" then
      bad("unshare: unrecognized option '" .. w .. "'")
    else
      if not SHELLS[w] or args[i + 1] then
        bad("unshare: runs '" .. table.concat(args, " ", i) .. "': only a shell without "
          .. "arguments can follow (the session continues in the new namespace)")
      end
      break
    end
    i = i + 1
  end
  if not mount then bad("unshare: only a new mount namespace (-m) is supported") end
  local ok, res = pcall(ns.unshare, ns, { propagation = prop, user = user or nil,
                                          label = term.name })
  if not ok then
    local _, text = errno_of(res)
    say(sh, "unshare: unshare failed: " .. text .. "\n")
    return 1
  end
  term.stack[#term.stack + 1] = res
  return 0
end

local function cmd_exit(_, _, args, _, term)
  if #args > 1 then bad("exit: too many arguments") end
  if #term.stack == 1 then
    bad("exit: terminal " .. term.name .. " has no shell to leave (it is at its first namespace)")
  end
  term.stack[#term.stack] = nil
  return tonumber(args[1]) or 0
end

local COMMANDS = {
  mount = cmd_mount, umount = cmd_umount, mkdir = cmd_mkdir, touch = cmd_touch,
  ls = cmd_ls, cat = cmd_cat, findmnt = cmd_findmnt, echo = cmd_echo,
  unshare = cmd_unshare, exit = cmd_exit,
}

-- ---- the transcript ------------------------------------------------------

local function terminal(sh, name)
  local t = sh.terms[name]
  if not t then
    -- a new terminal on the same machine: it starts in the session's first namespace
    t = { name = name, stack = { sh.first }, status = 0 }
    sh.terms[name] = t
    sh.order[#sh.order + 1] = name
  end
  return t
end

-- One command line (the prompt already cut off).
local function run_command(sh, term, text)
  local words = split(text, term.status)
  if words[1] == "sudo" then table.remove(words, 1) end
  if #words == 0 then return end
  local stages, cur = {}, {}
  for _, w in ipairs(words) do
    if w == PIPE then stages[#stages + 1] = cur; cur = {} else cur[#cur + 1] = w end
  end
  stages[#stages + 1] = cur
  if #stages > 2 then bad("only one pipe ('cat /proc/self/mountinfo | sed ...') is supported") end
  local argv, pipe = stages[1], stages[2]
  local name = argv[1]
  if not name then bad("empty command before '|'") end
  local fn = COMMANDS[name]
  if not fn then bad("unknown command '" .. name .. "'") end
  if pipe and name ~= "cat" then bad("a pipe is only supported after cat /proc/self/mountinfo") end
  local ns = term.stack[#term.stack]
  local args = { unpack(argv, 2) }
  term.status = fn(sh, ns, args, pipe, term)
  return true
end

-- A prompted line: "sh1# cmd", "sh2$ cmd", "# cmd", "$ cmd", "@sh2 cmd".
-- Returns the terminal name (or false for the current one), the command
-- text, and the prompt kind; nil when the line has no prompt.
local function prompt(line)
  local name, sigil, rest = line:match("^([^%s#$]*)([#$])%s+(.*)$")
  if not name then
    name, sigil = line:match("^([^%s#$]*)([#$])$")
    rest = ""
  end
  if name then
    local at, after = rest:match("^@(%S+)%s*(.*)$")
    if at then return at, after, sigil end
    return name ~= "" and name or false, rest, sigil
  end
  local at, after = line:match("^@(%S+)%s*(.*)$")
  if at then return at, after, "@" end
  return nil
end

local function first_word(text)
  local w = text:match("^%s*(%S+)")
  if w == "sudo" then w = text:match("^%s*sudo%s+(%S+)") end
  return w
end

local function run(ns, text, opts, level)
  if type(ns) ~= "table" or type(ns.mounts) ~= "function" or type(ns.unshare) ~= "function" then
    argcheck.error("shell", 1, "scenario namespace expected, got " .. type(ns), level)
  end
  if type(text) ~= "string" then
    argcheck.error("shell", 2, "string expected, got " .. type(text), level)
  end
  opts = argcheck.options(opts, "shell", 3, { "normalize" }, level)
  local sh = new_session(ns, opts)
  sh.order = {}
  local lines = {}
  for l in (text:gsub("\r\n", "\n") .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
  local prompted = false
  for _, l in ipairs(lines) do
    local name, cmd, sigil = prompt(l)
    if name ~= nil and not (sigil == "#" and not name and not COMMANDS[first_word(cmd) or ""]) then
      prompted = true
      break
    end
  end
  local current = terminal(sh, ns:label())
  local seen_command = false
  for n, raw in ipairs(lines) do
    local line = raw:gsub("%s+$", "")
    local name, cmd, sigil = prompt(line)
    local ok, err = pcall(function()
      if line == "" then return end
      if name == nil then
        if line:match("^%s*#") then return end -- a comment
        if prompted then
          -- the output the source showed under its command: mountns prints its own
          if not seen_command then bad("no prompt, and no command before it") end
          return
        end
        cmd = line
      elseif sigil == "#" and not name and not COMMANDS[first_word(cmd) or ""] then
        return -- "# words": a comment, not a root prompt
      end
      if name then current = terminal(sh, name) end
      if cmd:match("^%s*$") then return end
      seen_command = true
      sh.out[#sh.out + 1] = line .. "\n"
      sh.printed = {}
      run_command(sh, current, cmd)
      local printed = {}
      for _, p in ipairs(sh.printed) do
        printed[#printed + 1] = type(p) == "string" and p or format.format(p.t, p.style)
      end
      sh.steps[#sh.steps + 1] = { line = n, command = cmd, terminal = current.name,
                                  status = current.status, output = table.concat(printed) }
    end)
    if not ok then
      if type(err) == "table" and err.shell then
        error(string.format("shell: line %d: %s (%s)", n, err.shell, line), level)
      end
      error(string.format("shell: line %d (%s): %s", n, line, tostring(err)), level)
    end
  end
  -- the session's text; printed tables renumbered together when asked
  local tables = {}
  for _, item in ipairs(sh.out) do
    if type(item) == "table" then tables[#tables + 1] = item end
  end
  if opts.normalize and #tables > 0 then
    local list = {}
    for i, item in ipairs(tables) do list[i] = item.t end
    local norm = { format.normalize(unpack(list)) }
    for i, item in ipairs(tables) do item.t = norm[i] end
  end
  local out = {}
  for i, item in ipairs(sh.out) do
    out[i] = type(item) == "string" and item or format.format(item.t, item.style)
  end
  local names = {}
  for _, name in ipairs(sh.order) do
    local t = sh.terms[name]
    names[name] = t.stack[#t.stack]
  end
  return table.concat(out), names, sh.steps
end

--- Run a shell transcript against scenario namespaces, verbatim.
-- Each command line acts through the `ns:` methods; what the commands
-- print (mount(8)'s messages on failure, tables for `cat
-- /proc/self/mountinfo` and `findmnt`) is the session's output, after each
-- command line as typed. See doc/scenarios.md, "Shell transcripts", for the
-- commands, prompts and rules.
-- @param ns the scenario namespace the session starts in (every terminal
-- starts there)
-- @tparam string text the transcript
-- @tparam[opt] table opts `normalize = true`: the tables printed are
-- renumbered together (`mountns.normalize`), so the output reads the same
-- on every run
-- @treturn string the session's output, as a terminal shows it
-- @treturn table the namespace each terminal is in at the end, by prompt
-- name (`{sh1 = ns, sh2 = ...}`; a bare `#`/`$` prompt is the terminal named
-- after `ns:label()`)
-- @treturn table one entry per command: `{line =, command =, terminal =,
-- status =, output =}`
-- @usage local out, sh = mountns.shell(ns, [[
-- sh1# mount --make-shared /dev/sda3 /X
-- sh2# unshare -m --propagation unchanged sh
-- ]])
function M.shell(ns, text, opts)
  local out, names, steps = run(ns, text, opts, 3)
  return out, names, steps
end

--- `ns:shell(text, opts)`: `mountns.shell(ns, text, opts)` as a method.
-- @param ns the namespace
-- @tparam string text
-- @tparam[opt] table opts
-- @return as `shell`
function M.method(ns, text, opts)
  local out, names, steps = run(ns, text, opts, 4)
  return out, names, steps
end

-- a model namespace's ns:shell is this one (the model cannot require it)
model.set_shell(M.method)

return M
