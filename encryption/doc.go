// Package encryption seals job payloads with an AEAD (AES-256-GCM or
// XChaCha20-Poly1305) in a versioned envelope that records the algorithm
// and the key id, so that keys rotate without a migration: new values are
// sealed under the current key, older ones open under theirs.
//
// Each value is bound by its additional authenticated data to its surface
// and to its job (or, for a value that is not one job's, such as a
// recurring schedule's payload or a signal delivered by key, to that
// scope): a value copied to another row or column fails to open with
// ErrIntegrity, and so does one whose header or body was altered.
//
// Dependencies: golang.org/x/crypto, for XChaCha20-Poly1305 (the standard
// library has AES-GCM only); it is a module of its own so that users who
// do not encrypt do not pull it in.
package encryption
