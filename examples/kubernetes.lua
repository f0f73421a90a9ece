-- Kubernetes mountPropagation for a volume between a host and a container
-- (kubernetes.io/docs/concepts/storage/volumes/#mount-propagation):
--   None            - host mounts made later are not seen in the container
--   HostToContainer - they are (rslave); container mounts stay inside
--   Bidirectional   - both ways (rshared)
local mountns = require "mountns"
local expect = require "mountns.expect"
local recipes = require "mountns.recipes"

local function volume(mode, host_to_ctr, ctr_to_host)
  mountns.scenario("kubernetes mountPropagation: " .. mode, function(host)
    host:label("host")
    local k = recipes.kubernetes(host, mode)
    local ctr = k.container
    host:mkdir(k.host_volume .. "/later")
    host:mount("later", k.host_volume .. "/later", "tmpfs")
    ctr:mkdir(k.container_volume .. "/mine")
    ctr:mount("mine", k.container_volume .. "/mine", "tmpfs")
    ;(host_to_ctr and expect.mounted or expect.not_mounted)(ctr, k.container_volume .. "/later")
    ;(ctr_to_host and expect.mounted or expect.not_mounted)(host, k.host_volume .. "/mine")
  end)
end

volume("None", false, false)
volume("HostToContainer", true, false)
volume("Bidirectional", true, true)
