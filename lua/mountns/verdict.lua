--- mountns.verdict: what ended a scenario, the one home of its statuses.
-- A report tells a failed check from a crash and from a timeout, and a
-- skip from all three, so the value a scenario raises says which it was,
-- in every process it crosses (the scenario's child, the script's process
-- under `mountns run`, the runner):
--
-- - "pass": it returned;
-- - "fail": a check failed (`mountns.expect`, a luassert assertion,
--   `run --both`'s difference): busted's failure objects (their
--   metatable's `__type` is "failure") and the strings `raise` marked;
-- - "error": anything else it raised (a bad call, a crash, an early exit);
-- - "timeout": it ran past its timeout (isolate, the model's hook, the
--   runner) and was killed or stopped;
-- - "skip": `mountns.skip(reason)`, or busted's `pending` (both raise an
--   object whose metatable's `__type` is "pending").
--
-- The errors stay strings where they were strings (a caller's `pcall` of
-- `expect.mounted` gets its message as before): a string is marked with
-- its status when it is raised, and `status_of` knows the last one marked
-- in this process. Pure Lua, no module of mountns below it: the model
-- (which runs without the C core) and expect use it too.
-- @module mountns.verdict

local M = {}

--- The statuses, in the order reports list them.
M.STATUSES = { "pass", "fail", "error", "timeout", "skip" }

local KNOWN = {}
for _, s in ipairs(M.STATUSES) do KNOWN[s] = true end

--- Whether s is one of `STATUSES`.
-- @param s
-- @treturn boolean
function M.is_status(s)
  return KNOWN[s] == true
end

-- the last string raised with a status in this process, and its status
local marked, marked_status

--- Mark msg (a string) as raised with status: `status_of(msg)` is status
-- until another string is marked.
-- @tparam string status "fail", "timeout" or "skip"
-- @tparam string msg
-- @treturn string msg
function M.mark(status, msg)
  marked, marked_status = msg, status
  return msg
end

--- Raise msg (a string) with status, positioned as `error(msg, level)` at
-- the caller would (level 0: no position), marked (`mark`).
-- @tparam string status
-- @tparam string msg
-- @tparam[opt=1] int level
function M.raise(status, msg, level)
  level = level or 1
  if level > 0 then
    -- error's own position: 2 more for this function and pcall
    local _, positioned = pcall(error, msg, level + 2)
    msg = positioned
  end
  error(M.mark(status, msg), 0)
end

local SKIP = { __type = "pending", __tostring = function(e) return e.message end }

--- busted's `pending` of the test running now (it raises busted's own
-- pending object), or nil when busted is not loaded. busted exports no
-- function that raises a pending (its API's `pending` declares a pending
-- test): the one a test calls is in the environment busted gives the
-- spec's functions, which looks `pending` up in the running block. So the
-- first function on the stack with an environment of its own (not _G)
-- is asked.
-- @treturn ?function
function M.busted_pending()
  if package.loaded.busted == nil then return nil end
  local getfenv = rawget(_G, "getfenv") -- Lua 5.1, LuaJIT
  for level = 2, 200 do
    local info = debug.getinfo(level, "fS")
    if not info then return nil end
    local env
    if info.what == "Lua" then
      if getfenv then
        env = getfenv(info.func)
      else
        for i = 1, 255 do
          local name, v = debug.getupvalue(info.func, i)
          if name == nil then break end
          if name == "_ENV" then env = v; break end
        end
      end
    end
    if type(env) == "table" and env ~= _G then
      local ok, pending = pcall(function() return env.pending end)
      return ok and type(pending) == "function" and pending or nil
    end
  end
end

--- Skip the running scenario: it ends here, reported as skipped (SKIP,
-- `# SKIP` in TAP, `skipped` in JUnit), which does not fail the run. Under
-- busted the spec becomes pending. Outside a scenario under `mountns run`,
-- the rest of the file is skipped. Elsewhere it is an error with the reason.
-- @tparam[opt] string reason
function M.skip(reason)
  if reason ~= nil and type(reason) ~= "string" then
    error("bad argument #1 to 'skip' (string expected, got " .. type(reason) .. ")", 2)
  end
  -- under busted: busted's pending object, which busted counts as one
  local pending = M.busted_pending()
  if pending then pending(reason or "skipped") end
  error(setmetatable({ message = reason or "skipped" }, SKIP), 0)
end

--- What ended a scenario that raised e: "fail", "skip", "timeout" or "error".
-- @param e the error value
-- @treturn string
function M.status_of(e)
  local mt = type(e) == "table" and getmetatable(e)
  if type(mt) == "table" then
    local kind = rawget(mt, "__type")
    if kind == "failure" then return "fail" end
    if kind == "pending" then return "skip" end
  end
  if e ~= nil and e == marked then return marked_status end
  return "error"
end

return M
