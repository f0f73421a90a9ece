-- `make doc`, after LDoc: name each function or field of mountns.core that
-- has no /*** comment in csrc/ and so is missing from the reference, and
-- fail (exit 1) when there is one.
local core = require "mountns.core"
local f = assert(io.open("doc/ldoc/modules/mountns.core.html"))
local html = f:read("*a")
f:close()
local missing = {}
for name in pairs(core) do
  if not name:match("^_") and not html:find('name = "' .. name .. '"', 1, true) then
    missing[#missing + 1] = name
  end
end
table.sort(missing)
if #missing > 0 then
  print("doc: undocumented in mountns.core: " .. table.concat(missing, " "))
end
os.exit(#missing == 0 and 0 or 1)
