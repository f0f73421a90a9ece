-- model.paths: paths as the model's kernel walks them: lexical (the
-- model has no symlinks), absolute, normalised by mountns.table's
-- normpath, the one home of that rule.

local mtable = require "mountns.table"

local M = {}

local find, byte = string.find, string.byte

local function join(dir, name)
  return dir == "/" and "/" .. name or dir .. "/" .. name
end

-- Whether path is dir or below it (both normalised, absolute).
local is_subdir = mtable.is_under

-- path relative to dir, as an absolute path ("/X/a" in "/X" is "/a").
local function relative(path, dir)
  if dir == "/" then return path end
  if path == dir then return "/" end
  return path:sub(#dir + 1)
end

local function parent_dir(path)
  local p = path:match("^(.*)/[^/]*$")
  return (p == nil or p == "") and "/" or p
end

-- a path as the kernel walks it (lexically: the model has no symlinks);
-- p is a checked path (check_path: a string without NUL)
local function walkpath(p)
  if byte(p, 1) ~= 47 then -- "/"
    p = "/" .. p
  elseif not (find(p, "/.", 1, true) or find(p, "//", 1, true))
         and (byte(p, -1) ~= 47 or #p == 1) then
    return p -- normal already (no "//", no "." or ".." step, no trailing "/")
  end
  return mtable.normpath(p)
end

M.join, M.is_subdir, M.relative, M.parent_dir = join, is_subdir, relative, parent_dir
M.walkpath = walkpath

return M
