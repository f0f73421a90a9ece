-- The manual runs as written: every ```lua block of README.md and of each
-- page under doc/ is run, each in a forked child with a mount namespace of
-- its own (mountns.isolate), so an example that mounts reaches nothing of
-- the host's, and what it prints is kept out of busted's report. A block
-- that raises, or whose checks fail, fails this spec naming the page and
-- the line. The README stays a newcomer's page (at most 300 lines) and its
-- map links every page of the manual. Spec 19 checks that the README and
-- the pages document every name `require "mountns"` exports.
local helper = require "helper"
local mountns = require "mountns"

local ROOT = helper.ROOT

-- The pages of the manual: README.md, then doc/*.md in name order.
local function pages()
  local list = { "README.md" }
  for name in helper.sh("ls -1 '" .. ROOT .. "/doc'"):gmatch("[^\n]+") do
    if name:match("%.md$") then list[#list + 1] = "doc/" .. name end
  end
  return list
end

-- The ```lua blocks of a Markdown text: {line = N, code = text}, N the
-- line of the block's first line of code.
local function lua_blocks(text)
  local blocks, n, buf, start = {}, 0, nil, nil
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if buf then
      if line:match("^```%s*$") then
        blocks[#blocks + 1] = { line = start, code = table.concat(buf, "\n") }
        buf = nil
      else
        buf[#buf + 1] = line
      end
    elseif line:match("^```lua%s*$") then
      buf, start = {}, n + 1
    end
  end
  assert(not buf, "a ```lua block is not closed")
  return blocks
end

-- Run one block in an isolated child. Its chunk is named after the page
-- and padded so that its line numbers are the page's. print and io.write
-- go to a file of the child's (flushed at once: a scenario forks, and a
-- buffer copied into its child would be written twice). Returns ok, the
-- error (nil when ok) and what the block printed.
local function run_block(page, block)
  local code = string.rep("\n", block.line - 1) .. block.code
  return mountns.isolate_with({ timeout = 120 }, function()
    helper.sandbox()
    local out = assert(io.open("/tmp/mns/out", "w+"))
    local function write(...)
      for i = 1, select("#", ...) do out:write(tostring((select(i, ...)))) end
      out:flush()
      return out
    end
    local env = setmetatable({
      print = function(...)
        local n = select("#", ...)
        for i = 1, n do write(tostring((select(i, ...))), i < n and "\t" or "") end
        write("\n")
      end,
      io = setmetatable({ write = write }, { __index = io }),
    }, { __index = _G })
    local chunk, err = (loadstring or load)(code, "@" .. page) -- luacheck: ignore
    if not chunk then return false, err, "" end
    if setfenv then setfenv(chunk, env) else -- luacheck: ignore
      chunk = assert(load(code, "@" .. page, "t", env))
    end
    local ok, err2 = pcall(chunk)
    out:seek("set")
    local text = out:read("*a")
    out:close()
    return ok, ok and nil or tostring(err2), text
  end)
end

describe("the manual", function()
  local list = pages()

  it("runs the examples of every page (and a failing one fails)", function()
    -- the harness itself, both ways: a block whose check fails is reported
    -- with its page and line, one that passes is not
    local bad = { line = 7, code = 'require("mountns").scenario(function(ns)\n'
      .. '  require("mountns.expect").mounted(ns, "/nothing")\nend)' }
    local ok, err = run_block("doc/x.md", bad)
    assert.is_false(ok)
    assert.truthy(err:find("doc/x.md:8:", 1, true), err)
    local good = { line = 1, code = 'print("one", 2); io.write("three\\n")' }
    local ok2, err2, out2 = run_block("doc/x.md", good)
    assert.is_true(ok2, err2)
    assert.equal("one\t2\nthree\n", out2)

    local failed, count = {}, 0
    for _, page in ipairs(list) do
      for _, block in ipairs(lua_blocks(helper.read(ROOT .. "/" .. page))) do
        count = count + 1
        local ok3, err3 = run_block(page, block)
        if not ok3 then failed[#failed + 1] = page .. ":" .. block.line .. ": " .. err3 end
      end
    end
    assert.same({}, failed)
    -- the README, api, scenarios, checks, model, containers and the kernel's
    -- contradictions each show at least one
    assert.truthy(count >= 12, count .. " examples")
  end)

  it("keeps the README short, and its map links every page", function()
    local readme = helper.read(ROOT .. "/README.md")
    local _, lines = readme:gsub("\n", "")
    assert.truthy(lines <= 300, "README.md has " .. lines .. " lines")
    local unlinked = {}
    for _, page in ipairs(list) do
      if page ~= "README.md" and not readme:find("](" .. page .. ")", 1, true) then
        unlinked[#unlinked + 1] = page
      end
    end
    assert.same({}, unlinked)
  end)

  it("links only to pages and headings that exist", function()
    -- GitHub's anchor of a heading: lower case, punctuation but - and _
    -- dropped, spaces as -
    local function anchor(h)
      return (h:lower():gsub("[^%w%- _]", ""):gsub(" ", "-"))
    end
    local anchors = {}
    for _, page in ipairs(list) do
      local set = {}
      for h in helper.read(ROOT .. "/" .. page):gmatch("\n#+ ([^\n]+)") do set[anchor(h)] = true end
      anchors[page] = set
    end
    local broken = {}
    for _, page in ipairs(list) do
      local dir = page:match("^(.*)/") or ""
      for target in helper.read(ROOT .. "/" .. page):gmatch("%]%(([^)%s]+)%)") do
        if not target:match("^%a+:") then
          local file, frag = target:match("^([^#]*)#?(.*)$")
          local path = file == "" and page or (dir == "" and file or dir .. "/" .. file)
          path = path:gsub("[^/]+/%.%./", "")
          local f = io.open(ROOT .. "/" .. path)
          if not f then
            broken[#broken + 1] = page .. ": " .. target
          else
            f:close()
            if frag ~= "" and not (anchors[path] and anchors[path][frag]) then
              broken[#broken + 1] = page .. ": " .. target
            end
          end
        end
      end
    end
    assert.same({}, broken)
  end)
end)
