// Command simtest runs Ratchet's deterministic simulator: one seed with a
// summary of what it did, or a sweep over a range of seeds reporting every
// seed that breaks an invariant. It exits with status 1 on any violation
// and 2 on bad usage.
//
//	go run ./simtest/cmd/simtest -seed 42 -steps 100000
//	go run ./simtest/cmd/simtest -seeds 1..500 -steps 2000
//	go run ./simtest/cmd/simtest -seed 7 -trace   # the full event trace too
//	go run ./simtest/cmd/simtest -seeds 1..100 -mutant fence   # a broken store, caught
//	go run -tags ratchet_bugs ./simtest/cmd/simtest -seeds 1..20 -engine-bug skip-fresh-beat   # a bug planted in the engine's own code, caught
//	go run ./simtest/cmd/simtest -seeds 1..40 -mutant early-release   # a workflow job released too soon, caught
package main
