-- plumb's sysbench 1.0 API, the part written in Lua: the driver, connection,
-- statement and result objects a script holds, sysbench's error protocol (an error
-- the driver may ignore restarts the event: a table with errcode RESTART_EVENT), the
-- command-line helpers, and the legacy globals sysbench 1.0 still defines. What it
-- calls (`P`) is plumb's Rust (crates/sql/src/lua/api.rs): the wire clients, the
-- random generators. Facts from sysbench 1.0.20's documentation and sources; the
-- code is plumb's.
local P = ...
local exec = P.exec

sysbench.hooks = {}
sysbench.error = { NONE = 0, RESTART_EVENT = 1 }

local cmdline = sysbench.cmdline
cmdline.PARALLEL_COMMAND = true
cmdline.ARG_NULL, cmdline.ARG_BOOL, cmdline.ARG_INT, cmdline.ARG_SIZE = 0, 1, 2, 3
cmdline.ARG_DOUBLE, cmdline.ARG_STRING, cmdline.ARG_LIST, cmdline.ARG_FILE = 4, 5, 6, 7
cmdline.ARG_MAX = 8

function cmdline.command_defined(name)
   local c = cmdline.commands
   return type(c) == "table" and c[name] ~= nil and c[name][1] ~= nil
end

function cmdline.command_parallel(name)
   return cmdline.command_defined(name) and
      cmdline.commands[name][2] == cmdline.PARALLEL_COMMAND
end

function cmdline.call_command(name)
   if not cmdline.command_defined(name) then
      return false
   end
   local rc = cmdline.commands[name][1]()
   if rc == nil then
      return true
   end
   return rc and true or false
end

function cmdline.read_cmdline_options()
   return true
end

function cmdline.print_test_options()
end

-- sysbench.sql ---------------------------------------------------------------

local sql = {}
sysbench.sql = sql
sql.type = {
   NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5,
   DOUBLE = 6, TIME = 7, DATE = 8, DATETIME = 9, TIMESTAMP = 10, CHAR = 11,
   VARCHAR = 12,
}
sql.error = { NONE = 0, IGNORABLE = 1, FATAL = 2 }

local driver_m, connection_m, statement_m, result_m = {}, {}, {}, {}
local driver_mt = { __index = driver_m, __tostring = function() return "<sql_driver>" end }
local connection_mt = { __index = connection_m, __tostring = function() return "<sql_connection>" end }
local statement_mt = { __index = statement_m, __tostring = function() return "<sql_statement>" end }
local result_mt = { __index = result_m, __tostring = function() return "<sql_result>" end }

function sql.driver(name)
   return setmetatable({ sname = P.driver_name }, driver_mt)
end

function driver_m.name(self)
   return self.sname
end

function driver_m.connect(self)
   local c, err = P.connect()
   if c == nil then
      error("connection creation failed: " .. tostring(err), 2)
   end
   local con = setmetatable({ _c = c, _p = c:ptr(), error = sql.error.NONE, driver = self },
                            connection_mt)
   con._rs = setmetatable({ _con = con, nrows = 0, nfields = 0 }, result_mt)
   return con
end

-- A failed statement: an error the driver ignores (or the script's
-- sql_error_ignorable hook accepts) restarts the event; any other ends the run,
-- naming the script's line `level` frames up. Never called as a tail call: that would
-- drop the method's frame, and the level would name no line.
local function failed(con, query, errno, state, msg, ignorable, level)
   local errdesc = {
      connection = con, query = query, sql_errno = errno, sql_state = state,
      sql_errmsg = msg,
   }
   con.sql_errno, con.sql_state, con.sql_errmsg = errno, state, msg
   if ignorable then
      con.error = sql.error.IGNORABLE
   else
      con.error = sql.error.FATAL
   end
   if ignorable or (type(sysbench.hooks.sql_error_ignorable) == "function" and
                    sysbench.hooks.sql_error_ignorable(errdesc)) then
      errdesc.errcode = sysbench.error.RESTART_EVENT
      error(errdesc, level + 1)
   end
   error(string.format("SQL error, errno = %d, state = '%s': %s", errno, state, msg),
         level + 1)
end

local function result(con, n, f)
   con.error = sql.error.NONE
   local rs = con._rs
   rs.nrows, rs.nfields = n, f
   return rs
end

function connection_m.query(self, query)
   local n, f, state, msg, ign = self._c:query(query)
   if n == nil then
      failed(self, query, f, state, msg, ign, 2)
   end
   return result(self, n, f)
end

function connection_m.query_row(self, query)
   local rs = self:query(query)
   if rs == nil or rs.nrows == 0 then
      return nil
   end
   return unpack(rs:fetch_row(), 1, rs.nfields)
