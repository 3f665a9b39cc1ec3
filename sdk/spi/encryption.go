package spi

import (
	"context"

	"github.com/google/uuid"
)

// EncryptionMetrics is implemented by a MetricsCollector that also counts
// the payload encryption's failures (the spec's
// encryptionIntegrityViolation and encryptionEnvelopeVersionSkew): an
// encrypting codec reports a value of job id that failed its integrity
// check on a surface (tampered with, copied from elsewhere, under a wrong
// key), and an envelope of a version it does not read. NoOpMetrics
// implements it.
type EncryptionMetrics interface {
	EncryptionIntegrityViolation(ctx context.Context, id uuid.UUID, surface string)
	EncryptionEnvelopeVersionSkew(ctx context.Context, id uuid.UUID, found, supported int)
}

// EncryptionIntegrityViolation does nothing.
func (NoOpMetrics) EncryptionIntegrityViolation(context.Context, uuid.UUID, string) {}

// EncryptionEnvelopeVersionSkew does nothing.
func (NoOpMetrics) EncryptionEnvelopeVersionSkew(context.Context, uuid.UUID, int, int) {}
