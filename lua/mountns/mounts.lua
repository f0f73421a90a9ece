--- mountns.mounts: the fastest complete mount table this kernel offers.
--
-- On Linux 6.8+ (with statmount's source and option strings, 6.13+) the
-- table comes from `listmount(2)` + `statmount(2)`: no text is generated or
-- parsed, other namespaces are listed by their mount-namespace ID without
-- `setns`, and each record also carries `unique_id` and `parent_unique_id`.
-- On older kernels it is `/proc/self/mountinfo` parsed by libmount (for
-- another namespace: read by a forked child that enters it).
--
-- `propagate_from` is left out of statmount records unless asked for
-- (`mounts{propagate_from = true}` or `mounts(ns, {propagate_from = true})`):
-- the kernel finds it by walking peer groups, which in a namespace whose
-- mounts are slaves of large peer groups costs as much as mountinfo does.
-- The mountinfo path always has it (the kernel computes it anyway).
-- @module mountns.mounts

local core = require "mountns.core"
local mtable = require "mountns.table"
local argcheck = require "mountns.args"

local M = {}

-- A core handle, or the handle of an object with a :handle() method
-- (scenario namespaces), or nil.
local function handle_of(ns)
  if ns == nil then return nil end
  if type(ns) == "table" and type(ns.handle) == "function" then
    return ns:handle()
  end
  return ns
end

-- The mountinfo text of namespace h, read by a child that enters it.
local function mountinfo_in(h)
  local r, w = core.pipe()
  if not r then return nil, w end
  local pid, ferr, ferrno = core.fork()
  if not pid then
    core.close_fd(r); core.close_fd(w)
    return nil, ferr, ferrno
  end
  if pid == 0 then
    core.close_fd(r)
    pcall(function()
      local ok, err = h:enter()
      local text = ok and core.read_mountinfo()
      core.write_fd(w, text and ("ok\n" .. text) or ("err\n" .. tostring(err)))
    end)
    core._exit(0)
  end
  core.close_fd(w)
  local data = core.read_all(r, 30)
  core.close_fd(r)
  core.waitpid(pid)
  local status, payload = (data or ""):match("^(%a+)\n(.*)$")
  if status == "ok" then return payload end
  return nil, "mounts: cannot read the mountinfo of " .. tostring(h)
    .. ": " .. tostring(payload or "no answer")
end

--- Which path `mounts` takes here: "statmount" or "mountinfo".
-- @tparam[opt] boolean other true for another namespace (needs listmount by
-- mount-namespace ID)
function M.path(other)
  local f = core.features()
  if f.statmount_complete and (not other or f.listmount_ns) then
    return "statmount"
  end
  return "mountinfo"
end

--- The mount table of a namespace.
-- @param[opt] ns a namespace handle (`mountns.namespace(pid)`), an object
-- with a `:handle()` method returning one, or nil for the caller's
-- @tparam[opt] table opts `propagate_from = true` to compute propagate_from
-- on the statmount path (`mounts(opts)` works too)
-- @treturn[1] table a mount table (`mountns.table`), in mountinfo order
-- @return[2] nil
-- @treturn[2] string message
-- @treturn[2] integer errno
-- @usage local t = mountns.mounts(); print(t:find("/").propagation)
function M.mounts(ns, opts)
  local argn = 2
  if opts == nil and type(ns) == "table" and type(ns.handle) ~= "function"
      and not mtable.is(ns) then
    ns, opts, argn = nil, ns, 1
  end
  opts = argcheck.options(opts, "mounts", argn, { "propagate_from" }, 2)
  local h = handle_of(ns)
  if M.path(h ~= nil) == "statmount" then
    local t, err, errno = core.listmount { stat = true, ns = h,
                                          propagate_from = opts.propagate_from
                                            and true or nil }
    if not t then return nil, err, errno end
    return mtable.new(t)
  end
  local t, err, errno
  if h == nil then
    t, err, errno = core.mountinfo()
  else
    local text
    text, err, errno = mountinfo_in(h)
    if text then t, err, errno = core.parse_mountinfo(text) end
  end
  if not t then return nil, err, errno end
  return mtable.new(t)
end

return M