end

function connection_m.prepare(self, query)
   -- The statement, and its address for P.exec (or nil, errno, … on failure).
   local s, sp_or_errno, state, msg, ign = self._c:prepare(query)
   if s == nil then
      failed(self, query, sp_or_errno, state, msg, ign, 2)
   end
   return setmetatable({ _s = s, _sp = sp_or_errno, connection = self }, statement_mt)
end

function connection_m.bulk_insert_init(self, query)
   self._c:bulk_init(query)
   return true
end

function connection_m.bulk_insert_next(self, val)
   local ok, errno, state, msg, ign = self._c:bulk_next(val)
   if ok == nil then
      failed(self, "<bulk insert>", errno, state, msg, ign, 2)
   end
   return true
end

function connection_m.bulk_insert_done(self)
   local ok, errno, state, msg, ign = self._c:bulk_done()
   if ok == nil then
      failed(self, "<bulk insert>", errno, state, msg, ign, 2)
   end
   return true
end

function connection_m.disconnect(self)
   self._c:disconnect()
   return true
end

function connection_m.reconnect(self)
   local ok, err = self._c:reconnect()
   if not ok then
      error("reconnect failed: " .. tostring(err), 2)
   end
   return true
end

function connection_m.check_error(self, rs, query)
   return rs
end

function connection_m.more_results(self)
   return false
end

function connection_m.next_result(self)
   return nil
end

-- A parameter is a Lua table: `set` stores its value in Lua (no call into Rust per
-- value); `execute` hands the values over together.
local param_m = {}
local param_mt = { __index = param_m, __tostring = function() return "<sql_param>" end }
local INT, DOUBLE, TEXT = 1, 2, 3

function statement_m.bind_create(self, btype, max_len)
   local kind
   if btype == sql.type.TINYINT or btype == sql.type.SMALLINT or
      btype == sql.type.INT or btype == sql.type.BIGINT then
      kind = INT
   elseif btype == sql.type.FLOAT or btype == sql.type.DOUBLE then
      kind = DOUBLE
   elseif btype == sql.type.CHAR or btype == sql.type.VARCHAR then
      kind = TEXT
   else
      error("Unsupported argument type: " .. tostring(btype), 2)
   end
   return setmetatable({ kind = kind, max_len = max_len or 0 }, param_mt)
end

function param_m.set(self, value)
   if value == nil then
      self.value = nil
   elseif self.kind == TEXT then
      value = tostring(value)
      if #value > self.max_len then
         value = value:sub(1, self.max_len)
      end
      self.value = value
   else
      local n = tonumber(value)
      if n == nil then
         error("param:set(): " .. tostring(value) .. " is not a number", 2)
      end
      self.value = n
   end
end

function param_m.set_rand_str(self, fmt)
   if self.kind ~= TEXT then
      error("param:set_rand_str(): the parameter is not CHAR or VARCHAR", 2)
   end
   local value = sysbench.rand.string(fmt)
   if #value > self.max_len then
      value = value:sub(1, self.max_len)
   end
   self.value = value
end

function statement_m.bind_param(self, ...)
   local n = select("#", ...)
   local params, kinds = { ... }, {}
   for i = 1, n do
      kinds[i] = params[i].kind
   end
   self._p, self._n, self._v = params, n, {}
   self.connection._c:bind(self._s, unpack(kinds, 1, n))
   return 0
end

function statement_m.execute(self)
   local con = self.connection
   local p, n, v = self._p, self._n or 0, self._v
   for i = 1, n do
      v[i] = p[i].value
   end
   local r, f, state, msg, ign
   if n == 0 then
      r, f, state, msg, ign = exec(con._p, self._sp)
   elseif n == 1 then
      r, f, state, msg, ign = exec(con._p, self._sp, v[1])
   else
      r, f, state, msg, ign = exec(con._p, self._sp, unpack(v, 1, n))
   end
   if r == nil then
      failed(con, "<prepared statement>", f, state, msg, ign, 2)
   end
   return result(con, r, f)
end

function statement_m.next_result(self)
   return nil
end

function statement_m.close(self)
   self.connection._c:close(self._s)
   return 0
end

function result_m.fetch_row(self)
   return self._con._c:fetch_row()
end

function result_m.free(self)
   return true
end

-- sysbench.rand: the numbers a script draws per statement, in Lua -----------------

