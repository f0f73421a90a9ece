--- recipes: ready scenario builders for the setups containers use.
-- Each takes the scenario's first namespace (the "host") and returns the
-- namespace handles and volume paths, so a script can then mount on either
-- side and assert what crossed.
-- @module mountns.recipes

local argcheck = require "mountns.args"

local M = {}

-- Docker's bind propagation modes (docs.docker.com, "Configure bind
-- propagation"): the r* forms apply to the whole subtree.
local MODES = {
  private = { "make_private", false }, rprivate = { "make_private", true },
  shared = { "make_shared", false }, rshared = { "make_shared", true },
  slave = { "make_slave", false }, rslave = { "make_slave", true },
}
M.MODES = MODES

-- The options of rootfs and rootless.
local ROOTFS_OPTS = { "propagation", "user", "label" }

local function set_mode(ns, path, mode)
  local m = MODES[mode]
  if not m then
    error(string.format("unknown propagation mode '%s' (private, rprivate, shared, "
      .. "rshared, slave, rslave)", tostring(mode)), 3)
  end
  ns[m[1]](ns, path, { recursive = m[2] })
end

--- A container's root file system built the way runc builds it
-- (libcontainer/rootfs_linux.go: prepareRoot, then pivotRoot):
-- in a new mount namespace, `/` gets the rootfs propagation (`mode`,
-- applied with MS_REC for the r* forms), the parent mount of the rootfs
-- directory is made private (pivot_root(2) refuses a shared parent), the
-- rootfs directory is bind-mounted onto itself with MS_BIND|MS_REC, and the
-- container pivots into it, the old root made rslave before it is
-- detached (so the detach unmounts nothing in the host's namespace, in
-- every mode). The host, like a systemd host, has `/` rshared;
-- /rootfs is a directory on it holding a volume mount at /rootfs/vol (the
-- container sees /vol). What the mode decides is the volume's propagation:
-- the non-recursive forms leave it a peer of the host's.
-- @param host the host namespace (the scenario's first)
-- @tparam[opt] table opts `propagation`: private, rprivate, shared, rshared,
-- slave or rslave (default "rslave", runc's default rootfsPropagation);
-- `user = true`: a rootless container (its mount namespace is owned by a new
-- user namespace); `label` (default "container").
-- @treturn table `{host=, container=, host_volume="/rootfs/vol",
-- container_volume="/vol", rootfs="/rootfs"}`
function M.rootfs(host, opts)
  opts = argcheck.options(opts, "rootfs", 2, ROOTFS_OPTS, 2)
  local mode = opts.propagation or "rslave"
  if not MODES[mode] then set_mode(nil, nil, mode) end
  host:make_shared("/", { recursive = true })
  host:mkdir("/rootfs/vol")
  host:mount("vol", "/rootfs/vol", "tmpfs")
  -- runc's steps (libcontainer/rootfs_linux.go), one call each:
  -- the new mount namespace (CLONE_NEWNS, made by runc's nsexec)
  local ctr = host:unshare { propagation = "unchanged", user = opts.user,
                            label = opts.label or "container" }
  -- prepareRoot: mount("", "/", "", flag, "") with flag = MS_SLAVE|MS_REC
  -- or config.RootPropagation
  set_mode(ctr, "/", mode)
  -- prepareRoot: rootfsParentMountPrivate, "make parent mount private to
  -- make sure following bind mount does not propagate in other
  -- namespaces" (and pivot_root's IS_SHARED(new_mnt->mnt_parent) check);
  -- here the rootfs's parent mount is /
  ctr:make_private("/")
  -- prepareRoot: mount(rootfs, rootfs, "bind", MS_BIND|MS_REC, "")
  ctr:bind("/rootfs", "/rootfs", { recursive = true })
  -- pivotRoot: fchdir(newroot); pivot_root(".", "."); fchdir(oldroot);
  -- mount("", ".", "", MS_SLAVE|MS_REC, "") ("make oldroot rslave to make
  -- sure our unmounts don't propagate to the host (and thus bork the
  -- machine)"; rslave, not rprivate, for races with the host's
  -- devicemapper, its comment says); unmount(".", MNT_DETACH); chdir("/").
  -- Without the rslave step the detach unmounts, through their peers, the
  -- host's mounts under the shared mounts it copied (in every mode but
  -- rslave and rprivate)
  ctr:pivot_root("/rootfs", { old_root = "rslave" })
  return { host = host, container = ctr, rootfs = "/rootfs",
           host_volume = "/rootfs/vol", container_volume = "/vol" }
end

--- A rootless container: `rootfs` with a user namespace (as rootless
-- Podman or Docker build it). The kernel then reduces the shared mounts the
-- container inherits to slaves and locks them.
function M.rootless(host, opts)
  local o = { user = true }
  for k, v in pairs(argcheck.options(opts, "rootless", 2, ROOTFS_OPTS, 2)) do o[k] = v end
  return M.rootfs(host, o)
end

-- Kubernetes mountPropagation -> the bind propagation the runtime applies
-- to the volume (kubernetes.io/docs/concepts/storage/volumes/#mount-propagation;
-- CRI MountPropagation PROPAGATION_PRIVATE / _HOST_TO_CONTAINER /
-- _BIDIRECTIONAL, which runtimes turn into rprivate / rslave / rshared).
local K8S = { None = "rprivate", HostToContainer = "rslave", Bidirectional = "rshared" }
M.KUBERNETES = K8S

--- A Kubernetes volume between a "host" namespace and a "container"
-- namespace with a `mountPropagation` mode. The host's volume directory
-- lives on an rshared mount (kubelet requires that for HostToContainer and
-- Bidirectional); the container gets it bind-mounted at /data.
-- @param host the host namespace
-- @tparam string mode "None", "HostToContainer" or "Bidirectional"
-- @tparam[opt] table opts `user = true`: the container in its own user
-- namespace; `label` (default "container")
-- @treturn table `{host=, container=, host_volume="/var/lib/kubelet/vol",
-- container_volume="/data", propagation=<bind mode>}`
function M.kubernetes(host, mode, opts)
  opts = argcheck.options(opts, "kubernetes", 3, { "user", "label" }, 2)
  local bind_mode = K8S[mode]
  if not bind_mode then
    error(string.format("unknown mountPropagation '%s' (None, HostToContainer, "
      .. "Bidirectional)", tostring(mode)), 2)
  end
  host:mkdir("/var/lib/kubelet")
  host:mount("kubelet", "/var/lib/kubelet", "tmpfs")
  host:make_shared("/var/lib/kubelet", { recursive = true })
  host:mkdir("/var/lib/kubelet/vol")
  local ctr = host:unshare { propagation = "unchanged", user = opts.user,
                            label = opts.label or "container" }
  ctr:mkdir("/data")
  ctr:bind("/var/lib/kubelet/vol", "/data", { recursive = true })
  set_mode(ctr, "/data", bind_mode)
  -- the container's copy of the kubelet directory plays no part: a runtime
  -- would not even show it; keep it from carrying propagation
  ctr:make_private("/var/lib/kubelet", { recursive = true })
  return { host = host, container = ctr, host_volume = "/var/lib/kubelet/vol",
           container_volume = "/data", propagation = bind_mode }
end

return M
