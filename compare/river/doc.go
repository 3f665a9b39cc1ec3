// Command river is the comparison harness for `ratchet bench`: the same
// burn-down (insert N no-op jobs, then work them all) run through River's
// published Go API on the same database as Ratchet's, so that both figures
// come from one machine in one sitting. Nothing imports this module; it
// exists so that River's dependencies stay out of every other module.
//
//	go run ./compare/river --dsn postgres://postgres@127.0.0.1:5432/test --jobs 200000
//	go run ./compare/river --sqlite /tmp/river-bench.db --jobs 50000
//
// River runs with 2,000 workers, a 2 ms fetch cooldown and a 20 ms fetch
// poll interval, as River's own benchmark sets them; --river-defaults uses
// River's default fetch settings instead. On PostgreSQL (riverpgxv5) each
// run migrates a fresh schema and drops it at the end. With --sqlite PATH
// (riversqlite) the run creates and migrates the database file PATH, which
// must not exist, and removes it with its -wal and -shm files at the end;
// the pool is configured as River's own SQLite tests configure theirs:
// journal_mode WAL and one open connection (River runs its operations
// concurrently, and a second connection meets SQLITE_BUSY). Synchronous
// stays at SQLite's default, FULL, as on Ratchet's SQLite store.
//
// --kinds N and --priorities P make a mixed backlog, as ratchet bench
// --compare river --mix asks (--kinds 10 --priorities 5): job i of every
// InsertManyFast call gets kind i mod N ("noop" when N is 1, else "noop0"
// to "noop9", ten argument types with no fields, each with the same no-op
// worker) and, when P > 1, priority (i mod P) mod 4 + 1, River's
// priorities being 1 to 4. --checkpoint runs a CHECKPOINT between the
// insert and the work on PostgreSQL, as ratchet bench does on its side
// after timing the server's own COPY, so that neither side's work starts
// with the other's share of unwritten pages.
//
// Dependencies: github.com/riverqueue/river with its riverpgxv5 and
// riversqlite drivers (the system under comparison), pgx v5, and
// modernc.org/sqlite, the pure-Go database/sql driver that River tests
// riversqlite with and that Ratchet's SQLite store uses (the same version),
// so that both sides of a SQLite comparison run the same SQLite build.
package main
