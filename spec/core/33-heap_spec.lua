-- spec 33: where malloc puts a caller's big blocks once mountns is loaded
-- (csrc/heap.c, issue 28 item 1). A block glibc maps on its own stays in
-- 4 KB pages, which every scenario's fork copies one entry at a time; in
-- the heap it sits in huge pages. No timing here (bench/scenario_cost.lua
-- measures the scenarios): what the kernel lists in /proc/self/maps.
local helper = require "helper"

describe("a caller's 1 MiB strings (csrc/heap.c's mmap threshold)", function()
  -- A fresh interpreter (the settings are read when mountns.core loads)
  -- with `env` in its environment requires mountns, then makes 64 strings
  -- of 1 MiB; it prints how many kB its anonymous mappings other than
  -- the malloc heap (/proc/self/maps) grew meanwhile: 64 MB and more when
  -- glibc mapped each on its own, a few MB when they went into the heap.
  -- Each string is one concatenation of 100 KB pieces, the collector
  -- stopped: no block of 128 KB or more is freed before (string.rep's
  -- 1 MiB buffer would be, or Lua 5.2's concatenation buffer at a
  -- collection), which would raise glibc's own dynamic threshold past
  -- 1 MiB whatever mountns does.
  local function mapped_growth_kb(env)
    local out = helper.sh("cd " .. helper.ROOT .. " && env -u GLIBC_TUNABLES "
      .. "-u MALLOC_MMAP_THRESHOLD_ " .. env .. " " .. helper.lua_cmd() .. [[ -e '
      require "mountns"
      local function mapped_kb()
        local kb = 0
        for line in io.lines("/proc/self/maps") do
          local a, b = line:match("^(%x+)%-(%x+) %S+ %x+ %S+ 0%s*$")
          if a then kb = kb + (tonumber(b, 16) - tonumber(a, 16)) / 1024 end
        end
        return kb
      end
      collectgarbage("stop")
      local x = string.rep("x", 104857)
      local m0, t = mapped_kb(), {}
      for i = 1, 64 do
        t[i] = string.format("%07d\n", i) .. x .. x .. x .. x .. x .. x .. x .. x .. x .. x
      end
      assert(#t[64] == 1048578 and t[64]:sub(1, 8) == "0000064\n")
      print("GREW " .. string.format("%d", mapped_kb() - m0))' 2>&1; echo "exit=$?"]])
    return tonumber(out:match("GREW (%d+)")), out:match("exit=(%d+)"), out
  end

  local thp_mode = require("procstat").thp_mode

  -- as spec 20's "the caller's heap in huge pages", but "always" is fine:
  -- the threshold is raised whenever huge pages can be had at all
  local function skip()
    if (os.getenv("LD_PRELOAD") or ""):find("asan", 1, true) then
      return "ASan's malloc serves Lua from its own mappings: no heap"
    elseif rawget(_G, "jit") then
      return "LuaJIT's allocator maps its memory itself: not wrapped"
    elseif thp_mode() == nil or thp_mode() == "never" then
      return "no transparent huge pages here: malloc is left alone"
    end
  end

  local MB64 = 64 * 1024

  it("go into the heap once mountns is loaded", function()
    local why = skip()
    if why then pending(why) return end
    local kb, code, out = mapped_growth_kb("")
    assert.are.equal("0", code, out)
    assert.is_true(kb < MB64 / 4, out)
  end)

  it("go into the heap when the user only asked glibc for huge pages", function()
    local why = skip()
    if why then pending(why) return end
    local kb, code, out = mapped_growth_kb("GLIBC_TUNABLES=glibc.malloc.hugetlb=1")
    assert.are.equal("0", code, out)
    assert.is_true(kb < MB64 / 4, out)
  end)

  it("are each mapped on their own with MOUNTNS_HUGE_PAGES=0 (malloc left alone)", function()
    local why = skip()
    if why then pending(why) return end
    local kb, code, out = mapped_growth_kb("MOUNTNS_HUGE_PAGES=0")
    assert.are.equal("0", code, out)
    assert.is_true(kb >= MB64, out)
  end)

  it("go where the user's own mmap threshold says", function()
    local why = skip()
    if why then pending(why) return end
    for _, env in ipairs { "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072",
                           "GLIBC_TUNABLES=glibc.malloc.hugetlb=1:"
                             .. "glibc.malloc.mmap_threshold=131072",
                           "MALLOC_MMAP_THRESHOLD_=131072" } do
      local kb, code, out = mapped_growth_kb(env)
      assert.are.equal("0", code, out)
      -- all but what the top of the heap held: mountns still keeps up to
      -- 32 MB free there (M_TOP_PAD), and malloc serves from it first
      assert.is_true(kb >= MB64 / 2, env .. ": " .. out)
    end
  end)
end)
