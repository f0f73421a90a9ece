-- model.listing: a model namespace's mount table as the kernel lists it:
-- one record per mount (mountns.record's fields), the options text,
-- the propagation word, the target of each mount in its namespace and
-- propagate_from (get_dominating_id).

local propagate = require "mountns.model.propagate"
local paths = require "mountns.model.paths"

local M = {}

local relative, is_subdir = paths.relative, paths.is_subdir
local ring_from = propagate.ring_from

local function options_text(f)
  if f.text_ then return f.text_ end
  local out = { f.ro and "ro" or "rw" }
  if f.nosuid then out[#out + 1] = "nosuid" end
  if f.nodev then out[#out + 1] = "nodev" end
  if f.noexec then out[#out + 1] = "noexec" end
  if f.atime == "noatime" then out[#out + 1] = "noatime" end
  if f.nodiratime then out[#out + 1] = "nodiratime" end
  if f.atime == "relatime" then out[#out + 1] = "relatime" end
  if f.nosymfollow then out[#out + 1] = "nosymfollow" end
  if f.idmapped then out[#out + 1] = "idmapped" end -- (mount_setattr: model.newapi)
  f.text_ = table.concat(out, ",")
  return f.text_
end


-- the propagation text by (shared, slave, unbindable): 4 + 2 + 1
local PROPAGATION = { [0] = "private", "unbindable", "slave", "slave,unbindable", "shared",
                      "shared,unbindable", "shared,slave", "shared,slave,unbindable" }

-- The target of m, remembered on the mount for one listing (gen: a token
-- of that listing): each mount's is its parent's plus one step.
local function target_in(m, gen)
  if m.tgen_ == gen then return m.tgt_ end
  local t
  local parent = m.parent
  if not parent then
    t = "/"
  else
    local p = target_in(parent, gen)
    local proot, mp = parent.root, m.mp
    local rel = proot == "/" and mp or relative(mp, proot)
    if rel == "/" then t = p else t = p == "/" and rel or p .. rel end
  end
  m.tgen_, m.tgt_ = gen, t
  return t
end

-- get_dominating_id: the group of the first master up the chain with a
-- peer in ns that the reader's root reaches (get_peer_under_root; root:
-- a path in ns, "/" or nil for the namespace's root; gen: the listing's
-- token, for target_in)
local function dominating(m, ns, root, gen)
  local x = m.master
  while x do
    for _, y in ipairs(ring_from(x)) do
      if y.ns == ns and (not root or is_subdir(target_in(y, gen), root)) then
        return y.group and y.group.id
      end
    end
    x = x.master
  end
  return nil
end

-- The record of m in ns; gen: the listing's token (target_in); root: the
-- reader's root (a path in ns) when not the namespace's.
local function record_of(m, ns, with_from, gen, root)
  local mm, g, sb, parent = m.master, m.group, m.sb, m.parent
  local master = mm and mm.group and mm.group.id or nil
  local dom = with_from and mm and dominating(m, ns, root, gen) or nil
  local target = target_in(m, gen)
  local f, unbindable = m.flags, m.unbindable
  return {
    id = m.id, parent_id = parent and parent.id or ns.root_parent,
    major = 0, minor = sb.dev, root = m.root, target = target,
    options = f.text_ or options_text(f), fstype = sb.fstype, source = sb.source,
    super_options = sb.super_options, shared = g and g.id or nil, master = master,
    propagate_from = (with_from and dom and dom ~= master) and dom or nil,
    unbindable = unbindable,
    propagation = PROPAGATION[(g and 4 or 0) + (mm and 2 or 0) + (unbindable and 1 or 0)],
  }
end

M.record_of, M.options_text = record_of, options_text

return M
