-- The mountinfo parser: the seed article's samples restored to full lines,
-- escapes, every optional field, real mountinfo written by the kernel in
-- isolated children, and text that is not mountinfo (never a crash, always
-- "line N: why"). Also the regressions the fuzzers (fuzz/) turned up.
local mountns = require "mountns"
local core = require "mountns.core"
local helper = require "helper"

local isolate = mountns.isolate
local unpack = table.unpack or unpack -- luacheck: ignore

-- The article's `cat /proc/self/mountinfo | sed 's/ - .*//'` samples with
-- the trimmed tail put back: " - ext4 /dev/sdaN rw", N the device minor.
local function restore(trimmed)
  return (trimmed:gsub("([^\n]*) 8:(%d+) ([^\n]*)", function(a, minor, b)
    return a .. " 8:" .. minor .. " " .. b .. " - ext4 /dev/sda" .. minor .. " rw"
  end))
end

local SH1 = restore [[
61 0 8:2 / / rw,relatime
81 61 8:3 / /X rw,relatime shared:1
124 61 8:5 / /Y rw,relatime shared:2
228 61 8:3 / /Z rw,relatime shared:1
]]

local SH2 = restore [[
147 146 8:2 / / rw,relatime
221 147 8:3 / /X rw,relatime shared:1
224 147 8:5 / /Y rw,relatime shared:2
]]

local function ids(records)
  local out = {}
  for i, m in ipairs(records) do out[i] = m.id end
  return out
end

local function lines_of(text)
  local n = 0
  for _ in text:gmatch("[^\n]*\n") do n = n + 1 end
  return n
end

-- Rows of a mount table's __tostring: target (tree glyphs cut), id,
-- parent, propagation, peer group ("" if none).
local function tree_rows(t)
  local rows = {}
  for line in tostring(t):gmatch("[^\n]+") do
    local glyphs, target, id, parent, prop, group = line:match(
      "^(%S-)(/%S*)%s+%S*%s+%S+%s+(%d+)%s+(%d+)%s+(%S+)%s*(%d*)")
    if id then
      rows[#rows + 1] = { glyphs = glyphs, target = target, id = tonumber(id),
        parent = tonumber(parent), propagation = prop, group = group }
    end
  end
  return rows
end

local function parse_ok(text)
  local t, err = mountns.parse_mountinfo(text)
  assert(t, err)
  return t
end

