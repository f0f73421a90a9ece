-- parse_mountinfo over the real-world mountinfo fixtures of twelve other
-- projects' parsers (util-linux, moby/sys, snapd, prometheus/procfs,
-- kubernetes/mount-utils, systemd, runc, cilium, ...), checked against what
-- each project's own tests expect. The fixtures live outside the tree
-- (../shared/mountinfo-corpora, see its README): the spec is pending where
-- they are absent, such as CI's fresh clone. Where a project expects what
-- the kernel cannot write, the kernel's format wins: those cases are listed
-- in DEVIATIONS with the evidence, and the spec pins mountns' answer there.
local mountns = require "mountns"
local helper = require "helper"

local DIR = helper.ROOT .. "/../shared/mountinfo-corpora"

-- fs/proc_namespace.c show_mountinfo is the kernel's format throughout.
local DEVIATIONS = {
  ["canonical-snapd__osutil-nfs+overlay_linux_test.go-mountinfo"] = {
    -- made up (snapd's test says so); fs/namespace.c mnt_alloc_group_id
    -- allocates peer groups with ida_alloc_min(&mnt_group_ida, 1, ...)
    [9] = { refuse = "optional field without a peer group ID >= 1" },
    [10] = { refuse = "optional field without a peer group ID >= 1" },
  },
  ["moby-sys__mountinfo_linux_test.go-TestUnescape-as-fields"] = {
    -- moby leaves \222 alone; mountns decodes every \ooo as libmount's
    -- unmangle does. The kernel escapes only " \t\n\\" in ROOT and TARGET
    -- (seq_dentry, seq_path_root), so \222 is never its output
    [18] = { fields = { root_hex = "92", target_hex = "92" } },
  },
  ["moby-sys__mountinfo_linux_test.go-fedoraMountinfo"] = {
    -- moby cuts cifs' raw-space super options at the first space; they are
    -- the rest of the line (the filesystem prints them, show_options)
    [58] = { fields = { super_options = "rw,sec=ntlm,cache=loose,unc=\\\\foo\\BLA BLA BLA,"
      .. "username=my_login,domain=mydomain.com,uid=12345678,forceuid,gid=12345678,"
      .. "forcegid,addr=10.1.30.10,file_mode=0755,dir_mode=0755,nounix,rsize=61440,"
      .. "wsize=65536,actimeo=1" } },
  },
  ["moby-sys__mountinfo_linux_test.go-mountInfoWithSpaces"] = {
    [2] = { fields = { super_options = "rw,sec=ntlm,cache=loose,unc=\\\\foo\\BLA BLA BLA,"
      .. "username=my_login,domain=mydomain.com,uid=12345678,forceuid,gid=12345678,"
      .. "forcegid,addr=10.1.30.10,file_mode=0755,dir_mode=0755,nounix,rsize=61440,"
      .. "wsize=65536,actimeo=1" } },
  },
  ["prometheus-procfs__mountinfo_test.go-TestMountInfo"] = {
    -- "relatime  - tmpfs": show_mountinfo writes each tag as " tag", then
    -- " - ": there is no empty optional-field slot
    [4] = { refuse = "empty field (double space)" },
  },
  ["prometheus-procfs__testdata-fixtures.ttar-proc-26231-mountinfo"] = {
    -- "/  /root": ROOT (seq_dentry) and TARGET (seq_path_root) are never
    -- empty; procfs reads TARGET "" and OPTIONS "/root"
    table = { refuse_line = 1, why = "empty field (double space)" },
  },
  ["tailhook-libmount__src-mountinfo.rs-test_mount_info_parser_comment"] = {
    -- the kernel writes no comments; libmount skips '#' lines silently
    table = { refuse_line = 1, why = "mount ID is not a number" },
  },
  ["util-linux-util-linux__tests-ts-libmount-files-mountinfo@c6f462ff-deleted"] = {
    -- libmount <= 2.37 cut " (deleted)" off TARGET; util-linux 166e87368
    -- (v2.38) stopped: the target is what the kernel wrote
    [33] = { fields = { target = "/mnt/foo (deleted)" } },
  },
}

local function exists(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

-- the lines of a text, without their "\n" (a final "\n" ends the last)
local function split_lines(text)
  local out = {}
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do out[#out + 1] = l end
  if text:sub(-1) == "\n" then out[#out] = nil end
  return out
end

local function hex(s)
  return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

local function sorted_list(s)
  local t = {}
  for x in (s .. ","):gmatch("([^,]*),") do t[#t + 1] = x end
  table.sort(t)
  return t
end

-- the record fields a fixture's "fields" entry names, as the record has them
local function record_view(m, want)
  local got = {}
  for k in pairs(want) do
    if k == "root_hex" then got[k] = hex(m.root)
    elseif k == "target_hex" then got[k] = hex(m.target)
    elseif k == "options_set" then got[k] = sorted_list(m.options)
    elseif k == "super_options_set" then got[k] = sorted_list(m.super_options)
    elseif k == "optional" then
      got[k] = { shared = m.shared, master = m.master,
                 propagate_from = m.propagate_from, unbindable = m.unbindable }
    else got[k] = m[k] end
  end
  return got
end

-- a fixture's "fields" entry in the same shape: the raw optional fields
-- become the IDs of the known tags (proc(5): unknown tags are skipped)
local function want_view(fields)
  local want = {}
  for k, v in pairs(fields) do
    if k == "options_set" or k == "super_options_set" then
      local t = {}
      for i, x in ipairs(v) do t[i] = x end
      table.sort(t)
      want[k] = t
    elseif k == "optional" then
      local o = { unbindable = false }
      for _, f in ipairs(v) do
        local tag, id = f:match("^([%w_]+):(%d+)$")
        if tag == "shared" or tag == "master" or tag == "propagate_from" then
          o[tag] = tonumber(id)
        elseif f == "unbindable" then
          o.unbindable = true
        end
      end
      want[k] = o
    else
      want[k] = v
    end
  end
  return want
end

local function merged(fields, override)
  local out = {}
  for k, v in pairs(fields or {}) do out[k] = v end
  for k, v in pairs(override or {}) do out[k] = v end
  return out
end

local function check_fields(m, fields, override)
  local want = want_view(fields or {})
  for k, v in pairs(override or {}) do want[k] = v end
  assert.are.same(want, record_view(m, merged(fields, override)))
end

describe("real-world mountinfo fixtures (../shared/mountinfo-corpora)", function()
  local ok_json, json = pcall(require, "dkjson")
  if not exists(DIR .. "/README.md") then
    pending("the fixtures are absent (" .. DIR .. ")")
    return
  end
  if not ok_json then
    pending("dkjson is not installed (it comes with busted)")
    return
  end

  local names = {}
  for f in helper.sh("ls -1 '" .. DIR .. "'"):gmatch("[^\n]+") do
    local name = f:match("^(.*)%.expect%.json$")
    if name then names[#names + 1] = name end
  end
  table.sort(names)

  it("has a text for every expectation, and every deviation a fixture", function()
    assert.is_true(#names >= 48, #names .. " fixtures")
    local known = {}
    for _, name in ipairs(names) do
      assert.is_true(exists(DIR .. "/" .. name .. ".txt"), name)
      known[name] = true
    end
    for name in pairs(DEVIATIONS) do assert.is_true(known[name], name) end
  end)

  for _, name in ipairs(names) do
    it(name, function()
      local e = json.decode(slurp(DIR .. "/" .. name .. ".expect.json"), 1, nil)
      local text = slurp(DIR .. "/" .. name .. ".txt")
      local lines = split_lines(text)
      local dev = DEVIATIONS[name] or {}
      local line_exp = {}
      for n, l in pairs(e.lines or {}) do line_exp[tonumber(n)] = l end

      if e.mode == "table" then
        local t, err = mountns.parse_mountinfo(text)
        local refuse_line = e.verdict == "refuse" and e.refuse_line
        local why
        if dev.table then refuse_line, why = dev.table.refuse_line, dev.table.why end
        if refuse_line then
          assert.is_nil(t)
          assert.are.equal(("line %d: "):format(refuse_line), err:match("^line %d+: "))
          if why then assert.are.equal(("line %d: %s"):format(refuse_line, why), err) end
          return
        end
        assert(t, err)
        assert.are.equal(e.count, #t)
        -- line N is the record of the Nth line that is not blank
        local rec, k = {}, 0
        for i, l in ipairs(lines) do
          if l:gsub("\r$", "") ~= "" then k = k + 1; rec[i] = t[k] end
        end
        for n, l in pairs(line_exp) do
          local d = dev[n] or {}
          assert.is_true(l.accept, "line " .. n)
          if l.fields or d.fields then check_fields(rec[n], l.fields, d.fields) end
        end
      else
        assert.are.equal("lines", e.mode)
        for n, l in pairs(line_exp) do
          local d = dev[n] or {}
          local t, err = mountns.parse_mountinfo(lines[n])
          if d.refuse then
            assert.are.equal("line 1: " .. d.refuse, err)
          elseif l.accept then
            assert(t, ("line %d: %s"):format(n, tostring(err)))
            assert.are.equal(1, #t)
            if l.fields or d.fields then check_fields(t[1], l.fields, d.fields) end
          else
            assert.is_nil(t, "line " .. n .. " accepted")
            assert.truthy(err:match("^line 1: "))
          end
        end
      end
    end)
  end
end)
