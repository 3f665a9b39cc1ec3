// Command river is the comparison harness for `ratchet bench`: the same
// burn-down (insert N no-op jobs with COPY, then work them all) run through
// River's published Go API on the same PostgreSQL database, so that both
// figures come from one machine in one sitting. Nothing imports this module;
// it exists so that River's dependencies stay out of every other module.
//
//	go run ./compare/river --dsn postgres://postgres@127.0.0.1:5432/test --jobs 200000
//
// River runs with 2,000 workers, a 2 ms fetch cooldown and a 20 ms fetch
// poll interval, as River's own benchmark sets them; --river-defaults uses
// River's default fetch settings instead. Each run migrates a fresh schema
// and drops it at the end.
//
// Dependencies: github.com/riverqueue/river and its riverpgxv5 driver (the
// system under comparison) and pgx v5.
package main
