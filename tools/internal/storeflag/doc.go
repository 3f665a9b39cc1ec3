// Package storeflag opens the store that a --store flag names, so that every
// subcommand of the ratchet command accepts the same spellings.
package storeflag
