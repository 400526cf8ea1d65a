-- The p99 latency of one function, per host, over the last hour, from the
-- records cmon inserts (cmon trace -o clickhouse://HOST:8123/cmon.calls, or
-- the agent's `log: {clickhouse: ...}`).  Fill in {table} (the URL's
-- DB.TABLE) and {function}.  The table is ordered by (function, ts): this
-- reads one function's last hour, not the table.
--
-- quantile() keeps a sample of 8192 values per group: exact up to that
-- many calls per host, an estimate past it; quantileExact() is exact and
-- holds every value.  latency_ns is the function's own time (the probes'
-- cost taken out); records of a duty-cycled probe (sampled < 1) are a
-- sample of the calls, the percentile is theirs.
SELECT
    host,
    count() AS calls,
    quantile(0.99)(latency_ns) AS p99_ns
FROM {table}
WHERE function = '{function}'
  AND status = 'ok'
  AND ts >= now() - INTERVAL 1 HOUR
GROUP BY host
ORDER BY p99_ns DESC;
