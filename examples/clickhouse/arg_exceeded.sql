-- The calls of {function} whose argument {arg} was above {bound}.  Typed
-- arguments (from DWARF) are in the args column, one JSON object per call
-- ({"buf":"0x7ffc...","len":64}); visitParamExtractInt reads a top-level
-- number by its name (the first key of that name: a struct member of the
-- same name further in would not be read).  Without DWARF, the raw
-- registers are in regs: regs[2] is the second argument (arrays count
-- from 1).  Fill in {table}, {function}, {arg} and {bound}.
SELECT
    ts_ns,
    host,
    pid,
    tid,
    visitParamExtractInt(args, '{arg}') AS value,
    latency_ns,
    args
FROM {table}
WHERE function = '{function}'
  AND visitParamExtractInt(args, '{arg}') > {bound}
ORDER BY ts_ns
LIMIT 10000;
