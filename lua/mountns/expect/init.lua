--- expect: assertions on what the kernel did, with diagnostics.
-- Each assertion raises an error whose text shows the mount tables of
-- every namespace involved (paths, IDs, propagation, peer group, master)
-- with the offending lines marked `>>`. Each also has a `check` form in
-- `expect.checks` returning `ok, diagnostic, invalid` (used by
-- mountns.luassert; invalid: it holds neither way). A bad argument raises a
-- usage error at the caller's line in every form and both polarities.
-- Paths and names in a diagnostic are escaped as `mountns.escape` does: a
-- crafted mount point cannot forge a line of it.
--
-- A mount is named by a path (the topmost mount there, as `find` answers)
-- or by a record from `ns:mounts()`, `find_all`, `t:stack` or `t:under`
-- (that very mount, also one below the top of a stack): `{ns, "/X"}` and
-- `{ns, record}` are both accepted wherever a mount is named.
--
-- A package, its parts lowest first: `diagnostic` (the text of a failed
-- check), `arguments` (one validation for both polarities and both
-- faces, the mounts the arguments name), then the checks: `tables`
-- (mounted, stack, order, count), `propagation` (propagation, peers,
-- slave_of, propagate_from, locked) and `events` (fails, propagates).
-- This file is the public face: `expect.checks` and the assertions.
-- @module mountns.expect

local format = require "mountns.format"
-- a failed check raises its diagnostic marked "fail": a report tells it
-- from an error (mountns.verdict)
local verdict = require "mountns.verdict"
local diagnostic = require "mountns.expect.diagnostic"
local tables = require "mountns.expect.tables"
local propagation = require "mountns.expect.propagation"
local events = require "mountns.expect.events"

local M = {}
-- every check, one table: the parts' own
local checks = {}
for _, part in ipairs { tables, propagation, events } do
  for k, v in pairs(part) do
    if type(v) == "function" then checks[k] = v end
  end
end
M.checks = checks
M.diagnostic = diagnostic.diagnostic
M.OPTION_WORDS = tables.OPTION_WORDS

-- ---- the assertions -------------------------------------------------------------

--- Run a check for one of its faces (expect's assertions, mountns.luassert):
-- its results (ok, diagnostic, invalid and one more), its usage error
-- raised again at `level` (as `error` counts it from the caller of run).
-- A check raises its usage errors at its caller: here that is pcall, a C
-- function, so the message comes without a position (on every Lua) and
-- gets the face's caller's one; any other error passes as it was.
-- @tparam function check one of `expect.checks`
-- @tparam int level
-- @param ... the check's arguments
function M.run(check, level, ...)
  local ok, a, b, c, d = pcall(check, ...)
  if not ok then
    if type(a) == "string" and a:find("^bad argument #%d+ to '") then error(a, level + 1) end
    error(a, 0)
  end
  return a, b, c, d
end
local run = M.run

local function assertion(check, negate)
  return function(...)
    local ok, diag, invalid = run(check, 2, ...)
    if negate then ok = not ok end
    if invalid then ok = false end
    if not ok then verdict.raise("fail", diag(negate), 2) end
    return true
  end
end

--- expect.mounted(ns, path [, fields]): a mount exists at path in ns (the
-- topmost one, as `find` answers; or the mount a record names). `fields`
-- says which mount: each given one must match, `source`, `fstype`, `root`
-- (strings), `options` (a comma string or list: every one present, `ro`/
-- `rw` in the mount's options, others in its or its superblock's; each
-- a word of `expect.OPTION_WORDS` or KEY=VALUE), `parent` (a path or
-- record: the mount it is mounted on; not mounted: fails both ways).
M.mounted = assertion(checks.mounted)
--- expect.not_mounted(ns, path [, fields]): no mount at path (with fields:
-- the mount there is not that one).
M.not_mounted = assertion(checks.mounted, true)
--- expect.propagation(ns, path, kind [, details]): "shared", "slave",
-- "shared,slave", "private", "unbindable"... (`mountns.record.PROPAGATIONS`:
-- another word raises, naming them); `details.master` and
-- `details.propagate_from` (a peer group ID or `{ns, path}` of a shared
-- mount) say whose slave it is.
M.propagation = assertion(checks.propagation)
--- expect.peers({ns, path}, {ns, path}, ...): all in one peer group (two
-- mounts at least, no mount twice).
M.peers = assertion(checks.peers)
--- expect.not_peers(a, b): a and b are not in one peer group.
M.not_peers = assertion(checks.peers, true)
--- expect.slave_of({ns, path}, {ns, path}): the first's master is the
-- second's peer group.
M.slave_of = assertion(checks.slave_of)
--- expect.propagate_from({ns, path}, {ns2, path2}): the first's
-- `propagate_from` (the nearest dominating peer group, which the kernel
-- shows only when it differs from the master) is the second's peer group.
M.propagate_from = assertion(checks.propagate_from)

--- expect.locked(ns, path): the mount is locked in ns (it came from a more
-- privileged namespace: it cannot be unmounted or moved apart from its parent).
M.locked = assertion(checks.locked)
--- expect.not_locked(ns, path)
M.not_locked = assertion(checks.locked, true)

--- expect.stack(ns, path, {"srcA", "srcC"}): the mounts stacked at path
-- (the stack path lookup reaches, `t:stack`), bottom to top, by source.
M.stack = assertion(checks.stack)
--- expect.order(ns, {"/a", "/a/1", "/b"}): these mounts (paths or records)
-- appear in this order in the namespace's mountinfo.
M.order = assertion(checks.order)
--- expect.count(ns, path, n): n mounts at or below path (`t:under`).
M.count = assertion(checks.count)

--- expect.golden(expected_text, ns1, ns2, ... [, {source = true}]): the
-- namespaces' tables, normalised together and formatted in the seed
-- article's style (a blank line between namespaces), equal the text; a
-- mismatch shows a line diff. See mountns.format.golden.
M.golden = format.golden -- (not a tail call: it raises at its caller's line)

--- expect.golden_mountinfo(text, [rewrite,] ns1, ns2, ...): the namespaces
-- equal mountinfo lines pasted from a real run (a block per namespace,
-- blank lines between), after `normalize` and a path rewrite
-- (`{["/tmp/W"] = "/"}`: lines under no key are dropped); a mismatch shows
-- a unified diff. See mountns.format.check_golden_mountinfo.
checks.golden_mountinfo = format.check_golden_mountinfo
M.golden_mountinfo = assertion(checks.golden_mountinfo)

--- expect.fails(ename, fn, ...): fn raises an error whose message names
-- that errno ("(EINVAL)"), or returns nil and such a message as the core
-- calls do. Returns the message. A failure shows the tables of the
-- namespaces among the arguments (or held by fn), the paths marked.
function M.fails(ename, fn, ...)
  local ok, diag, _, msg = run(checks.fails, 2, ename, fn, ...)
  if not ok then verdict.raise("fail", diag(false), 2) end
  return msg
end

--- expect.propagates(event_fn, {ns, path [, kind]}, ...): running event_fn
-- produces exactly these mount events (kind "attach" by default, or
-- "detach", "change") in the namespaces named, and no other event there.
-- `{ns}` alone watches a namespace that must see nothing; a table without
-- [1] holds options (`fallback = true`: poll and diff instead of fanotify).
-- On mismatch: expected, received, missing and unexpected events, then the
-- tables. Returns the received events. See mountns.watch.
function M.propagates(event_fn, ...)
  local ok, diag, _, received = run(checks.propagates, 2, event_fn, ...)
  if not ok then verdict.raise("fail", diag(), 2) end
  return received
end

return M
