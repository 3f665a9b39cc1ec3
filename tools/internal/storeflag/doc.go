// Package storeflag opens the store that a --store flag names, so that every
// subcommand of the ratchet command accepts the same spellings. Each kind
// of store is a scheme of one registry (schemes.go): how to tell its spec,
// open it check-only or creating, open it for a benchmark and migrate it;
// the commands go through Open, OpenForBench and Migrate, so that a
// database added there touches no command's code.
package storeflag