describe("mountinfo parser", function()
  local host_before
  setup(function() host_before = helper.host_mountinfo() end)
  teardown(function()
    assert.are.equal(host_before, helper.host_mountinfo())
  end)

  describe("the seed article's samples, restored to full lines", function()
    it("restores each line with the device of its minor number", function()
      assert.are.equal("81 61 8:3 / /X rw,relatime shared:1 - ext4 /dev/sda3 rw",
        SH1:match("81 [^\n]*"))
      assert.are.equal(4, lines_of(SH1))
      assert.are.equal(3, lines_of(SH2))
    end)

    it("sh1: IDs, parents, devices, peer groups 1 and 2, private root", function()
      local t = parse_ok(SH1)
      assert.are.same({ 61, 81, 124, 228 }, ids(t))
      local want = {
        { 61, 0, 2, "/", nil, "private" },
        { 81, 61, 3, "/X", 1, "shared" },
        { 124, 61, 5, "/Y", 2, "shared" },
        { 228, 61, 3, "/Z", 1, "shared" },
      }
      for i, w in ipairs(want) do
        local m = t[i]
        assert.are.equal(w[1], m.id)
        assert.are.equal(w[2], m.parent_id)
        assert.are.equal(8, m.major)
        assert.are.equal(w[3], m.minor)
        assert.are.equal("/", m.root)
        assert.are.equal(w[4], m.target)
        assert.are.equal("rw,relatime", m.options)
        assert.are.equal("ext4", m.fstype)
        assert.are.equal("/dev/sda" .. w[3], m.source)
        assert.are.equal("rw", m.super_options)
        assert.are.equal(w[5], m.shared)
        assert.is_nil(m.master)
        assert.is_nil(m.propagate_from)
        assert.is_false(m.unbindable)
        assert.are.equal(w[6], m.propagation)
      end
    end)

    it("sh1: find, by_id, peers and children", function()
      local t = parse_ok(SH1)
      assert.are.equal(81, t:find("/X").id)
      assert.are.equal(228, t:find("/Z").id)
      assert.is_nil(t:find("/nope"))
      assert.are.equal("/Y", t:by_id(124).target)
      assert.is_nil(t:by_id(146))
      assert.are.same({ 228 }, ids(t:peers("/X")))
      assert.are.same({ 81 }, ids(t:peers(t:by_id(228))))
      assert.are.same({}, ids(t:peers("/Y")))
      assert.are.same({}, ids(t:peers("/")))
      assert.are.same({ 81, 124, 228 }, ids(t:children("/")))
      assert.are.same({}, ids(t:children("/X")))
    end)

    it("sh1: __tostring draws the tree with propagation and groups", function()
      local rows = tree_rows(parse_ok(SH1))
      assert.are.equal(4, #rows)
      assert.are.same({ glyphs = "", target = "/", id = 61, parent = 0,
                        propagation = "private", group = "" }, rows[1])
      assert.are.same({ glyphs = "├─", target = "/X", id = 81, parent = 61,
                        propagation = "shared", group = "1" }, rows[2])
      assert.are.same({ glyphs = "├─", target = "/Y", id = 124, parent = 61,
                        propagation = "shared", group = "2" }, rows[3])
      assert.are.same({ glyphs = "└─", target = "/Z", id = 228, parent = 61,
                        propagation = "shared", group = "1" }, rows[4])
    end)

    it("sh2: the copies have new IDs and the same peer groups", function()
      local t1, t2 = parse_ok(SH1), parse_ok(SH2)
      assert.are.same({ 147, 221, 224 }, ids(t2))
      assert.are.equal(146, t2[1].parent_id)
      assert.are.equal("private", t2:find("/").propagation)
      assert.are.same({ 221, 224 }, ids(t2:children("/")))
      for _, p in ipairs { "/X", "/Y" } do
        assert.are_not.equal(t1:find(p).id, t2:find(p).id)
        assert.are.equal(t1:find(p).shared, t2:find(p).shared)
        assert.are.equal(t1:find(p).minor, t2:find(p).minor)
      end
      assert.are.equal(1, t2:find("/X").shared)
      assert.are.equal(2, t2:find("/Y").shared)
      assert.is_nil(t2:find("/Z"))
      -- the root's parent (146) is not in the table: it is the tree's root
      local rows = tree_rows(t2)
      assert.are.equal("", rows[1].glyphs)
      assert.are.equal(147, rows[1].id)
      assert.are.equal("└─", rows[3].glyphs)
    end)
  end)

  describe("fields", function()
    it("decodes \\040, \\011, \\012 and \\134 in every string field", function()
      local m = parse_ok("9 1 0:5 /r\\040o\\011o\\012t\\134 /t\\040a\\011r"
        .. "\\012g\\134 rw,x\\040y - f\\040s s\\040r\\134c o\\040p\n")[1]
      assert.are.equal("/r o\to\nt\\", m.root)
      assert.are.equal("/t a\tr\ng\\", m.target)
      assert.are.equal("s r\\c", m.source)
      assert.are.equal("f s", m.fstype)
      assert.are.equal("rw,x y", m.options)
      assert.are.equal("o p", m.super_options)
    end)

    it("leaves a backslash that starts no octal escape alone", function()
      local m = parse_ok("9 1 0:5 \\04 \\0400\\9 rw - t \\x o\n")[1]
      assert.are.equal("\\04", m.root)
      assert.are.equal(" 0\\9", m.target)
      assert.are.equal("\\x", m.source)
    end)

    it("reads every kind of optional field", function()
      local t = parse_ok(table.concat({
        "1 0 0:1 / / rw - tmpfs a rw",
        "2 1 0:2 / /s rw shared:1 - tmpfs b rw",
        "3 1 0:2 / /m rw master:1 - tmpfs c rw",
        "4 1 0:2 / /p rw master:1 propagate_from:7 - tmpfs d rw",
        "5 1 0:3 / /u rw unbindable - tmpfs e rw",
        "6 1 0:2 / /sm rw shared:4 master:1 - tmpfs f rw",
        "7 1 0:2 / /f rw future:9 shared:2 unbindablex - tmpfs g rw",
        "2147483647 7 4095:1048575 / /max rw shared:2147483647 - tmpfs h rw",
      }, "\n"))
      local function fields(m)
        return { m.shared, m.master, m.propagate_from, m.unbindable, m.propagation }
      end
      assert.are.same({ nil, nil, nil, false, "private" }, fields(t:find("/")))
      assert.are.same({ 1, nil, nil, false, "shared" }, fields(t:find("/s")))
      assert.are.same({ nil, 1, nil, false, "slave" }, fields(t:find("/m")))
      assert.are.same({ nil, 1, 7, false, "slave" }, fields(t:find("/p")))
      assert.are.same({ nil, nil, nil, true, "unbindable" }, fields(t:find("/u")))
      assert.are.same({ 4, 1, nil, false, "shared,slave" }, fields(t:find("/sm")))
      -- proc(5): unknown tags are skipped; "unbindablex" is not "unbindable"
      assert.are.same({ 2, nil, nil, false, "shared" }, fields(t:find("/f")))
      -- the kernel shows none of these, but a word never drops a flag
      local combos = parse_ok(table.concat({
        "8 1 0:2 / /mu rw master:3 unbindable - tmpfs a rw",
        "9 1 0:2 / /su rw shared:5 unbindable - tmpfs a rw",
        "10 1 0:2 / /smu rw shared:6 master:3 propagate_from:2 unbindable - t a rw",
      }, "\n"))
      assert.are.same({ nil, 3, nil, true, "slave,unbindable" }, fields(combos[1]))
      assert.are.same({ 5, nil, nil, true, "shared,unbindable" }, fields(combos[2]))
      assert.are.same({ 6, 3, 2, true, "shared,slave,unbindable" }, fields(combos[3]))
      local max = t:find("/max")
      assert.are.same({ 2147483647, 4095, 1048575, 2147483647 },
        { max.id, max.major, max.minor, max.shared })
    end)

    it("decodes ROOT from the text like TARGET (libmount stops at \\000)", function()
      local m = parse_ok("114 1 0:54 \\000\\000x \\000\\000x rw - tmpfs tmpfs rw\n")[1]
      assert.are.equal("\0\0x", m.root)
      assert.are.equal(m.root, m.target)
    end)

    it("keeps an nsfs root such as mnt:[4026531841]", function()
      local m = parse_ok("700 66 0:4 mnt:[4026531841] /tmp/ns rw - nsfs nsfs rw\n")[1]
      assert.are.equal("mnt:[4026531841]", m.root)
      assert.are.equal("nsfs", m.fstype)
      assert.are.equal(0, m.major)
      assert.are.equal(4, m.minor)
    end)

    it("keeps a /dev/root source as written (libmount rewrites it)", function()
      -- libmount turns /dev/root into the device that has these numbers on
      -- the machine that parses the text: use the host's root device so the
      -- rewrite would happen here
      local root = assert(mountns.mountinfo()):find("/")
      local line = string.format("1 0 %d:%d / / rw - ext4 /dev/root rw\n",
        root.major, root.minor)
      assert.are.equal("/dev/root", parse_ok(line)[1].source)
    end)

    it("reads an empty source (mount with source \"\")", function()
      local m = parse_ok("10 1 0:5 / /e rw - tmpfs  rw\n")[1]
      assert.are.equal("", m.source)
      assert.are.equal("tmpfs", m.fstype)
      assert.are.equal("rw", m.super_options)
    end)

    it("keeps \" (deleted)\" in a target, as the kernel wrote it", function()
      local m = parse_ok("11 1 0:5 / /k\\040(deleted) rw - tmpfs t rw\n")[1]
      assert.are.equal("/k (deleted)", m.target)
    end)

    it("reads CRLF text like LF text; blank lines are no records", function()
      local crlf = SH1:gsub("\n", "\r\n")
      local a, b = parse_ok(SH1), parse_ok("\n\r\n" .. crlf .. "\r\n\n")
      assert.are.equal(#a, #b)
      for i = 1, #a do assert.are.same(a[i], b[i]) end
      assert.are.same({}, { unpack(parse_ok("")) })
      assert.are.same({}, { unpack(parse_ok("\n\n\r\n")) })
    end)
  end)

  describe("the propagation word and findmnt's PROPAGATION column", function()
    -- findmnt (misc-utils/findmnt.c) prints "shared" or "private", then
    -- ",slave", then ",unbindable"; mountns drops its "private," prefix
    local function findmnt_word(word)
      if word == "private" or word:match("^shared") then return word end
      return "private," .. word
    end
    -- findmnt's PROPAGATION by mount ID
    local function findmnt_column(args)
      local out = {}
      for id, word in helper.sh("findmnt -r -n -o ID,PROPAGATION " .. args)
          :gmatch("(%d+) (%S+)") do
        out[tonumber(id)] = word
      end
      return out
    end

    it("matches findmnt for all eight combinations of optional fields", function()
      local tags = { "", "shared:1", "master:2", "shared:3 master:2", "unbindable",
        "shared:4 unbindable", "master:2 unbindable", "shared:5 master:2 unbindable" }
      local lines = {}
      for i, tag in ipairs(tags) do
        lines[i] = string.format("%d 1 0:%d / /m%d rw%s - tmpfs t rw", i, i, i,
          tag == "" and "" or " " .. tag)
      end
      local text = table.concat(lines, "\n") .. "\n"
      local file = os.tmpname()
      local f = assert(io.open(file, "w"))
      f:write(text)
      f:close()
      local ok, column = pcall(findmnt_column, "-F " .. file)
      os.remove(file)
      assert(ok, column)
      local words, n = {}, 0
      for _, m in ipairs(parse_ok(text)) do
        assert.are.equal(column[m.id], findmnt_word(m.propagation))
        if not words[m.propagation] then n = n + 1 end
        words[m.propagation] = true
      end
      assert.are.equal(8, n)
    end)

    it("matches findmnt on every mount of a namespace with every kind", function()
      local column, t = isolate(function()
        helper.propagation_kinds(helper.sandbox())
        return findmnt_column(""), assert(mountns.mountinfo())
      end)
      local kinds = {}
      for _, m in ipairs(t) do
        assert.are.equal(column[m.id], findmnt_word(m.propagation))
        kinds[m.propagation] = true
      end
      for _, k in ipairs { "private", "shared", "slave", "shared,slave", "unbindable" } do
        assert.is_true(kinds[k], k)
      end
    end)
  end)

  describe("real mountinfo written by the kernel", function()
    it("the host's: one record per line, the same IDs in order", function()
      local text = helper.host_mountinfo()
      local t = assert(mountns.mountinfo())
      assert.are.equal(lines_of(text), #t)
      local i = 0
      for id, parent in text:gmatch("(%d+) (%d+) [^\n]*\n") do
        i = i + 1
        assert.are.equal(tonumber(id), t[i].id)
        assert.are.equal(tonumber(parent), t[i].parent_id)
      end
      assert.are.equal(#t, #assert(mountns.mountinfo(core.getpid())))
      assert.are.equal(#t, #assert(mountns.parse_mountinfo(core.read_mountinfo())))
    end)

    it("every propagation kind, read back from the kernel", function()
      local raw, records = isolate(function()
        helper.propagation_kinds(helper.sandbox())
        return core.read_mountinfo(), assert(mountns.mountinfo())
      end)
      local t = mountns.table.new(records) -- isolate returns plain tables
      assert.are.equal(lines_of(raw), #t)
      local sh = t:find("/tmp/mns/sh")
      local ss = t:find("/tmp/mns/ss")
      assert.are.equal("shared", sh.propagation)
      assert.are.same({ t:find("/tmp/mns/peer").id }, ids(t:peers(sh)))
      assert.are.equal("slave", t:find("/tmp/mns/sl").propagation)
      assert.are.equal(sh.shared, t:find("/tmp/mns/sl").master)
      assert.are.equal("shared,slave", ss.propagation)
      assert.are.equal(sh.shared, ss.master)
      assert.are_not.equal(sh.shared, ss.shared)
      assert.is_true(t:find("/tmp/mns/ub").unbindable)
      -- each record agrees with its line as the kernel wrote it
      local line = raw:match("[^\n]* /tmp/mns/ss [^\n]*")
      assert.truthy(line:find(" shared:" .. ss.shared .. " master:" .. sh.shared .. " - ", 1, true))
    end)

    it("paths with space, tab, newline, backslash and non-UTF-8 bytes", function()
      local names = { "sp ace", "t\tab", "new\nline", "back\\slash", "\255\254x" }
      local raw, got = isolate(function()
        local base = helper.sandbox()
        local out = {}
        for i, name in ipairs(names) do
          local p = base .. "/" .. name
          assert(mountns.mkdir(p))
          assert(mountns.mount("src " .. name, p, "tmpfs"))
          out[i] = assert(mountns.mountinfo()):find(p)
        end
        return core.read_mountinfo(), out
      end)
      for i, name in ipairs(names) do
        assert.are.equal("/tmp/mns/" .. name, got[i].target)
        assert.are.equal("src " .. name, got[i].source)
      end
      -- the kernel escaped them: no raw tab, one line per mount
      assert.is_nil(raw:find("\t", 1, true))
      assert.truthy(raw:find("/tmp/mns/new\\012line", 1, true))
    end)

    it("an empty source, an nsfs bind and a bind of a deleted file", function()
      local e, ns, del, uts = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mkdir(base .. "/e"))
        assert(mountns.mount("", base .. "/e", "tmpfs"))
        for _, f in ipairs { "/ns", "/a", "/b" } do
          assert(io.open(base .. f, "w")):close()
        end
        -- a mount ns file binds only into an older namespace: use uts's
        assert(mountns.bind("/proc/self/ns/uts", base .. "/ns"))
        assert(mountns.bind(base .. "/a", base .. "/b"))
        assert(os.remove(base .. "/a"))
        local t = assert(mountns.mountinfo())
        return t:find(base .. "/e"), t:find(base .. "/ns"), t:find(base .. "/b"),
          helper.sh("readlink /proc/self/ns/uts")
      end)
      assert.are.equal("", e.source)
      assert.are.equal("tmpfs", e.fstype)
      assert.are.equal("nsfs", ns.fstype)
      assert.are.equal(uts, ns.root)
      assert.are.equal("/mns/a//deleted", del.root)
    end)
  end)

  describe("super options with raw spaces (real kernel output)", function()
    -- fs/proc_namespace.c show_mountinfo escapes every field up to SOURCE
    -- but leaves SUPER_OPTIONS to the filesystem; some print values raw
    local WSL = "1146 77 0:149 / /Docker/host rw,noatime - 9p drvfs rw,dirsync,"
      .. "aname=drvfs;path=C:\\Program Files\\Docker\\Docker\\resources;"
      .. "symlinkroot=/mnt/,mmap,access=client,msize=262144,trans=virtio"
    local CIFS = "31 21 0:23 / /DATA/foo rw,relatime - cifs //foo/BLA\\040BLA/ "
      .. "rw,sec=ntlm,unc=\\\\foo\\BLA BLA,username=me,uid=0"

    it("9p on WSL 2 with Docker Desktop: the whole tail is the super options", function()
      local m = parse_ok(WSL)[1]
      assert.are.equal("9p", m.fstype)
      assert.are.equal("drvfs", m.source)
      assert.are.equal("/Docker/host", m.target)
      assert.are.equal("rw,dirsync,aname=drvfs;path=C:\\Program Files\\Docker"
        .. "\\Docker\\resources;symlinkroot=/mnt/,mmap,access=client,"
        .. "msize=262144,trans=virtio", m.super_options)
    end)

    it("cifs before Linux 3.10: unc= raw, SOURCE escaped", function()
      local m = parse_ok(CIFS)[1]
      assert.are.equal("//foo/BLA BLA/", m.source)
      assert.are.equal("rw,sec=ntlm,unc=\\\\foo\\BLA BLA,username=me,uid=0",
        m.super_options)
    end)

    it("one such line no longer refuses the whole table", function()
      local t = parse_ok(table.concat({ SH1, WSL, CIFS, SH2 }, "\n"))
      assert.are.same({ 61, 81, 124, 228, 1146, 31, 147, 221, 224 }, ids(t))
      assert.are.equal("drvfs", t:by_id(1146).source)
      assert.are.equal("/X", t:by_id(221).target)
    end)

    it("decodes escapes there too; an empty SOURCE still reads", function()
      local m = parse_ok("9 1 0:5 / /e rw - tmpfs  rw,a\\040b c d\n")[1]
      assert.are.equal("", m.source)
      assert.are.equal("rw,a b c d", m.super_options)
    end)

    it("still refuses a leading or trailing space and a raw tab there", function()
      local t, err = mountns.parse_mountinfo("9 1 0:5 / /e rw - tmpfs a  rw\n")
      assert.is_nil(t)
      assert.are.equal("line 1: empty field (double space)", err)
      t, err = mountns.parse_mountinfo("9 1 0:5 / /e rw - tmpfs a rw x \n")
      assert.is_nil(t)
      assert.are.equal("line 1: trailing space", err)
      t, err = mountns.parse_mountinfo("9 1 0:5 / /e rw - tmpfs a rw x\ty\n")
      assert.is_nil(t)
      assert.are.equal("line 1: raw tab in line (the kernel writes \\011)", err)
    end)
  end)

  describe("text that is not mountinfo", function()
    local function refuses(text, lineno, why)
      local t, err = mountns.parse_mountinfo(text)
      assert.is_nil(t)
      assert.are.equal("line " .. lineno .. ": " .. why, err)
    end
    local good = "61 0 8:2 / / rw,relatime - ext4 /dev/sda2 rw"

    it("garbage", function()
      refuses("garbage", 1, "mount ID is not a number")
      refuses("Hello, world!\n", 1, "mount ID is not a number")
      refuses("\255\254\253\n", 1, "mount ID is not a number")
      refuses("  \n", 1, "empty field (double space)")
    end)

    it("fstab format, which libmount would guess and accept", function()
      refuses("/dev/sda1 / ext4 rw,relatime 0 1\n", 1, "mount ID is not a number")
      refuses("1 2 ext4 rw 0 0\n", 1, "device is not MAJOR:MINOR")
      refuses(good .. "\n/dev/sda1 / ext4 rw 0 1\n", 2, "mount ID is not a number")
    end)

    it("truncated lines, cut at every field", function()
      local want = {
        [2] = "too few fields",             -- "61"
        [4] = "too few fields",             -- "61 0"
        [5] = "trailing space",             -- "61 0 "
        [7] = "device is not MAJOR:MINOR",  -- "61 0 8:"
        [8] = "too few fields",             -- "61 0 8:2"
        [24] = "no ' - ' separator after the optional fields",
        [26] = "expected FSTYPE SOURCE SUPER_OPTIONS after ' - '",
        [31] = "expected FSTYPE SOURCE SUPER_OPTIONS after ' - '",
        [41] = "expected FSTYPE SOURCE SUPER_OPTIONS after ' - '",
        [42] = "trailing space",
      }
      for cut, why in pairs(want) do refuses(good:sub(1, cut) .. "\n", 1, why) end
      -- every cut but the last byte's is refused (one that drops the
      -- last byte leaves super options "r": a real line)
      for cut = 1, #good - 2 do
        assert.is_nil(mountns.parse_mountinfo(good:sub(1, cut)))
      end
      refuses(good .. "\n" .. good:sub(1, 30), 2,
        "expected FSTYPE SOURCE SUPER_OPTIONS after ' - '")
    end)

    it("a missing ' - ' separator, or too few fields after it", function()
      refuses("61 0 8:2 / / rw,relatime ext4 /dev/sda2 rw\n", 1,
        "no ' - ' separator after the optional fields")
      refuses("61 0 8:2 / / - ext4 /dev/sda2\n", 1,
        "no ' - ' separator after the optional fields")
      refuses("61 0 8:2 / / rw - ext4\n", 1,
        "expected FSTYPE SOURCE SUPER_OPTIONS after ' - '")
      -- no "too many fields": the words after SOURCE are all super options
      assert.are.equal("rw extra", parse_ok(good .. " extra\n")[1].super_options)
    end)

    it("names the first defect, reading the line left to right", function()
      -- each line has two defects; the first one is named
      refuses("x 0 8:2 / / rw - a b c\td\n", 1, "mount ID is not a number")
      refuses("1 0 8:2 / /x  rw - a b c\0\n", 1, "empty field (double space)")
      refuses("1 0 8:2 /\0 /x rw shared:0 - a b c\n", 1, "NUL byte in line")
      refuses("1 0 8:2 / /x rw shared:0 - a b c\td\n", 1,
        "optional field without a peer group ID >= 1")
      refuses("1 0 8:2 / /x rw shared:0 master:1x - a\tb c\n", 1,
        "optional field without a peer group ID >= 1")
      refuses("1 0 8:2 / /x rw - a\tb  c\n", 1,
        "raw tab in line (the kernel writes \\011)")
    end)

    it("NUL bytes, raw tabs, double and trailing spaces", function()
      refuses(good .. "\n61 0 8:2 / /\0x rw - ext4 a rw\n", 2, "NUL byte in line")
      refuses("\0", 1, "NUL byte in line")
      -- libmount splits at a tab: "/\t/y /x" would become target /y
      refuses("1 0 8:2 /\t/y /x rw - a b c\n", 1,
        "raw tab in line (the kernel writes \\011)")
      refuses("1 0 8:2 / /x  rw - a b c\n", 1, "empty field (double space)")
      refuses("1 0 8:2 / /x rw -  b c\n", 1, "empty field (double space)")
      refuses(good .. " \n", 1, "trailing space")
      refuses(good .. " \r\n", 1, "trailing space")
    end)

    it("IDs that are not int, bad peer group IDs", function()
      refuses("2147483648 0 8:2 / / rw - a b c\n", 1, "mount ID is not a number")
      refuses("-1 0 8:2 / / rw - a b c\n", 1, "mount ID is not a number")
      refuses("1 x 8:2 / / rw - a b c\n", 1, "parent ID is not a number")
      refuses("1 0 8:2:1 / / rw - a b c\n", 1, "device is not MAJOR:MINOR")
      for _, f in ipairs { "shared:0", "shared:-5", "master:", "master:1x",
                           "propagate_from:99999999999" } do
        refuses("1 0 8:2 / / rw " .. f .. " - a b c\n", 1,
          "optional field without a peer group ID >= 1")
      end
    end)

    it("a huge line: a 1 MB target parses, 1 MB of garbage does not", function()
      local target = "/" .. string.rep("a", 1024 * 1024)
      local t = parse_ok("1 0 8:1 / " .. target .. " rw - ext4 /dev/sda1 rw\n")
      assert.are.equal(target, t[1].target)
      refuses(good .. "\n" .. string.rep("x", 1024 * 1024) .. "\n", 2,
        "mount ID is not a number")
    end)

    it("thousands of lines, and a bad one among them", function()
      local lines = {}
      for i = 1, 5000 do
        lines[i] = string.format("%d 1 0:%d / /m%d rw shared:%d - tmpfs t rw",
          i + 1, i, i, i)
      end
      local t = parse_ok(table.concat(lines, "\n"))
      assert.are.equal(5000, #t)
      assert.are.equal(5001, t[5000].id)
      assert.are.equal("/m4321", t:by_id(4322).target)
      lines[4999] = "4999 1 0:1 / /bad rw"
      refuses(table.concat(lines, "\n"), 4999,
        "no ' - ' separator after the optional fields")
    end)

    it("wrong argument types raise", function()
      for _, v in ipairs { {}, true, print } do
        assert.has_error(function() mountns.parse_mountinfo(v) end)
      end
      assert.has_error(function() mountns.parse_mountinfo() end)
      assert.has_error(function() mountns.parse_mountinfo(nil) end)
      assert.has_error(function() mountns.mountinfo("self") end)
      -- a number is not text (Lua's C API would take it as one): refused
      assert.has_error(function() mountns.parse_mountinfo(42) end,
        "bad argument #1 to 'parse_mountinfo' (string expected, got number)")
    end)

    -- fd_count is exact: one fd kept by any call fails at once; 400 rounds
    -- take every cut of the good line (43 lengths) 9 times
    it("leaks no fd over hundreds of good and bad texts", function()
      local before = helper.fd_count()
      for i = 1, 400 do
        assert(mountns.parse_mountinfo(SH1))
        assert(mountns.mountinfo())
        assert.is_nil(mountns.parse_mountinfo(good:sub(1, i % (#good - 2) + 1)))
        assert.is_nil(mountns.mountinfo(999999999))
      end
      assert.are.equal(before, helper.fd_count())
    end)
  end)

  describe("fuzzer regressions (fuzz/README.md)", function()
    it("a line ending in ' \\r' is refused, not lost by libmount", function()
      -- mountinfo_fuzz: libmount drops the final \r and then finds no
      -- super options; the parser said "libmount could not parse it"
      local t, err = mountns.parse_mountinfo(
        "9 1 0:5 \167/r\\040o /t rt - tmpfs /dev/roow0r \r\n")
      assert.is_nil(t)
      assert.are.equal("line 1: trailing space", err)
    end)
  end)
end)

describe("the flag parser", function()
  local parse = core._parse_flags

  -- the error names the function as the call site does on 5.1 to 5.4:
  -- check the part after it
  local function raises(fn, ...)
    local ok, err = pcall(fn)
    assert.is_false(ok)
    for _, text in ipairs { ... } do
      assert.truthy(tostring(err):find(text, 1, true), tostring(err))
    end
  end

  it("gives the mask of a comma list or an array, no system call", function()
    assert.are.equal(1, parse("mount", "ro")) -- MS_RDONLY
    assert.are.equal(0, parse("mount", "rw"))
    assert.are.equal(0, parse("mount", "")) -- no flag
    -- an empty name in a list is a typo, not a flag left out (spec 32)
    raises(function() parse("mount", "rw,,") end, "empty flag name in 'rw,,'")
    assert.are.equal(0, parse("mount", nil))
    assert.are.equal(parse("mount", "ro") + parse("mount", "nosuid")
      + parse("mount", "nodev"), parse("mount", { "ro", "nosuid,nodev" }))
    assert.are.equal(parse("umount", "detach"), parse("umount", "lazy"))
  end)

  it("refuses a name with a NUL byte (it passed as its prefix)", function()
    -- "ro\0x" was read as "ro" by the C string functions
    raises(function() parse("mount", "ro\0x") end,
      "(unknown flag 'ro\\0x')")
    raises(function() parse("mount", { "nosuid", "\0" }) end,
      "(unknown flag '\\0')")
    -- the real call raises before its system call; isolated all the same
    raises(function()
      isolate(function()
        return mountns.mount("t", "/nonexistent", "tmpfs", "ro\0bogus")
      end)
    end, "bad argument #4 to '", "(unknown flag 'ro\\0bogus')")
  end)

  it("names the unknown kind, flag and type", function()
    raises(function() parse("nosuch", "ro") end, "(unknown flag set 'nosuch')")
    raises(function() parse("umount", { "detach", 7 }) end,
      "(flag #2 is a number, expected a string)")
    -- mount's flags take raw bits too (mountns.MS), never a fraction
    assert.are.equal(mountns.MS.RDONLY + 6, parse("mount", { "ro", 6 }))
    raises(function() parse("mount", { "ro", 1.5 }) end,
      "(flag #2: 1.5 is not a set of flag bits")
    raises(function() parse("umount", true) end,
      "(flags expected (comma string, list or set of names), got boolean)")
  end)
end)
