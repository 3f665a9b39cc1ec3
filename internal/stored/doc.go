// Package stored holds the formats of stored values that several of
// Ratchet's modules write or read, and that are not users' API: the
// idempotency key of a recurring schedule's slot (the sdk triggers slots,
// the engine fires them), a text value sealed by the payload codecs (the
// sdk and the engine write job log lines, the encryption module rewrites
// them) and a text bounded in bytes (stored errors and log lines).
//
// It depends on the standard library alone, so that the sdk can import it.
package stored