-- xorshift128 on 32-bit words (LuaJIT's bit library), seeded per thread by plumb;
-- 53 random bits per double, as sysbench's sb_rand_uniform_double.
local bxor, lshift, rshift = bit.bxor, bit.lshift, bit.rshift
local floor = math.floor
local sx, sy, sz, sw = P.seed[1], P.seed[2], P.seed[3], P.seed[4]

local function next32()
   local t = bxor(sx, lshift(sx, 11))
   sx, sy, sz = sy, sz, sw
   sw = bxor(bxor(sw, rshift(sw, 19)), bxor(t, rshift(t, 8)))
   return sw
end

local function double()
   local hi = next32() % 4294967296
   local lo = rshift(next32(), 11)
   return (hi * 2097152 + lo) / 9007199254740992
end

local opt = sysbench.opt
local rand = sysbench.rand
local iter = math.max(1, opt.rand_spec_iter or 12)
local pct = opt.rand_spec_pct or 1
local res_mult = 100 / (100 - (opt.rand_spec_res or 75))
local pareto_h = opt.rand_pareto_h or 0.2
local pareto_power = math.log(pareto_h) / math.log(1 - pareto_h)

function rand.uniform_double()
   return double()
end

function rand.uniform_uint64()
   return floor(double() * 9007199254740992)
end

function rand.uniform(a, b)
   return floor(a + double() * (b - a + 1))
end

function rand.gaussian(a, b)
   local t, sum = b - a + 1, 0
   for _ = 1, iter do
      sum = sum + double() * t
   end
   return a + floor(sum / iter)
end

-- sysbench's `special`: (100 - rand_spec_res)% of values gaussian over the range, the
-- rest uniform over rand_spec_pct% of it in the middle, from the same draw.
function rand.special(a, b)
   local t = b - a
   local rnd = double()
   if rnd * t * res_mult < t then
      local sum = 0
      for _ = 1, iter do
         sum = sum + double()
      end
      return floor(a + sum * t / iter)
   end
   local d = t * pct / 100
   return a + floor(rnd * (d + 1) + t / 2 - t * pct / 200)
end

function rand.pareto(a, b)
   return a + floor((b - a + 1) * double() ^ pareto_power)
end

local kinds = {
   uniform = rand.uniform, gaussian = rand.gaussian, special = rand.special,
   pareto = rand.pareto, zipfian = rand.zipfian,
}
local default = kinds[opt.rand_type or "special"] or rand.special
function rand.default(a, b)
   return default(a, b)
end

-- sysbench 1.0's legacy globals ------------------------------------------------

thread_id = sysbench.tid
test = cmdline.script_path
function sb_rnd()
   return sysbench.rand.uniform_uint64() % 4294967296
end
sb_rand = sysbench.rand.default
sb_rand_str = sysbench.rand.string
sb_rand_uniform = sysbench.rand.uniform
sb_rand_gaussian = sysbench.rand.gaussian
sb_rand_special = sysbench.rand.special
function sb_rand_uniq(a, b)
   a = a or 0
   b = b or 4294967295
   local r
   repeat
      r = sysbench.rand.unique()
   until r >= a and r <= b
   return r
end

-- A script's messages ("Creating table 'sbtest1'...") go to plumb's standard error:
-- its standard output carries the report (and --json).
print = P.print

-- What plumb calls ------------------------------------------------------------

local MAX_RESTARTS = 1000

-- One event as sysbench's thread loop runs it: event() again after an error the
-- driver ignores (the script's before_restart_event hook first); returns whether
-- event() asked to stop and how many times it restarted.
local function run_event(tid)
   local restarts = 0
   while true do
      local ok, ret = pcall(event, tid)
      if ok then
         return ret and true or false, restarts
      end
      if type(ret) == "table" and ret.errcode == sysbench.error.RESTART_EVENT then
         restarts = restarts + 1
         if type(sysbench.hooks.before_restart_event) == "function" then
            sysbench.hooks.before_restart_event(ret)
         end
         if restarts >= MAX_RESTARTS then
            error(string.format("event() restarted %d times in a row; the last error: %s",
                                restarts, tostring(ret.sql_errmsg)), 0)
         end
      elseif type(ret) == "table" then
         error(string.format("SQL error, errno = %s, state = '%s': %s",
                             tostring(ret.sql_errno), tostring(ret.sql_state),
                             tostring(ret.sql_errmsg)), 0)
      else
         error(ret, 0)
      end
   end
end

-- sysbench's prepare: the script's prepare command, or its prepare() function.
local function run_prepare()
   if cmdline.command_defined("prepare") then
      return cmdline.call_command("prepare")
   end
   if type(prepare) == "function" then
      return prepare() ~= false
   end
   error("the script has no prepare command (sysbench.cmdline.commands.prepare) " ..
            "and no prepare() function", 0)
end

return { run_event = run_event, run_prepare = run_prepare }
